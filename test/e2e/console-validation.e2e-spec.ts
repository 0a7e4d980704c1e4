import { randomBytes } from 'node:crypto';
import { PASSWORD, connectAccount, createKey, signupAndLogin, type Operator } from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';
import { countRows, rowsWhere } from '../utils/db-rows.js';

/**
 * Bad input on every console route that takes input: one 422 `Field Validation Failed` naming every failing
 * field at once (unknown fields included, as `… is not allowed`), and nothing written.
 */

interface FieldError {
  field: string;
  message: string;
}

/** The 422 envelope with exactly these fields failing, each message about its own field. */
function expectFieldErrors(
  res: { status: number; body: { statusCode?: number; message?: string; errors?: FieldError[] } },
  fields: string[],
): FieldError[] {
  expect({ status: res.status, statusCode: res.body.statusCode, message: res.body.message }).toEqual({
    status: 422,
    statusCode: 422,
    message: 'Field Validation Failed',
  });
  const errors = res.body.errors ?? [];
  expect(errors.map((e) => e.field).sort()).toEqual([...fields].sort());
  for (const error of errors) expect(error.message.startsWith(error.field)).toBe(true);
  return errors;
}

const messageOf = (errors: FieldError[], field: string) => errors.find((e) => e.field === field)?.message;

describe('Console input validation', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  async function orgState(operator: Operator) {
    return {
      accounts: await rowsWhere(stack.db, 'business_accounts', { organization_id: operator.organizationId }),
      keys: await rowsWhere(stack.db, 'api_keys', { organization_id: operator.organizationId }),
      // What was done beyond signing in (every sign-in is audited).
      audit: (await rowsWhere(stack.db, 'audit_logs', { organization_id: operator.organizationId })).filter(
        (e) => e.action !== 'operator.signed_in',
      ).length,
      sessions: await countRows(stack.db, 'sessions', { operator_id: operator.operatorId }),
    };
  }

  describe('POST /auth/signup', () => {
    it('names a bad email, a short password and a missing organizationName at once, and creates nobody', async () => {
      const bad = `not-an-email-${randomBytes(4).toString('hex')}`;
      const res = await stack.http.post('/auth/signup').send({ email: bad, password: 'short' });
      const errors = expectFieldErrors(res, ['email', 'password', 'organizationName']);
      expect(messageOf(errors, 'email')).toBe('email must be a valid email address');
      expect(messageOf(errors, 'password')).toBe('password must be at least 10 characters');
      expect(await countRows(stack.db, 'operators', { email: bad })).toBe(0);
    });

    it('names every field of an empty body with its own reason', async () => {
      const errors = expectFieldErrors(await stack.http.post('/auth/signup').send({}), [
        'email',
        'password',
        'organizationName',
      ]);
      expect(messageOf(errors, 'email')).toBe('email is required');
      expect(messageOf(errors, 'password')).toBe('password is required');
    });

    it('refuses an unknown field and a blank organizationName, and creates nobody', async () => {
      const email = `op-${randomBytes(6).toString('hex')}@example.test`;
      const res = await stack.http
        .post('/auth/signup')
        .send({ email, password: PASSWORD, organizationName: '   ', role: 'admin' });
      const errors = expectFieldErrors(res, ['organizationName', 'role']);
      expect(messageOf(errors, 'role')).toBe('role is not allowed');
      expect(await countRows(stack.db, 'operators', { email })).toBe(0);
    });
  });

  describe('POST /auth/login', () => {
    it('names a bad email, an empty password and an unknown field at once', async () => {
      const errors = expectFieldErrors(
        await stack.http.post('/auth/login').send({ email: 'nope', password: '', remember: true }),
        ['email', 'password', 'remember'],
      );
      expect(messageOf(errors, 'remember')).toBe('remember is not allowed');
    });

    it('opens no session when the credentials are right but an unknown field is sent', async () => {
      const operator = await signupAndLogin(stack, 'Login Validation Org');
      const before = await orgState(operator);
      const res = await stack.http
        .post('/auth/login')
        .send({ email: operator.email, password: PASSWORD, remember: true });
      expectFieldErrors(res, ['remember']);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(await orgState(operator)).toEqual(before);
    });
  });

  describe('POST /business-accounts', () => {
    it('names every failing field at once and connects nothing', async () => {
      const operator = await signupAndLogin(stack, 'Connect Validation Org');
      const res = await stack.http
        .post('/business-accounts')
        .set('cookie', operator.cookie)
        .send({ wabaId: 'abc', accessToken: '', name: '', extra: 1 });
      const errors = expectFieldErrors(res, ['wabaId', 'accessToken', 'name', 'extra']);
      expect(messageOf(errors, 'wabaId')).toBe('wabaId must be the numeric WhatsApp Business Account id');
      expect(messageOf(errors, 'extra')).toBe('extra is not allowed');
      expectFieldErrors(await stack.http.post('/business-accounts').set('cookie', operator.cookie).send({}), [
        'wabaId',
        'accessToken',
      ]);
      expect((await orgState(operator)).accounts).toEqual([]);
      expect((await orgState(operator)).audit).toBe(0);
    });

    it('refuses valid credentials sent with an unknown field or a blank name, without connecting them', async () => {
      const operator = await signupAndLogin(stack, 'Connect Unknown Field Org');
      const upstream = stack.sim.createAccount();
      const extra = await stack.http
        .post('/business-accounts')
        .set('cookie', operator.cookie)
        .send({ wabaId: upstream.wabaId, accessToken: upstream.accessToken, webhookUrl: 'https://x.example' });
      expectFieldErrors(extra, ['webhookUrl']);
      const blank = await stack.http
        .post('/business-accounts')
        .set('cookie', operator.cookie)
        .send({ wabaId: upstream.wabaId, accessToken: upstream.accessToken, name: '  ' });
      expectFieldErrors(blank, ['name']);
      const numeric = await stack.http
        .post('/business-accounts')
        .set('cookie', operator.cookie)
        .send({ wabaId: Number(upstream.wabaId), accessToken: upstream.accessToken });
      expectFieldErrors(numeric, ['wabaId']);
      expect(await countRows(stack.db, 'business_accounts', { waba_id: upstream.wabaId })).toBe(0);
      // The same credentials, well formed, connect: the refusals above were about the input.
      const ok = await stack.http
        .post('/business-accounts')
        .set('cookie', operator.cookie)
        .send({ wabaId: upstream.wabaId, accessToken: upstream.accessToken, name: '  Trimmed Name ' });
      expect(ok.status).toBe(201);
      expect(ok.body.data.name).toBe('Trimmed Name');
    });
  });

  describe('POST /api-keys', () => {
    it('names every failing field at once and creates no key', async () => {
      const operator = await signupAndLogin(stack, 'Key Validation Org');
      const account = await connectAccount(stack, operator);
      const before = await orgState(operator);
      const res = await stack.http
        .post('/api-keys')
        .set('cookie', operator.cookie)
        .send({ wabaId: '12', name: '   ', scope: 'all' });
      const errors = expectFieldErrors(res, ['wabaId', 'name', 'scope']);
      expect(messageOf(errors, 'name')).toBe('name must not be empty');
      expectFieldErrors(await stack.http.post('/api-keys').set('cookie', operator.cookie).send({}), ['wabaId', 'name']);
      const long = await stack.http
        .post('/api-keys')
        .set('cookie', operator.cookie)
        .send({ wabaId: account.wabaId, name: 'x'.repeat(101) });
      expect(messageOf(expectFieldErrors(long, ['name']), 'name')).toBe('name must be at most 100 characters');
      const typed = await stack.http
        .post('/api-keys')
        .set('cookie', operator.cookie)
        .send({ wabaId: { $ne: '' }, name: ['a'] });
      expectFieldErrors(typed, ['wabaId', 'name']);
      expect(await orgState(operator)).toEqual(before);

      const ok = await stack.http
        .post('/api-keys')
        .set('cookie', operator.cookie)
        .send({ wabaId: account.wabaId, name: ' orders ' });
      expect(ok.status).toBe(201);
      expect(ok.body.data.name).toBe('orders');
    });

    it('answers a malformed JSON body with 400 and creates no key', async () => {
      const operator = await signupAndLogin(stack, 'Key Malformed Org');
      await connectAccount(stack, operator);
      const before = await orgState(operator);
      const res = await stack.http
        .post('/api-keys')
        .set('cookie', operator.cookie)
        .set('content-type', 'application/json')
        .send('{"wabaId": ');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, message: 'Malformed JSON body' });
      expect(await orgState(operator)).toEqual(before);
    });
  });

  describe('list queries', () => {
    it('GET /api-keys names page, limit, wabaId and unknown parameters at once', async () => {
      const operator = await signupAndLogin(stack, 'Keys Query Org');
      const errors = expectFieldErrors(
        await stack.http.get('/api-keys?page=0&limit=1000&wabaId=abc&sort=name').set('cookie', operator.cookie),
        ['page', 'limit', 'wabaId', 'sort'],
      );
      expect(messageOf(errors, 'limit')).toBe('limit must be at most 100');
      expectFieldErrors(await stack.http.get('/api-keys?page=1.5&limit=ten').set('cookie', operator.cookie), [
        'page',
        'limit',
      ]);
    });

    it('GET /audit-log names page, limit and unknown parameters at once', async () => {
      const operator = await signupAndLogin(stack, 'Audit Query Org');
      expectFieldErrors(await stack.http.get('/audit-log?page=abc&limit=0&action=x').set('cookie', operator.cookie), [
        'page',
        'limit',
        'action',
      ]);
    });

    it('GET …/templates names a bad status and unknown parameters at once', async () => {
      const operator = await signupAndLogin(stack, 'Templates Query Org');
      const account = await connectAccount(stack, operator);
      const errors = expectFieldErrors(
        await stack.http
          .get(`/business-accounts/${account.wabaId}/templates?status=BOGUS&lang=en`)
          .set('cookie', operator.cookie),
        ['status', 'lang'],
      );
      expect(messageOf(errors, 'status')).toContain('APPROVED');
    });
  });

  describe('path parameters', () => {
    it('answer 404 (never 500) to a malformed business account id or key id, writing nothing', async () => {
      const operator = await signupAndLogin(stack, 'Path Params Org');
      const account = await connectAccount(stack, operator);
      const key = await createKey(stack, operator, account.wabaId);
      const before = await orgState(operator);
      for (const waba of ['abc', '../api-keys', '9'.repeat(300), `${account.wabaId}x`]) {
        const id = encodeURIComponent(waba);
        for (const [method, path] of [
          ['get', `/business-accounts/${id}`],
          ['delete', `/business-accounts/${id}`],
          ['post', `/business-accounts/${id}/phone-numbers/sync`],
          ['get', `/business-accounts/${id}/phone-numbers`],
          ['post', `/business-accounts/${id}/templates/sync`],
          ['get', `/business-accounts/${id}/templates`],
        ] as const) {
          const res = await stack.http[method](path).set('cookie', operator.cookie);
          expect([method, path, res.status, res.body]).toEqual([
            method,
            path,
            404,
            { statusCode: 404, message: 'Business account not found' },
          ]);
        }
      }
      for (const id of ['not-a-uuid', `${key.id}0`, "1' OR '1'='1"]) {
        const res = await stack.http.delete(`/api-keys/${encodeURIComponent(id)}`).set('cookie', operator.cookie);
        expect([id, res.status, res.body]).toEqual([id, 404, { statusCode: 404, message: 'API key not found' }]);
      }
      expect(await orgState(operator)).toEqual(before);
    });
  });
});
