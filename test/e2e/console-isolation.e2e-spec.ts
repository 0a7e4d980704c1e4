import { onboard, type Tenant } from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';
import { accountRow, rowWhere, rowsWhere } from '../utils/db-rows.js';

const ACCOUNT_NOT_FOUND = { statusCode: 404, message: 'Business account not found' };
const KEY_NOT_FOUND = { statusCode: 404, message: 'API key not found' };

/**
 * Two organizations, each onboarded (account connected and synced, a key created). Organization B tries
 * every console route on organization A's resources: each answers 404 or, for lists, never shows A's data,
 * and A's resources are left exactly as they were.
 */
describe('Console isolation between organizations', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  async function twoTenants(): Promise<{ a: Tenant; b: Tenant }> {
    const [a, b] = await Promise.all([onboard(stack, 'Org A'), onboard(stack, 'Org B')]);
    return { a, b };
  }

  /** Everything of A that B could touch. */
  async function stateOf(tenant: Tenant) {
    const account = await accountRow(stack.db, { wabaId: tenant.account.wabaId });
    return {
      account,
      phoneNumbers: await rowsWhere(stack.db, 'phone_numbers', { business_account_id: account.id }, [
        'phone_number_id',
      ]),
      templates: await rowsWhere(stack.db, 'templates', { business_account_id: account.id }, ['name', 'language']),
      keys: await rowsWhere(stack.db, 'api_keys', { business_account_id: account.id }, ['created_at']),
      audit: await rowsWhere(stack.db, 'audit_logs', { organization_id: tenant.operator.organizationId }, ['id']),
    };
  }

  it("answers 404 to B on every route addressing A's business account, and changes nothing of A", async () => {
    const { a, b } = await twoTenants();
    const before = await stateOf(a);
    const waba = a.account.wabaId;
    const attempts: Array<[string, ReturnType<Stack['http']['get']>]> = [
      ['GET account', stack.http.get(`/business-accounts/${waba}`)],
      ['GET phone numbers', stack.http.get(`/business-accounts/${waba}/phone-numbers`)],
      ['GET templates', stack.http.get(`/business-accounts/${waba}/templates`)],
      ['GET approved templates', stack.http.get(`/business-accounts/${waba}/templates?status=APPROVED`)],
      ['POST phone-numbers sync', stack.http.post(`/business-accounts/${waba}/phone-numbers/sync`)],
      ['POST templates sync', stack.http.post(`/business-accounts/${waba}/templates/sync`)],
      ['DELETE account', stack.http.delete(`/business-accounts/${waba}`)],
      ['POST api-keys', stack.http.post('/api-keys').send({ wabaId: waba, name: 'stolen' })],
    ];
    for (const [label, attempt] of attempts) {
      const res = await attempt.set('cookie', b.operator.cookie);
      expect([label, res.status, res.body]).toEqual([label, 404, ACCOUNT_NOT_FOUND]);
    }
    expect(await stateOf(a)).toEqual(before);
    // A's account is still A's, connected, and its key still works.
    const own = await stack.http.get(`/business-accounts/${waba}`).set('cookie', a.operator.cookie);
    expect(own.body.data).toMatchObject({ wabaId: waba, status: 'connected' });
    expect((await stack.http.get('/messages').set(a.key.headers)).status).toBe(200);
  });

  it("answers 404 to B revoking A's key, which keeps working", async () => {
    const { a, b } = await twoTenants();
    const res = await stack.http.delete(`/api-keys/${a.key.id}`).set('cookie', b.operator.cookie);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(KEY_NOT_FOUND);
    const key = await rowWhere(stack.db, 'api_keys', { id: a.key.id });
    expect(key.revokedAt).toBeNull();
    await new Promise((r) => setTimeout(r, stack.config.apiKeyCacheTtlMs + 100));
    expect((await stack.http.get('/messages').set(a.key.headers)).status).toBe(200);
    // Revoking one's own key still works, so the 404 above is about ownership.
    expect((await stack.http.delete(`/api-keys/${b.key.id}`).set('cookie', b.operator.cookie)).status).toBe(200);
  });

  it("never shows A's data in B's lists (accounts, keys, audit log)", async () => {
    const { a, b } = await twoTenants();
    const leaks = (body: unknown) =>
      [a.account.wabaId, a.key.id, a.key.accessKey, a.operator.email].filter((v) => JSON.stringify(body).includes(v));

    const accounts = await stack.http.get('/business-accounts').set('cookie', b.operator.cookie);
    expect(accounts.status).toBe(200);
    expect(accounts.body.data.items.map((x: { wabaId: string }) => x.wabaId)).toEqual([b.account.wabaId]);
    expect(leaks(accounts.body)).toEqual([]);

    const keys = await stack.http.get('/api-keys').set('cookie', b.operator.cookie);
    expect(keys.status).toBe(200);
    expect(keys.body.data.items.map((k: { id: string }) => k.id)).toEqual([b.key.id]);
    expect(keys.body.data.total).toBe(1);
    expect(leaks(keys.body)).toEqual([]);

    const filtered = await stack.http.get(`/api-keys?wabaId=${a.account.wabaId}`).set('cookie', b.operator.cookie);
    expect(filtered.status).toBe(200);
    expect(filtered.body.data).toMatchObject({ items: [], total: 0 });

    const audit = await stack.http.get('/audit-log?limit=100').set('cookie', b.operator.cookie);
    expect(audit.status).toBe(200);
    expect(audit.body.data.total).toBe(5); // B's own: signed in, connected, numbers synced, templates synced, key created
    expect(audit.body.data.items.every((e: { operatorEmail: string }) => e.operatorEmail === b.operator.email)).toBe(
      true,
    );
    expect(leaks(audit.body)).toEqual([]);

    // And the other way round: A sees only A's.
    const aAudit = await stack.http.get('/audit-log?limit=100').set('cookie', a.operator.cookie);
    expect(aAudit.body.data.total).toBe(5);
    expect(JSON.stringify(aAudit.body)).toContain(a.key.id);
    expect(JSON.stringify(aAudit.body)).not.toContain(b.key.id);
  });

  it("keeps B's failed attempts out of A's audit log", async () => {
    const { a, b } = await twoTenants();
    const before = await stack.http.get('/audit-log?limit=100').set('cookie', a.operator.cookie);
    await stack.http.post(`/business-accounts/${a.account.wabaId}/templates/sync`).set('cookie', b.operator.cookie);
    await stack.http.delete(`/api-keys/${a.key.id}`).set('cookie', b.operator.cookie);
    await stack.http.delete(`/business-accounts/${a.account.wabaId}`).set('cookie', b.operator.cookie);
    const after = await stack.http.get('/audit-log?limit=100').set('cookie', a.operator.cookie);
    expect(after.body.data).toEqual(before.body.data);
    const bAudit = await stack.http.get('/audit-log?limit=100').set('cookie', b.operator.cookie);
    expect(bAudit.body.data.total).toBe(5);
  });
});
