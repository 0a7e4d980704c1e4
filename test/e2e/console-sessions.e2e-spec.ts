import { randomBytes, randomUUID, scryptSync } from 'node:crypto';
import { PASSWORD, uniqueEmail } from '../utils/factories.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { productionSecrets } from '../utils/test-env.js';
import { rowWhere } from '../utils/db-rows.js';

const setCookies = (res: { headers: Record<string, unknown> }) =>
  ([] as string[]).concat((res.headers['set-cookie'] as string[] | undefined) ?? []);
const attributesOf = (cookie: string) =>
  cookie
    .split(';')
    .slice(1)
    .map((a) => a.trim().toLowerCase());

async function signupAndLogin(
  t: TestApp,
): Promise<{ email: string; login: Awaited<ReturnType<TestApp['http']['post']>> }> {
  const email = uniqueEmail();
  expect(
    (await t.http.post('/auth/signup').send({ email, password: PASSWORD, organizationName: 'Cookie Org' })).status,
  ).toBe(201);
  const login = await t.http.post('/auth/login').send({ email, password: PASSWORD });
  expect(login.status).toBe(200);
  return { email, login };
}

/** Issue 12, finding 6 (cookies): `__Host-` name, Secure in production whatever the request looks like, Max-Age ≤ idle. */
describe('Console session cookie', () => {
  describe('in production (NODE_ENV=production, plain http behind no proxy)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({
        ...productionSecrets(),
        NODE_ENV: 'production',
        SIGNUP_MODE: 'open',
        SWAGGER_ENABLED: 'true',
        SESSION_IDLE_TTL_SECONDS: '1800',
      });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('is __Host-bm_session: HttpOnly, Secure, SameSite=Lax, Path=/, no Domain, Max-Age = the idle lifetime', async () => {
      const { login } = await signupAndLogin(t);
      const [cookie, ...others] = setCookies(login);
      expect(others).toEqual([]);
      expect(cookie).toMatch(/^__Host-bm_session=[A-Za-z0-9_-]{43};/);
      const attributes = attributesOf(cookie!);
      expect(attributes).toEqual(
        expect.arrayContaining(['httponly', 'secure', 'samesite=lax', 'path=/', 'max-age=1800']),
      );
      expect(attributes.some((a) => a.startsWith('domain='))).toBe(false);

      const pair = cookie!.split(';')[0]!;
      expect((await t.http.get('/auth/me').set('cookie', pair)).status).toBe(200);
      // Only the prefixed name is read: a cookie planted without the prefix (by a subdomain, over http) is not a session.
      const unprefixed = await t.http.get('/auth/me').set('cookie', pair.replace('__Host-bm_session', 'bm_session'));
      expect(unprefixed.status).toBe(401);

      const logout = await t.http.post('/auth/logout').set('cookie', pair);
      const cleared = setCookies(logout).find((c) => c.startsWith('__Host-bm_session='));
      expect(cleared).toMatch(/expires=Thu, 01 Jan 1970/i);
      expect(attributesOf(cleared!)).toEqual(expect.arrayContaining(['secure', 'path=/']));
    });

    it('is renewed as its use moves the idle deadline, never past the absolute expiry; logout still clears it', async () => {
      const { email, login } = await signupAndLogin(t);
      const pair = setCookies(login)[0]!.split(';')[0]!;
      const session = () =>
        t.db
          .on()
          .selectFrom('sessions')
          .innerJoin('operators', 'operators.id', 'sessions.operator_id')
          .select('sessions.id')
          .where('operators.email', '=', email)
          .executeTakeFirstOrThrow();
      const setSession = async (to: { last_seen_at: Date; expires_at?: Date }) => {
        const { id } = await session();
        await t.db.on().updateTable('sessions').set(to).where('id', '=', id).execute();
      };
      // Used within the minute after login: nothing to renew.
      expect(setCookies(await t.http.get('/auth/me').set('cookie', pair))).toEqual([]);

      await setSession({ last_seen_at: new Date(Date.now() - 120_000) });
      const renewed = setCookies(await t.http.get('/auth/me').set('cookie', pair));
      expect(renewed).toHaveLength(1);
      expect(renewed[0]!.split(';')[0]).toBe(pair);
      expect(attributesOf(renewed[0]!)).toEqual(
        expect.arrayContaining(['httponly', 'secure', 'samesite=lax', 'path=/', 'max-age=1800']),
      );

      // Ten minutes of absolute lifetime left: the renewed cookie lives no longer than that.
      await setSession({ last_seen_at: new Date(Date.now() - 120_000), expires_at: new Date(Date.now() + 600_000) });
      const capped = setCookies(await t.http.get('/auth/me').set('cookie', pair));
      const maxAge = Number(
        attributesOf(capped[0]!)
          .find((a) => a.startsWith('max-age='))!
          .slice('max-age='.length),
      );
      expect(maxAge).toBeGreaterThan(590);
      expect(maxAge).toBeLessThanOrEqual(600);

      // A logout that also renews: the only cookie sent back is the cleared one.
      await setSession({ last_seen_at: new Date(Date.now() - 120_000) });
      const logout = setCookies(await t.http.post('/auth/logout').set('cookie', pair));
      expect(logout).toHaveLength(1);
      expect(logout[0]).toMatch(/^__Host-bm_session=;.*expires=Thu, 01 Jan 1970/i);
    });

    it('the Swagger session scheme names the prefixed cookie', async () => {
      const doc = await t.http.get('/swagger/docs-json');
      expect(doc.status).toBe(200);
      expect(doc.body.components.securitySchemes.session).toEqual(
        expect.objectContaining({ in: 'cookie', name: '__Host-bm_session' }),
      );
    });
  });

  describe('outside production (the e2e and browser tests over plain http)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ SESSION_IDLE_TTL_SECONDS: '900', SESSION_ABSOLUTE_TTL_SECONDS: '86400' });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('is bm_session, not Secure over http, and lives no longer than the idle lifetime (not the absolute one)', async () => {
      const { login } = await signupAndLogin(t);
      const [cookie] = setCookies(login);
      expect(cookie).toMatch(/^bm_session=/);
      const attributes = attributesOf(cookie!);
      expect(attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=lax', 'path=/', 'max-age=900']));
      expect(attributes).not.toContain('secure');
    });
  });
});

/** Issue 12, finding 6 (passwords): scrypt N = 2^17 by default, older hashes upgraded at login. */
describe('Password hashes', () => {
  let t: TestApp;
  beforeAll(async () => {
    // PASSWORD_HASH_COST unset (the test environment's lower cost removed): the production default.
    t = await startTestApp({ PASSWORD_HASH_COST: '' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const storedHash = async (email: string) => (await rowWhere(t.db, 'operators', { email })).passwordHash;

  it('are scrypt with N = 2^17, r = 8, p = 1 by default', async () => {
    expect(t.config.passwordHashCost).toBe(17);
    const { email } = await signupAndLogin(t);
    expect(await storedHash(email)).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
  });

  it('an operator with a hash of the old parameters (N = 2^14) logs in, and the hash is replaced by an N = 2^17 one', async () => {
    const email = uniqueEmail();
    const salt = randomBytes(16);
    const oldKey = scryptSync(PASSWORD, salt, 64, { N: 16384, r: 8, p: 1 });
    const oldHash = ['scrypt', 16384, 8, 1, salt.toString('base64url'), oldKey.toString('base64url')].join('$');
    const organization = await t.db
      .on()
      .insertInto('organizations')
      .values({ id: randomUUID(), name: 'Old Hash Org' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.db
      .on()
      .insertInto('operators')
      .values({ id: randomUUID(), organization_id: organization.id, email, password_hash: oldHash, role: 'owner' })
      .execute();

    expect((await t.http.post('/auth/login').send({ email, password: 'not the password' })).status).toBe(401);
    expect(await storedHash(email)).toBe(oldHash);

    expect((await t.http.post('/auth/login').send({ email, password: PASSWORD })).status).toBe(200);
    const upgraded = await storedHash(email);
    expect(upgraded).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(upgraded).not.toContain(salt.toString('base64url'));

    // The new hash is of the same password.
    expect((await t.http.post('/auth/login').send({ email, password: PASSWORD })).status).toBe(200);
    expect(await storedHash(email)).toBe(upgraded);
  });
});
