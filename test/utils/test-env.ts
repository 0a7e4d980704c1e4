import { randomBytes } from 'node:crypto';

/**
 * Environment for a test process. PostgreSQL and Redis are real: ./scripts/test.sh starts them (or takes
 * DATABASE_URL / REDIS_URL from the environment) and exports their URLs before jest runs.
 */
export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const { DATABASE_URL, REDIS_URL } = process.env;
  if (!DATABASE_URL || !REDIS_URL) {
    throw new Error('DATABASE_URL and REDIS_URL are not set: run the suite through ./scripts/test.sh');
  }
  return {
    NODE_ENV: 'test',
    // A developer's .env must not leak into processes the tests start (dist/src/main.js reads it otherwise).
    ENV_FILE: 'none',
    DATABASE_URL,
    REDIS_URL,
    // A queue namespace per test file: workers of one file never take another file's jobs.
    QUEUE_PREFIX: `t${randomBytes(4).toString('hex')}`,
    UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v25.0',
    // How long the service waits for the simulator: generous, since on a slow, busy host the simulator (another
    // event loop on the same cores) may take seconds to answer an onboarding call. Tests about the timeout itself
    // set their own; TEST_UPSTREAM_TIMEOUT_MS raises or lowers the rest.
    UPSTREAM_TIMEOUT_MS: process.env.TEST_UPSTREAM_TIMEOUT_MS ?? '10000',
    WHATSAPP_APP_SECRET: 'test-app-secret',
    WHATSAPP_VERIFY_TOKEN: 'test-verify-token',
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SWAGGER_ENABLED: 'true',
    // scrypt at N = 2^10 instead of the default 2^17: hundreds of signups and logins per run stay fast. One
    // test (console-passwords) runs with the default to prove it, and the upgrade of older hashes.
    PASSWORD_HASH_COST: '10',
    // Every test file signs up many organizations from 127.0.0.1; the signup limit has its own test.
    SIGNUP_MAX_PER_ADDRESS: '100000',
    // Likewise the per-address bucket ahead of body parsing (its own test sets it low).
    UNAUTHENTICATED_RATE_LIMIT_PER_SECOND: '100000',
    UNAUTHENTICATED_RATE_LIMIT_BURST: '100000',
    // Likewise the in-flight caps per address and per organization (security-body-before-sender and
    // security-tenant-load set them low).
    BODY_PARSES_PER_ADDRESS: '10000',
    ORGANIZATION_READS_IN_FLIGHT: '10000',
    ORGANIZATION_REQUESTS_IN_FLIGHT: '10000',
    ...overrides,
  };
}

/** Shared secrets production accepts (32+ random characters, a metrics token), for tests that run with NODE_ENV=production. */
export function productionSecrets(): Record<string, string> {
  return {
    WHATSAPP_APP_SECRET: randomBytes(24).toString('base64url'),
    WHATSAPP_VERIFY_TOKEN: randomBytes(24).toString('base64url'),
    METRICS_TOKEN: randomBytes(24).toString('base64url'),
  };
}
