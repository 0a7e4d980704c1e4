import { randomUUID } from 'node:crypto';
import { startSimulator } from '../../simulator/simulator.js';
import { SecretBox } from '../../src/core/crypto/secret-box.js';
import {
  connectAccount,
  createKey,
  eventually,
  onboard,
  signupAndLogin,
  syncAll,
  type Operator,
} from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';
import { freePort } from '../utils/net.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { accountRow, countRows, rowsWhere, updateAccount } from '../utils/db-rows.js';

/** A loopback port with nothing listening on it. */
const closedPort = freePort;

describe('Console business accounts', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Everything a sync or a connect could write for this organization. */
  async function stateOf(operator: Operator) {
    const accounts = await rowsWhere(stack.db, 'business_accounts', { organization_id: operator.organizationId }, [
      'created_at',
    ]);
    const ids = accounts.map((a) => a.id);
    return {
      accounts,
      phoneNumbers: await rowsWhere(stack.db, 'phone_numbers', { business_account_id: ids }, ['phone_number_id']),
      templates: await rowsWhere(stack.db, 'templates', { business_account_id: ids }, ['name', 'language']),
      keys: await rowsWhere(stack.db, 'api_keys', { organization_id: operator.organizationId }, ['created_at']),
      // What the request wrote (the operator's sign-in before it is audited too).
      audit: (await rowsWhere(stack.db, 'audit_logs', { organization_id: operator.organizationId }, ['id'])).filter(
        (e) => e.action !== 'operator.signed_in',
      ),
    };
  }

  describe('connect', () => {
    it('rejects a token the upstream refuses with 422 naming accessToken and the upstream reason; nothing is written', async () => {
      const operator = await signupAndLogin(stack, 'Wrong Token Org');
      const upstream = stack.sim.createAccount();
      const res = await stack.http
        .post('/business-accounts')
        .set('cookie', operator.cookie)
        .send({ wabaId: upstream.wabaId, accessToken: 'sim-token-not-issued' });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ statusCode: 422, message: 'Field Validation Failed' });
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].field).toBe('accessToken');
      // The simulator's (Meta's) own words and code: "Invalid OAuth access token - Cannot parse access token", 190.
      expect(res.body.errors[0].message).toContain('Invalid OAuth access token');
      expect(res.body.errors[0].message).toContain('190');
      expect(await countRows(stack.db, 'business_accounts', { waba_id: upstream.wabaId })).toBe(0);
      expect((await stateOf(operator)).audit).toEqual([]);
      const list = await stack.http.get('/business-accounts').set('cookie', operator.cookie);
      expect(list.body.data).toEqual({ items: [], page: 1, limit: 20, total: 0, totalPages: 0 });
    });
  });

  describe('phone number sync', () => {
    it('marks a number the upstream no longer lists as removed, counted once, and keeps it listed', async () => {
      const operator = await signupAndLogin(stack, 'Removed Number Org');
      const account = await connectAccount(stack, operator);
      await syncAll(stack, operator, account.wabaId);
      // A number known from an earlier sync that has since gone from the upstream account.
      const row = await accountRow(stack.db, { wabaId: account.wabaId });
      const ghost = `4028${Date.now()}`.slice(0, 15);
      await stack.db
        .on()
        .insertInto('phone_numbers')
        .values({
          id: randomUUID(),
          business_account_id: row.id,
          phone_number_id: ghost,
          display_phone_number: '+44 7700 900999',
          status: 'CONNECTED',
          synced_at: new Date(Date.now() - 86_400_000),
        })
        .execute();

      const sync = await stack.http
        .post(`/business-accounts/${account.wabaId}/phone-numbers/sync`)
        .set('cookie', operator.cookie);
      expect(sync.status).toBe(200);
      expect(sync.body.data.counts).toEqual({ added: 0, updated: 3, removed: 1, total: 3 });
      const list = await stack.http
        .get(`/business-accounts/${account.wabaId}/phone-numbers`)
        .set('cookie', operator.cookie);
      expect(list.body.data.total).toBe(4);
      expect(
        list.body.data.items
          .filter((p: { removed: boolean }) => p.removed)
          .map((p: { phoneNumberId: string }) => p.phoneNumberId),
      ).toEqual([ghost]);

      const again = await stack.http
        .post(`/business-accounts/${account.wabaId}/phone-numbers/sync`)
        .set('cookie', operator.cookie);
      expect(again.body.data.counts).toEqual({ added: 0, updated: 3, removed: 0, total: 3 });
    });
  });

  describe('disconnect', () => {
    it('revokes the account keys (refused afterwards) and keeps its history, shown as disconnected', async () => {
      const { operator, account, key } = await onboard(stack, 'Disconnect Org');
      const second = await createKey(stack, operator, account.wabaId, 'second key');
      expect((await stack.http.get('/messages').set(key.headers)).status).toBe(200);
      expect((await stack.http.get('/messages').set(second.headers)).status).toBe(200);

      const res = await stack.http.delete(`/business-accounts/${account.wabaId}`).set('cookie', operator.cookie);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ wabaId: account.wabaId, status: 'disconnected' });
      expect(Date.parse(res.body.data.disconnectedAt)).not.toBeNaN();

      for (const pair of [key, second]) {
        const refused = await eventually(
          async () => {
            const r = await stack.http.get('/messages').set(pair.headers);
            return r.status === 401 ? r : undefined;
          },
          { timeoutMs: 15_000 },
        );
        expect(refused?.body).toEqual({ statusCode: 401, message: 'Invalid API key' });
      }

      // History: the account, its numbers, templates and keys are still there to read.
      const one = await stack.http.get(`/business-accounts/${account.wabaId}`).set('cookie', operator.cookie);
      expect(one.status).toBe(200);
      expect(one.body.data).toMatchObject({
        wabaId: account.wabaId,
        status: 'disconnected',
        disconnectedAt: res.body.data.disconnectedAt,
      });
      expect(one.body.data.phoneNumbersSyncedAt).not.toBeNull();
      const list = await stack.http.get('/business-accounts').set('cookie', operator.cookie);
      expect(list.body.data.items).toEqual([
        expect.objectContaining({ wabaId: account.wabaId, status: 'disconnected' }),
      ]);
      expect(
        (await stack.http.get(`/business-accounts/${account.wabaId}/phone-numbers`).set('cookie', operator.cookie)).body
          .data.items,
      ).toHaveLength(3);
      expect(
        (await stack.http.get(`/business-accounts/${account.wabaId}/templates`).set('cookie', operator.cookie)).body
          .data.total,
      ).toBe(account.sim.templates.length);
      const keys = await stack.http.get('/api-keys').set('cookie', operator.cookie);
      expect(keys.body.data.items).toHaveLength(2);
      expect(keys.body.data.items.every((k: { revokedAt: string | null }) => k.revokedAt !== null)).toBe(true);
      const audit = await stack.http.get('/audit-log').set('cookie', operator.cookie);
      expect(audit.body.data.items[0]).toMatchObject({
        action: 'business_account.disconnected',
        targetId: account.wabaId,
        details: { revokedKeys: 2 },
      });

      // A disconnected account gets no new keys and no syncs.
      const newKey = await stack.http
        .post('/api-keys')
        .set('cookie', operator.cookie)
        .send({ wabaId: account.wabaId, name: 'after disconnect' });
      expect(newKey.status).toBe(404);
      expect(
        (
          await stack.http
            .post(`/business-accounts/${account.wabaId}/phone-numbers/sync`)
            .set('cookie', operator.cookie)
        ).status,
      ).toBe(404);

      // Reconnecting it (same organization) does not bring the revoked keys back.
      const reconnect = await stack.http
        .post('/business-accounts')
        .set('cookie', operator.cookie)
        .send({ wabaId: account.wabaId, accessToken: account.accessToken });
      expect(reconnect.status).toBe(201);
      expect(reconnect.body.data).toMatchObject({ wabaId: account.wabaId, status: 'connected', disconnectedAt: null });
      await new Promise((r) => setTimeout(r, stack.config.apiKeyCacheTtlMs + 100));
      expect((await stack.http.get('/messages').set(key.headers)).status).toBe(401);
    });
  });

  describe('upstream failures', () => {
    it('answers 424 (reconnect) when the upstream no longer accepts the stored token, and writes nothing', async () => {
      const operator = await signupAndLogin(stack, 'Revoked Token Org');
      const account = await connectAccount(stack, operator);
      await syncAll(stack, operator, account.wabaId);
      // The token is revoked upstream: from now on the upstream does not know the stored token.
      const box = new SecretBox(stack.config.encryptionKeys);
      await updateAccount(stack.db, account.wabaId, {
        access_token_encrypted: box.seal('sim-token-revoked-upstream', account.wabaId),
      });
      const before = await stateOf(operator);

      for (const kind of ['phone-numbers', 'templates']) {
        const res = await stack.http
          .post(`/business-accounts/${account.wabaId}/${kind}/sync`)
          .set('cookie', operator.cookie);
        expect([kind, res.status]).toEqual([kind, 424]);
        expect(res.body.statusCode).toBe(424);
        expect(res.body.message).toMatch(/reconnect/i);
        expect(res.body.message).not.toContain('sim-token');
      }
      expect(await stateOf(operator)).toEqual(before);
    });

    it('recovers from a 424 by replacing the token (PUT …/access-token), keeping the key pairs', async () => {
      const operator = await signupAndLogin(stack, 'Token Rotation Org');
      const account = await connectAccount(stack, operator);
      const key = await createKey(stack, operator, account.wabaId);
      const box = new SecretBox(stack.config.encryptionKeys);
      await updateAccount(stack.db, account.wabaId, {
        access_token_encrypted: box.seal('sim-token-expired', account.wabaId),
      });
      expect(
        (
          await stack.http
            .post(`/business-accounts/${account.wabaId}/phone-numbers/sync`)
            .set('cookie', operator.cookie)
        ).status,
      ).toBe(424);

      const rejected = await stack.http
        .put(`/business-accounts/${account.wabaId}/access-token`)
        .set('cookie', operator.cookie)
        .send({ accessToken: 'still-wrong' });
      expect(rejected.status).toBe(422);
      expect(rejected.body.errors.map((e: { field: string }) => e.field)).toEqual(['accessToken']);

      const replaced = await stack.http
        .put(`/business-accounts/${account.wabaId}/access-token`)
        .set('cookie', operator.cookie)
        .send({ accessToken: account.accessToken });
      expect(replaced.status).toBe(200);
      expect(replaced.body.data).toMatchObject({ wabaId: account.wabaId, status: 'connected' });
      expect(
        (
          await stack.http
            .post(`/business-accounts/${account.wabaId}/phone-numbers/sync`)
            .set('cookie', operator.cookie)
        ).status,
      ).toBe(200);
      expect((await stack.http.get('/messages').set(key.headers)).status).toBe(200);
      const audit = await stack.http.get('/audit-log').set('cookie', operator.cookie);
      expect(audit.body.data.items.map((e: { action: string }) => e.action)).toContain('business_account.reconnected');
    });

    it('answers 424 on a first sync too, leaving the account unsynced', async () => {
      const operator = await signupAndLogin(stack, 'Revoked Before Sync Org');
      const account = await connectAccount(stack, operator);
      const box = new SecretBox(stack.config.encryptionKeys);
      await updateAccount(stack.db, account.wabaId, {
        access_token_encrypted: box.seal('sim-token-unknown', account.wabaId),
      });
      for (const kind of ['phone-numbers', 'templates']) {
        expect(
          (await stack.http.post(`/business-accounts/${account.wabaId}/${kind}/sync`).set('cookie', operator.cookie))
            .status,
        ).toBe(424);
      }
      const one = await stack.http.get(`/business-accounts/${account.wabaId}`).set('cookie', operator.cookie);
      expect(one.body.data).toMatchObject({ phoneNumbersSyncedAt: null, templatesSyncedAt: null });
      expect(
        (await stack.http.get(`/business-accounts/${account.wabaId}/phone-numbers`).set('cookie', operator.cookie)).body
          .data.items,
      ).toEqual([]);
      expect(
        (await stack.http.get(`/business-accounts/${account.wabaId}/templates`).set('cookie', operator.cookie)).body
          .data.items,
      ).toEqual([]);
      const audit = await stack.http.get('/audit-log').set('cookie', operator.cookie);
      expect(audit.body.data.items.map((e: { action: string }) => e.action)).toEqual([
        'business_account.connected',
        'operator.signed_in',
      ]);
    });

    describe('when the upstream is unavailable', () => {
      let down: TestApp;

      beforeAll(async () => {
        // The same service (same database, same encryption key) whose upstream address has nothing listening.
        down = await startTestApp({
          UPSTREAM_BASE_URL: `http://127.0.0.1:${await closedPort()}/v25.0`,
          ENCRYPTION_KEY: stack.config.encryptionKeys[0]!.key.toString('hex'),
          WHATSAPP_APP_SECRET: 'test-app-secret',
        });
      });
      afterAll(async () => {
        await down?.close();
      });

      it('answers 502 to both syncs and writes nothing', async () => {
        const operator = await signupAndLogin(stack, 'Upstream Down Sync Org');
        const account = await connectAccount(stack, operator);
        await syncAll(stack, operator, account.wabaId);
        const before = await stateOf(operator);
        for (const kind of ['phone-numbers', 'templates']) {
          const res = await down.http
            .post(`/business-accounts/${account.wabaId}/${kind}/sync`)
            .set('cookie', operator.cookie);
          expect([kind, res.status]).toEqual([kind, 502]);
          expect(res.body.message).toMatch(/^Upstream platform unavailable/);
        }
        expect(await stateOf(operator)).toEqual(before);
      });

      it('answers 502 when the upstream goes away in the middle of the test', async () => {
        const sim = await startSimulator({ appSecret: 'test-app-secret' });
        const own = await startTestApp({ UPSTREAM_BASE_URL: sim.baseUrl });
        let simClosed = false;
        try {
          const operator = await signupAndLogin(own, 'Upstream Vanishes Org');
          const upstream = sim.createAccount();
          expect(
            (
              await own.http
                .post('/business-accounts')
                .set('cookie', operator.cookie)
                .send({ wabaId: upstream.wabaId, accessToken: upstream.accessToken })
            ).status,
          ).toBe(201);
          const before = await stateOf(operator);
          await sim.close();
          simClosed = true;
          const res = await own.http
            .post(`/business-accounts/${upstream.wabaId}/phone-numbers/sync`)
            .set('cookie', operator.cookie);
          expect(res.status).toBe(502);
          expect(await stateOf(operator)).toEqual(before);
        } finally {
          await own.close();
          if (!simClosed) await sim.close();
        }
      });
    });
  });
});
