import { randomBytes } from 'node:crypto';
import { AppConfig, ConfigError } from './app-config.js';

const valid = {
  DATABASE_URL: 'postgresql://u:p@127.0.0.1:5432/db',
  REDIS_URL: 'redis://127.0.0.1:6379',
  UPSTREAM_BASE_URL: 'http://127.0.0.1:4010/v25.0/',
  WHATSAPP_APP_SECRET: 'app-secret-123',
  WHATSAPP_VERIFY_TOKEN: 'verify-token-123',
  ENCRYPTION_KEY: 'a'.repeat(64),
};

/** What production accepts for the shared secrets (32+ random characters) and the required metrics token. */
const strong = () => ({
  WHATSAPP_APP_SECRET: randomBytes(24).toString('base64url'),
  WHATSAPP_VERIFY_TOKEN: randomBytes(24).toString('base64url'),
  METRICS_TOKEN: randomBytes(24).toString('base64url'),
});

describe('AppConfig', () => {
  it('applies defaults and normalises values', () => {
    const config = AppConfig.fromEnv(valid);
    expect(config.port).toBe(3000);
    expect(config.upstreamBaseUrl).toBe('http://127.0.0.1:4010/v25.0');
    expect(config.encryptionKeys).toEqual([{ id: 'k0', key: Buffer.from('a'.repeat(64), 'hex') }]);
    expect(config.swaggerEnabled).toBe(true);
    // Security defaults (issue 12): scrypt N = 2^17, no proxy trusted, open signup outside production.
    expect(config.passwordHashCost).toBe(17);
    expect(config.trustProxy).toBe(false);
    expect(config.signupMode).toBe('open');
    expect(config.loginEmailMaxFailures).toBe(20);
    expect(
      AppConfig.fromEnv({
        ...valid,
        ...strong(),
        NODE_ENV: 'production',
        ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      }).signupMode,
    ).toBe('invite');
  });

  it('refuses TRUST_PROXY=true and a per-email login budget not above the per-pair one', () => {
    expect(() => AppConfig.fromEnv({ ...valid, TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY must not be true/);
    expect(() => AppConfig.fromEnv({ ...valid, LOGIN_MAX_FAILURES: '5', LOGIN_EMAIL_MAX_FAILURES: '5' })).toThrow(
      /LOGIN_EMAIL_MAX_FAILURES must be >= 6/,
    );
  });

  it('takes rate limits with decimals (a token every few seconds) and refuses what is not a positive number', () => {
    const config = AppConfig.fromEnv({ ...valid, RATE_LIMIT_PER_SECOND: '0.2', CONSOLE_RATE_LIMIT_PER_SECOND: '2.5' });
    expect([config.rateLimitPerSecond, config.consoleRateLimitPerSecond]).toEqual([0.2, 2.5]);
    expect(() => AppConfig.fromEnv({ ...valid, RATE_LIMIT_PER_SECOND: '-1' })).toThrow(
      /RATE_LIMIT_PER_SECOND must be a positive number/,
    );
    expect(() => AppConfig.fromEnv({ ...valid, ACCOUNT_RATE_LIMIT_PER_SECOND: '0' })).toThrow(
      /ACCOUNT_RATE_LIMIT_PER_SECOND must be >= 0.001/,
    );
    expect(() => AppConfig.fromEnv({ ...valid, CONSOLE_ADDRESS_RATE_LIMIT_PER_SECOND: 'fast' })).toThrow(
      /CONSOLE_ADDRESS_RATE_LIMIT_PER_SECOND must be a positive number/,
    );
  });

  it('refuses ADMIN_EMAILS (platform administrators are a stored flag now, never an email anyone can register)', () => {
    expect(() => AppConfig.fromEnv({ ...valid, ADMIN_EMAILS: 'ops@example.com' })).toThrow(
      /ADMIN_EMAILS is no longer read .* npm run platform-admin -- grant <email>/,
    );
    expect(() => AppConfig.fromEnv({ ...valid, ADMIN_EMAILS: '' })).not.toThrow();
  });

  it('takes a read replica with a lag bound, and refuses one that names the primary or a bound without a replica', () => {
    expect(AppConfig.fromEnv(valid)).toMatchObject({ databaseReadUrl: '', databaseReadMaxLagMs: 5000 });
    const replica = 'postgresql://u:p@10.0.0.2:5432/db';
    expect(AppConfig.fromEnv({ ...valid, DATABASE_READ_URL: replica, DATABASE_READ_MAX_LAG_MS: '2000' })).toMatchObject(
      { databaseReadUrl: replica, databaseReadMaxLagMs: 2000 },
    );
    expect(() => AppConfig.fromEnv({ ...valid, DATABASE_READ_URL: 'postgresql://x:y@127.0.0.1/db' })).toThrow(
      /DATABASE_READ_URL names the same server and database as DATABASE_URL/,
    );
    expect(() => AppConfig.fromEnv({ ...valid, DATABASE_DIRECT_URL: replica, DATABASE_READ_URL: replica })).toThrow(
      /same server and database as DATABASE_DIRECT_URL/,
    );
    expect(() => AppConfig.fromEnv({ ...valid, DATABASE_READ_MAX_LAG_MS: '2000' })).toThrow(
      /DATABASE_READ_MAX_LAG_MS is set without DATABASE_READ_URL/,
    );
    expect(() => AppConfig.fromEnv({ ...valid, DATABASE_READ_URL: replica, DATABASE_READ_MAX_LAG_MS: '10' })).toThrow(
      /DATABASE_READ_MAX_LAG_MS/,
    );
    expect(() => AppConfig.fromEnv({ ...valid, DATABASE_READ_URL: 'mysql://h/db' })).toThrow(/DATABASE_READ_URL/);
  });

  it('reads a key ring (newest first)', () => {
    const k2 = Buffer.alloc(32, 2).toString('base64');
    const env = { ...valid, ENCRYPTION_KEY: undefined, ENCRYPTION_KEYS: `k2:${k2}, k1:${'b'.repeat(64)}` };
    const config = AppConfig.fromEnv(env);
    expect(config.encryptionKeys.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(config.encryptionKeys[0]!.key).toEqual(Buffer.alloc(32, 2));
    expect(() => AppConfig.fromEnv({ ...env, ENCRYPTION_KEYS: `k1:${'b'.repeat(64)},k1:${'c'.repeat(64)}` })).toThrow(
      /ENCRYPTION_KEYS has the same key id twice/,
    );
    expect(() => AppConfig.fromEnv({ ...env, ENCRYPTION_KEYS: 'nokey' })).toThrow(
      /ENCRYPTION_KEYS must be a comma-separated list/,
    );
    expect(() => AppConfig.fromEnv({ ...env, ENCRYPTION_KEY: 'a'.repeat(64) })).toThrow(
      /ENCRYPTION_KEYS and ENCRYPTION_KEY are both set/,
    );
  });

  it('turns Swagger off by default in production', () => {
    const production = {
      ...valid,
      ...strong(),
      NODE_ENV: 'production',
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    };
    expect(AppConfig.fromEnv(production).swaggerEnabled).toBe(false);
    expect(AppConfig.fromEnv({ ...production, SWAGGER_ENABLED: 'true' }).swaggerEnabled).toBe(true);
  });

  it('refuses the example secrets of .env.example in production only, naming each variable', () => {
    const example = {
      ...valid,
      WHATSAPP_APP_SECRET: 'dev-app-secret-change-me',
      WHATSAPP_VERIFY_TOKEN: 'dev-verify-token-change-me',
      ENCRYPTION_KEY: '0'.repeat(64),
    };
    expect(() => AppConfig.fromEnv(example)).not.toThrow();
    let error: unknown;
    try {
      AppConfig.fromEnv({ ...example, NODE_ENV: 'production' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => p.split(' ')[0])).toEqual([
      'WHATSAPP_APP_SECRET',
      'WHATSAPP_VERIFY_TOKEN',
      'ENCRYPTION_KEY',
      'METRICS_TOKEN',
    ]);
    expect(() =>
      AppConfig.fromEnv({
        ...valid,
        ...strong(),
        ENCRYPTION_KEY: undefined,
        ENCRYPTION_KEYS: `new:${randomBytes(32).toString('hex')},old:${'0'.repeat(64)}`,
        NODE_ENV: 'production',
      }),
    ).toThrow(/ENCRYPTION_KEYS \(key "old"\) is the example value/);
  });

  it('in production refuses an encryption key that is not random: a repeated pattern, a passphrase, steady steps (issue 37, finding 10)', () => {
    const production = { ...valid, ...strong(), NODE_ENV: 'production' };
    const start = (key: string) => () => AppConfig.fromEnv({ ...production, ENCRYPTION_KEY: key });
    expect(start(randomBytes(32).toString('hex'))).not.toThrow();
    for (const weak of [
      '0123456789abcdef'.repeat(4),
      Buffer.from('my very own encryption key 2026!').toString('hex'),
      Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('hex'),
      Buffer.from(Array.from({ length: 32 }, (_, i) => (i % 2 ? 0x9c : 0x17))).toString('hex'),
    ]) {
      expect(start(weak)).toThrow(/ENCRYPTION_KEY is too weak for production \(a pattern, a passphrase/);
    }
    expect(() =>
      AppConfig.fromEnv({
        ...production,
        ENCRYPTION_KEY: undefined,
        ENCRYPTION_KEYS: `new:${randomBytes(32).toString('hex')},old:${'ab01'.repeat(16)}`,
      }),
    ).toThrow(/ENCRYPTION_KEYS \(key "old"\) is too weak/);
    // Outside production any key of the right length still starts (the local defaults).
    expect(() => AppConfig.fromEnv({ ...valid, ENCRYPTION_KEY: '0123456789abcdef'.repeat(4) })).not.toThrow();
  });

  it('in production wants METRICS_TOKEN and shared secrets of 32+ random characters, refusing weak ones (issue 29, finding 7)', () => {
    const production = {
      ...valid,
      ...strong(),
      NODE_ENV: 'production',
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    };
    expect(() => AppConfig.fromEnv(production)).not.toThrow();
    const problemsOf = (env: Record<string, string | undefined>) => {
      try {
        AppConfig.fromEnv(env);
        return [];
      } catch (e) {
        return (e as ConfigError).problems;
      }
    };
    expect(problemsOf({ ...production, METRICS_TOKEN: '' })).toEqual([
      expect.stringMatching(/^METRICS_TOKEN is required in production/),
    ]);
    for (const weak of [
      'password',
      'app-secret-123',
      'a'.repeat(40),
      `password${randomBytes(24).toString('hex')}`,
      'abcdefgh12345678abcdefgh1234567',
    ]) {
      expect(problemsOf({ ...production, WHATSAPP_APP_SECRET: weak })).toEqual([
        expect.stringMatching(/^WHATSAPP_APP_SECRET is too weak for production: use at least 32 random characters/),
      ]);
    }
    expect(
      problemsOf({ ...production, WHATSAPP_VERIFY_TOKEN: 'verify', METRICS_TOKEN: 'metrics' }).map(
        (p) => p.split(' ')[0],
      ),
    ).toEqual(['WHATSAPP_VERIFY_TOKEN', 'METRICS_TOKEN']);
    // Outside production the local defaults stay usable.
    expect(() => AppConfig.fromEnv({ ...valid, WHATSAPP_APP_SECRET: 'password' })).not.toThrow();
  });

  it('listens on loopback unless asked (HOST), everywhere in production; the worker’s metrics on loopback (WORKER_METRICS_HOST)', () => {
    expect(AppConfig.fromEnv(valid)).toMatchObject({ host: '127.0.0.1', workerMetricsHost: '127.0.0.1' });
    expect(AppConfig.fromEnv({ ...valid, HOST: '0.0.0.0', WORKER_METRICS_HOST: '::' })).toMatchObject({
      host: '0.0.0.0',
      workerMetricsHost: '::',
    });
    expect(
      AppConfig.fromEnv({
        ...valid,
        ...strong(),
        NODE_ENV: 'production',
        ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      }).host,
    ).toBe('0.0.0.0');
    expect(() => AppConfig.fromEnv({ ...valid, HOST: 'evil host' })).toThrow(/HOST must match/);
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
