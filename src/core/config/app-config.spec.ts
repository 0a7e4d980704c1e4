import { AppConfig, ConfigError } from './app-config.js';

const valid = {
  DATABASE_URL: 'postgresql://u:p@127.0.0.1:5432/db',
  REDIS_URL: 'redis://127.0.0.1:6379',
  UPSTREAM_BASE_URL: 'http://127.0.0.1:4010/v23.0/',
  WHATSAPP_APP_SECRET: 'app-secret-123',
  WHATSAPP_VERIFY_TOKEN: 'verify-token-123',
  ENCRYPTION_KEY: 'a'.repeat(64),
};

describe('AppConfig', () => {
  it('applies defaults and normalises values', () => {
    const config = AppConfig.fromEnv(valid);
    expect(config.port).toBe(3000);
    expect(config.upstreamBaseUrl).toBe('http://127.0.0.1:4010/v23.0');
    expect(config.encryptionKey).toHaveLength(32);
    expect(config.swaggerEnabled).toBe(true);
    // Security defaults (issue 12): scrypt N = 2^17, no proxy trusted, open signup outside production.
    expect(config.passwordHashCost).toBe(17);
    expect(config.trustProxy).toBe(false);
    expect(config.signupMode).toBe('open');
    expect(config.loginEmailMaxFailures).toBe(20);
    expect(AppConfig.fromEnv({ ...valid, NODE_ENV: 'production' }).signupMode).toBe('invite');
  });

  it('refuses TRUST_PROXY=true and a per-email login budget not above the per-pair one', () => {
    expect(() => AppConfig.fromEnv({ ...valid, TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY must not be true/);
    expect(() => AppConfig.fromEnv({ ...valid, LOGIN_MAX_FAILURES: '5', LOGIN_EMAIL_MAX_FAILURES: '5' })).toThrow(/LOGIN_EMAIL_MAX_FAILURES must be >= 6/);
  });

  it('names every missing or malformed variable at once', () => {
    const env = { ...valid, PORT: 'abc', ENCRYPTION_KEY: 'short' } as Record<string, string | undefined>;
    delete env.DATABASE_URL;
    let error: unknown;
    try {
      AppConfig.fromEnv(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toContain('DATABASE_URL is required');
    expect(message).toContain('PORT must be an integer');
    expect(message).toContain('ENCRYPTION_KEY must be 32 bytes');
  });
});
