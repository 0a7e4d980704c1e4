import { randomUUID } from 'node:crypto';
import { PASSWORD, connectAccount, createKey, onboard, signupAndLogin, uniqueEmail } from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';
import { countRows, rowsWhere } from '../utils/db-rows.js';

/** Every console route (the session-cookie ones), with placeholders for path parameters. */
const CONSOLE_ROUTES: Array<[method: 'get' | 'post' | 'delete', path: string]> = [
  ['get', '/auth/me'],
  ['post', '/auth/logout'],
  ['post', '/business-accounts'],
  ['get', '/business-accounts'],
  ['get', '/business-accounts/:wabaId'],
  ['delete', '/business-accounts/:wabaId'],
  ['post', '/business-accounts/:wabaId/phone-numbers/sync'],
  ['get', '/business-accounts/:wabaId/phone-numbers'],
  ['post', '/business-accounts/:wabaId/templates/sync'],
  ['get', '/business-accounts/:wabaId/templates'],
  ['post', '/api-keys'],
  ['get', '/api-keys'],
  ['delete', '/api-keys/:id'],
  ['get', '/audit-log'],
];

const EVIL_ORIGIN = 'https://evil.example';
const INVALID_CREDENTIALS = { statusCode: 401, message: 'Invalid email or password' };

function fill(path: string, params: { wabaId: string; id: string }): string {
  return path.replace(':wabaId', params.wabaId).replace(':id', params.id);
}

describe('Console auth rules', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const operatorsWithEmail = (email: string) => countRows(stack.db, 'operators', { email });

  describe('signup', () => {
    it('refuses an email already registered, whatever its case or surrounding spaces (409)', async () => {
      const email = uniqueEmail();
      const organizationName = `Dup Org ${email}`;
      const first = await stack.http.post('/auth/signup').send({ email, password: PASSWORD, organizationName });
      expect(first.status).toBe(201);

      const again = await stack.http
        .post('/auth/signup')
        .send({ email: `  ${email.toUpperCase()}\t`, password: `${PASSWORD} 2`, organizationName });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({
        statusCode: 409,
        message: 'An operator with this email already exists',
        errors: [{ field: 'email', message: 'email is already registered' }],
      });
      expect(await operatorsWithEmail(email)).toBe(1);
      expect(await countRows(stack.db, 'organizations', { name: organizationName })).toBe(1);

      // The first password still works, with the email typed differently.
      const login = await stack.http
        .post('/auth/login')
        .send({ email: ` ${email.toUpperCase()} `, password: PASSWORD });
      expect(login.status).toBe(200);
      const wrong = await stack.http.post('/auth/login').send({ email, password: `${PASSWORD} 2` });
      expect(wrong.status).toBe(401);
    });

    it('refuses a password shorter than 10 characters with 422 naming password', async () => {
      const email = uniqueEmail();
      const res = await stack.http
        .post('/auth/signup')
        .send({ email, password: '123456789', organizationName: 'Short Password Org' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        statusCode: 422,
        message: 'Field Validation Failed',
        errors: [{ field: 'password', message: 'password must be at least 10 characters' }],
      });
      expect(await operatorsWithEmail(email)).toBe(0);

      const tenChars = await stack.http
        .post('/auth/signup')
        .send({ email, password: '1234567890', organizationName: 'Short Password Org' });
      expect(tenChars.status).toBe(201);
    });
  });

  describe('login', () => {
    it('answers an unknown email and a wrong password with the same 401 body and no cookie', async () => {
      const { email } = await signupAndLogin(stack, 'Login Org');
      const unknown = await stack.http.post('/auth/login').send({ email: uniqueEmail(), password: PASSWORD });
      const wrong = await stack.http.post('/auth/login').send({ email, password: 'not the password at all' });
      expect(unknown.status).toBe(401);
      expect(wrong.status).toBe(401);
      expect(unknown.body).toEqual(INVALID_CREDENTIALS);
      expect(wrong.body).toEqual(unknown.body);
      expect(unknown.headers['set-cookie']).toBeUndefined();
      expect(wrong.headers['set-cookie']).toBeUndefined();
    });

    it('refuses repeated failures with 429 and Retry-After, even with the right password; other operators are unaffected', async () => {
      const victim = await signupAndLogin(stack, 'Throttled Org');
      const bystander = await signupAndLogin(stack, 'Bystander Org');
      const max = stack.config.loginMaxFailures;
      for (let i = 0; i < max; i++) {
        const res = await stack.http.post('/auth/login').send({ email: victim.email, password: `wrong password ${i}` });
        expect(res.status).toBe(401);
      }
      const throttled = await stack.http
        .post('/auth/login')
        .send({ email: victim.email, password: 'wrong password again' });
      expect(throttled.status).toBe(429);
      expect(throttled.body).toEqual({ statusCode: 429, message: 'Too many failed login attempts; try again later' });
      const retryAfter = Number(throttled.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(stack.config.loginWindowSeconds);

      const right = await stack.http.post('/auth/login').send({ email: victim.email, password: PASSWORD });
      expect(right.status).toBe(429);
      expect(right.headers['set-cookie']).toBeUndefined();
      // The existing session is not affected, nor is another operator's login.
      expect((await stack.http.get('/auth/me').set('cookie', victim.cookie)).status).toBe(200);
      expect((await stack.http.post('/auth/login').send({ email: bystander.email, password: PASSWORD })).status).toBe(
        200,
      );
    });
  });

  describe('console routes', () => {
    it('answer 401 on every console route without a session cookie, or with an unknown one', async () => {
      const params = { wabaId: '310000000000001', id: randomUUID() };
      for (const [method, path] of CONSOLE_ROUTES) {
        const url = fill(path, params);
        const none = await stack.http[method](url).send(method === 'get' ? undefined : {});
        expect([method, url, none.status, none.body]).toEqual([
          method,
          url,
          401,
          { statusCode: 401, message: 'Authentication required' },
        ]);
        const forged = await stack.http[method](url).set('cookie', `bm_session=${'A'.repeat(43)}`);
        expect([method, url, forged.status, forged.body]).toEqual([
          method,
          url,
          401,
          { statusCode: 401, message: 'Session expired or invalid' },
        ]);
      }
    });

    it('refuse an API key pair (401) and write nothing', async () => {
      const { operator, account, key } = await onboard(stack, 'Key On Console Org');
      const params = { wabaId: account.wabaId, id: key.id };
      for (const [method, path] of CONSOLE_ROUTES) {
        const url = fill(path, params);
        const body = path === '/api-keys' ? { wabaId: account.wabaId, name: 'via key' } : {};
        const res = await stack.http[method](url)
          .set(key.headers)
          .send(method === 'get' ? undefined : body);
        expect([method, url, res.status]).toEqual([method, url, 401]);
      }
      // Nothing changed: the key is still the only one and still live, the account still connected.
      const keys = await rowsWhere(stack.db, 'api_keys', { organization_id: operator.organizationId });
      expect(keys.map((k) => [k.id, k.revokedAt])).toEqual([[key.id, null]]);
      const account2 = await stack.http.get(`/business-accounts/${account.wabaId}`).set('cookie', operator.cookie);
      expect(account2.body.data.status).toBe('connected');
      // And the other way round: a session cookie is no API key.
      const messages = await stack.http.get('/messages').set('cookie', operator.cookie);
      expect(messages.status).toBe(401);
      expect((await stack.http.get('/messages').set(key.headers)).status).toBe(200);
    });
  });

  describe('cross-site requests', () => {
    const refused = { statusCode: 403, message: 'Cross-site request refused' };

    it('refuse signup and login from another site (403), creating neither operator nor session', async () => {
      const email = uniqueEmail();
      const signup = await stack.http
        .post('/auth/signup')
        .set('origin', EVIL_ORIGIN)
        .send({ email, password: PASSWORD, organizationName: 'Evil Org' });
      expect(signup.status).toBe(403);
      expect(signup.body).toEqual(refused);
      expect(await operatorsWithEmail(email)).toBe(0);

      const operator = await signupAndLogin(stack, 'Cross Login Org');
      const login = await stack.http
        .post('/auth/login')
        .set('sec-fetch-site', 'cross-site')
        .send({ email: operator.email, password: PASSWORD });
      expect(login.status).toBe(403);
      expect(login.headers['set-cookie']).toBeUndefined();
      expect(await countRows(stack.db, 'sessions', { operator_id: operator.operatorId })).toBe(1);
    });

    it('refuse every state-changing console route (403) and write nothing; the same origin is accepted', async () => {
      const { operator, account, key } = await onboard(stack, 'Cross Site Org');
      const fresh = stack.sim.createAccount();
      const cross = (req: ReturnType<Stack['http']['post']>, how: 'origin' | 'fetch-site') =>
        how === 'origin' ? req.set('origin', EVIL_ORIGIN) : req.set('sec-fetch-site', 'cross-site');
      const snapshot = async () => ({
        accounts: await rowsWhere(stack.db, 'business_accounts', { organization_id: operator.organizationId }, [
          'created_at',
        ]),
        keys: await rowsWhere(stack.db, 'api_keys', { organization_id: operator.organizationId }),
        audit: await countRows(stack.db, 'audit_logs', { organization_id: operator.organizationId }),
        sessions: await rowsWhere(stack.db, 'sessions', { operator_id: operator.operatorId }),
      });
      const before = await snapshot();

      for (const how of ['origin', 'fetch-site'] as const) {
        const attempts: Array<[string, ReturnType<Stack['http']['post']>]> = [
          [
            'POST /business-accounts',
            cross(stack.http.post('/business-accounts'), how).send({
              wabaId: fresh.wabaId,
              accessToken: fresh.accessToken,
            }),
          ],
          ['DELETE /business-accounts/:wabaId', cross(stack.http.delete(`/business-accounts/${account.wabaId}`), how)],
          [
            'POST phone-numbers/sync',
            cross(stack.http.post(`/business-accounts/${account.wabaId}/phone-numbers/sync`), how),
          ],
          ['POST templates/sync', cross(stack.http.post(`/business-accounts/${account.wabaId}/templates/sync`), how)],
          [
            'POST /api-keys',
            cross(stack.http.post('/api-keys'), how).send({ wabaId: account.wabaId, name: 'evil key' }),
          ],
          ['DELETE /api-keys/:id', cross(stack.http.delete(`/api-keys/${key.id}`), how)],
          ['POST /auth/logout', cross(stack.http.post('/auth/logout'), how)],
        ];
        for (const [label, attempt] of attempts) {
          const res = await attempt.set('cookie', operator.cookie);
          expect([how, label, res.status, res.body]).toEqual([how, label, 403, refused]);
        }
      }
      expect(await snapshot()).toEqual(before);
      expect((await stack.http.get('/auth/me').set('cookie', operator.cookie)).status).toBe(200);
      expect((await stack.http.get('/messages').set(key.headers)).status).toBe(200);

      // Reads are not state-changing; the console's own origin may change state.
      const read = await stack.http.get('/api-keys').set('origin', EVIL_ORIGIN).set('cookie', operator.cookie);
      expect(read.status).toBe(200);
      const sameOrigin = await stack.http
        .post('/api-keys')
        .set('origin', stack.url)
        .set('cookie', operator.cookie)
        .send({ wabaId: account.wabaId, name: 'same origin key' });
      expect(sameOrigin.status).toBe(201);
    });
  });

  it('logout ends only that session', async () => {
    const operator = await signupAndLogin(stack, 'Two Sessions Org');
    const second = await stack.http.post('/auth/login').send({ email: operator.email, password: PASSWORD });
    const otherCookie = ([] as string[]).concat(second.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
    const account = await connectAccount(stack, operator);
    await createKey(stack, operator, account.wabaId);

    expect((await stack.http.post('/auth/logout').set('cookie', operator.cookie)).status).toBe(200);
    expect((await stack.http.get('/api-keys').set('cookie', operator.cookie)).status).toBe(401);
    expect((await stack.http.post('/auth/logout').set('cookie', operator.cookie)).status).toBe(401);
    const other = await stack.http.get('/api-keys').set('cookie', otherCookie);
    expect(other.status).toBe(200);
    expect(other.body.data.total).toBe(1);
  });
});
