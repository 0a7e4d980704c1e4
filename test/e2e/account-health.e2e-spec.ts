import type { SubscriptionFault, SubscriptionMethod } from '../../simulator/subscribed-apps.js';
import { SIMULATOR_APP } from '../../simulator/subscriptions.js';
import {
  eventually,
  helloWorld,
  onboard,
  recipient,
  signupAndLogin,
  type Operator,
  type Tenant,
} from '../utils/factories.js';
import { freePort } from '../utils/net.js';
import { startStack, type Stack } from '../utils/stack.js';
import { startTestApp } from '../utils/test-app.js';
import { accountRow, countRows, rowsWhere } from '../utils/db-rows.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Issue 14 parts 1 and 5: the app's webhook subscription (subscribed_apps) made on connect and on demand, and
 * the stored token's health: checked on demand and by the worker on a schedule, and refused before any
 * upstream call once Meta rejected it.
 */
describe('Business account health: webhook subscription and credentials', () => {
  let stack: Stack;

  beforeAll(async () => {
    // WHATSAPP_APP_ID set: a subscription counts only when subscribed_apps lists this very app.
    stack = await startStack({ env: { WHATSAPP_APP_ID: SIMULATOR_APP.id } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const account = (operator: Operator, wabaId: string) =>
    stack.http.get(`/business-accounts/${wabaId}`).set('cookie', operator.cookie);
  const send = (t: Tenant, to = recipient()) => stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, to));
  /** What the organization's operators did beyond signing in (every sign-in is audited too). */
  const auditActions = async (operator: Operator) =>
    (await rowsWhere(stack.db, 'audit_logs', { organization_id: operator.organizationId }, ['id']))
      .map((e) => e.action)
      .filter((a) => a !== 'operator.signed_in');

  describe('subscription on connect', () => {
    it("subscribes the app to the account's webhooks and shows it on the account", async () => {
      const operator = await signupAndLogin(stack, 'Subscribe Org');
      const upstream = stack.sim.createAccount();
      expect(stack.sim.subscribedApps(upstream.wabaId)).toEqual([]);

      const res = await stack.http
        .post('/business-accounts')
        .set('cookie', operator.cookie)
        .send({ wabaId: upstream.wabaId, accessToken: upstream.accessToken });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        wabaId: upstream.wabaId,
        webhooksSubscribed: true,
        webhooksCheckedAt: expect.stringMatching(ISO_MS),
        credentialsValid: true,
        credentialsCheckedAt: expect.stringMatching(ISO_MS),
        credentialsError: null,
      });
      // The simulator (Meta) now lists the app among the account's subscribed apps, as GET subscribed_apps does.
      expect(stack.sim.subscribedApps(upstream.wabaId)).toEqual([SIMULATOR_APP]);
      const graph = await fetch(`${stack.sim.baseUrl}/${upstream.wabaId}/subscribed_apps`, {
        headers: { authorization: `Bearer ${upstream.accessToken}` },
      });
      expect(await graph.json()).toEqual({ data: [{ whatsapp_business_api_data: SIMULATOR_APP }] });

      const one = await account(operator, upstream.wabaId);
      expect(one.body.data).toMatchObject({
        webhooksSubscribed: true,
        webhooksCheckedAt: res.body.data.webhooksCheckedAt,
        credentialsValid: true,
      });
    });

    const failures: Array<{ fault: SubscriptionFault; method: SubscriptionMethod; status: number; message: RegExp }> = [
      {
        fault: 'permission',
        method: 'POST',
        status: 424,
        message: /access token \(webhook subscription: Permissions error \(200\)\); reconnect/,
      },
      {
        fault: 'unavailable',
        method: 'POST',
        status: 502,
        message: /^Upstream platform unavailable: webhook subscription: Service temporarily unavailable \(2\)/,
      },
      {
        fault: 'rate_limit',
        method: 'POST',
        status: 429,
        message: /webhook subscription: There have been too many calls .*\(80007\)/,
      },
      {
        fault: 'unavailable',
        method: 'GET',
        status: 502,
        message: /webhook subscription: Service temporarily unavailable \(2\)/,
      },
      {
        fault: 'not_listed',
        method: 'POST',
        status: 502,
        message: new RegExp(`subscribed_apps does not list this app \\(${SIMULATOR_APP.id}\\) after subscribing`),
      },
    ];

    it.each(failures)(
      'refuses a connect whose subscribed_apps $method fails ($fault) with $status naming the cause; nothing is written',
      async ({ fault, method, status, message }) => {
        const operator = await signupAndLogin(stack, `Subscription ${fault} Org`);
        const upstream = stack.sim.createAccount();
        stack.sim.setSubscriptionFault(upstream.wabaId, method, fault);

        const res = await stack.http
          .post('/business-accounts')
          .set('cookie', operator.cookie)
          .send({ wabaId: upstream.wabaId, accessToken: upstream.accessToken });
        expect(res.status).toBe(status);
        expect(res.body).toEqual({ statusCode: status, message: expect.stringMatching(message) });
        expect(res.body.message).not.toContain(upstream.accessToken);
        if (status === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        // Nothing half-written: no account, hence no numbers, templates or keys; no audit entry.
        expect(await countRows(stack.db, 'business_accounts', { waba_id: upstream.wabaId })).toBe(0);
        expect(
          await countRows(stack.db, 'phone_numbers', { phone_number_id: upstream.phoneNumbers.map((p) => p.id) }),
        ).toBe(0);
        expect(await auditActions(operator)).toEqual([]);
        expect((await stack.http.get('/business-accounts').set('cookie', operator.cookie)).body.data.items).toEqual([]);

        // Once Meta subscribes the app again, the same connect succeeds.
        stack.sim.setSubscriptionFault(upstream.wabaId, method, null);
        const retry = await stack.http
          .post('/business-accounts')
          .set('cookie', operator.cookie)
          .send({ wabaId: upstream.wabaId, accessToken: upstream.accessToken });
        expect(retry.status).toBe(201);
        expect(retry.body.data.webhooksSubscribed).toBe(true);
      },
    );

    it('replacing the token subscribes with the new one, and a failing subscription leaves the stored token as it was', async () => {
      const t = await onboard(stack, 'Replace Subscribe Org');
      const newToken = stack.sim.rotateToken(t.account.wabaId);
      stack.sim.setSubscriptionFault(t.account.wabaId, 'POST', 'unavailable');
      const before = await accountRow(stack.db, { wabaId: t.account.wabaId });

      const refused = await stack.http
        .put(`/business-accounts/${t.account.wabaId}/access-token`)
        .set('cookie', t.operator.cookie)
        .send({ accessToken: newToken });
      expect(refused.status).toBe(502);
      expect(refused.body.message).toMatch(/webhook subscription/);
      expect(await accountRow(stack.db, { wabaId: t.account.wabaId })).toEqual(before);

      stack.sim.setSubscriptionFault(t.account.wabaId, 'POST', null);
      const replaced = await stack.http
        .put(`/business-accounts/${t.account.wabaId}/access-token`)
        .set('cookie', t.operator.cookie)
        .send({ accessToken: newToken });
      expect(replaced.status).toBe(200);
      expect(replaced.body.data).toMatchObject({ webhooksSubscribed: true, credentialsValid: true });
      expect(Date.parse(replaced.body.data.webhooksCheckedAt)).toBeGreaterThan(before.webhooksCheckedAt!.getTime());
    });
  });

  describe('POST /business-accounts/:wabaId/subscription', () => {
    it('subscribes again after the app was unsubscribed upstream, and answers the account view', async () => {
      const t = await onboard(stack, 'Resubscribe Org');
      // Someone unsubscribed the app in Meta's tools: DELETE /{waba-id}/subscribed_apps.
      const removed = await fetch(`${stack.sim.baseUrl}/${t.account.wabaId}/subscribed_apps`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${t.account.accessToken}` },
      });
      expect(await removed.json()).toEqual({ success: true });
      expect(stack.sim.subscribedApps(t.account.wabaId)).toEqual([]);
      const before = (await account(t.operator, t.account.wabaId)).body.data;

      const res = await stack.http
        .post(`/business-accounts/${t.account.wabaId}/subscription`)
        .set('cookie', t.operator.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ statusCode: 200, message: 'Success' });
      expect(res.body.data).toEqual({
        ...before,
        webhooksSubscribed: true,
        webhooksCheckedAt: expect.stringMatching(ISO_MS),
      });
      expect(Date.parse(res.body.data.webhooksCheckedAt)).toBeGreaterThan(Date.parse(before.webhooksCheckedAt));
      expect(stack.sim.subscribedApps(t.account.wabaId)).toEqual([SIMULATOR_APP]);
      expect(await auditActions(t.operator)).toContain('business_account.webhooks_subscribed');
    });

    it('answers an upstream failure with its cause and leaves the account as it was', async () => {
      const t = await onboard(stack, 'Resubscribe Failure Org');
      const before = await accountRow(stack.db, { wabaId: t.account.wabaId });
      const audit = await auditActions(t.operator);

      stack.sim.setSubscriptionFault(t.account.wabaId, 'POST', 'permission');
      const credential = await stack.http
        .post(`/business-accounts/${t.account.wabaId}/subscription`)
        .set('cookie', t.operator.cookie);
      expect(credential.status).toBe(424);
      expect(credential.body).toEqual({
        statusCode: 424,
        message: expect.stringContaining('webhook subscription: Permissions error (200)'),
      });

      stack.sim.setSubscriptionFault(t.account.wabaId, 'POST', 'unavailable');
      const down = await stack.http
        .post(`/business-accounts/${t.account.wabaId}/subscription`)
        .set('cookie', t.operator.cookie);
      expect(down.status).toBe(502);
      expect(down.body).toEqual({
        statusCode: 502,
        message: expect.stringMatching(/^Upstream platform unavailable: webhook subscription/),
      });

      expect(await accountRow(stack.db, { wabaId: t.account.wabaId })).toEqual(before);
      expect(await auditActions(t.operator)).toEqual(audit);
    });

    it("answers 404 for another organization's account, and for an unknown one", async () => {
      const t = await onboard(stack, 'Subscription Owner Org');
      const other = await signupAndLogin(stack, 'Subscription Stranger Org');
      for (const wabaId of [t.account.wabaId, '999999999999999']) {
        const res = await stack.http.post(`/business-accounts/${wabaId}/subscription`).set('cookie', other.cookie);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ statusCode: 404, message: 'Business account not found' });
      }
      expect((await stack.http.post(`/business-accounts/${t.account.wabaId}/subscription`)).status).toBe(401);
    });
  });

  describe('credential health', () => {
    it('a check that Meta rejects marks the token invalid; sends answer 424 before any upstream call until the token is replaced', async () => {
      const t = await onboard(stack, 'Rejected Token Org');
      // A first send fills the API process's send-context cache for this account.
      expect((await send(t)).status).toBe(200);
      // The system-user token is regenerated in Meta's tools: the stored one is rejected from now on (190).
      const newToken = stack.sim.rotateToken(t.account.wabaId);

      const check = await stack.http
        .post(`/business-accounts/${t.account.wabaId}/credentials/check`)
        .set('cookie', t.operator.cookie);
      expect(check.status).toBe(200);
      expect(check.body.data).toMatchObject({
        credentialsValid: false,
        credentialsCheckedAt: expect.stringMatching(ISO_MS),
      });
      expect(check.body.data.credentialsError).toMatch(/session has been invalidated.*\(190\)$/);
      expect((await account(t.operator, t.account.wabaId)).body.data).toMatchObject({
        credentialsValid: false,
        credentialsError: check.body.data.credentialsError,
      });
      expect(await auditActions(t.operator)).toContain('business_account.credentials_checked');

      // The change reaches the send-context cache through NOTIFY within milliseconds (its TTL is 5 s).
      await new Promise((r) => setTimeout(r, 300));
      const to = recipient();
      const refused = await send(t, to);
      expect(refused.status).toBe(424);
      expect(refused.body).toEqual({
        statusCode: 424,
        message: expect.stringContaining('session has been invalidated'),
      });
      expect(refused.body.message).toMatch(/reconnect it with a new token/);
      expect(stack.sim.sends({ to })).toEqual([]);
      expect(await countRows(stack.db, 'messages', { to })).toBe(0);

      // Replacing the token re-validates it; sends use the new token once the key lookup sees it (API_KEY_CACHE_TTL_MS).
      const replaced = await stack.http
        .put(`/business-accounts/${t.account.wabaId}/access-token`)
        .set('cookie', t.operator.cookie)
        .send({ accessToken: newToken });
      expect(replaced.status).toBe(200);
      expect(replaced.body.data).toMatchObject({ credentialsValid: true, credentialsError: null });
      await new Promise((r) => setTimeout(r, stack.config.apiKeyCacheTtlMs + 100));
      const after = recipient();
      const accepted = await send(t, after);
      expect(accepted.status).toBe(200);
      expect(accepted.body.data).toMatchObject({ status: 'sent', to: after });
      expect(stack.sim.sends({ to: after }).map((s) => s.response.status)).toEqual([200]);
    });

    it('a check Meta accepts keeps (or makes) the token valid; no verdict when Meta is unavailable', async () => {
      const t = await onboard(stack, 'Accepted Token Org');
      const first = await stack.http
        .post(`/business-accounts/${t.account.wabaId}/credentials/check`)
        .set('cookie', t.operator.cookie);
      expect(first.status).toBe(200);
      expect(first.body.data).toMatchObject({ credentialsValid: true, credentialsError: null });

      // A send answered 190 marked it rejected; a later check finds Meta accepting the token again.
      expect((await send(t, '15550000008')).status).toBe(424);
      expect((await account(t.operator, t.account.wabaId)).body.data).toMatchObject({
        credentialsValid: false,
        credentialsError: expect.stringContaining('Session has expired'),
      });
      const again = await stack.http
        .post(`/business-accounts/${t.account.wabaId}/credentials/check`)
        .set('cookie', t.operator.cookie);
      expect(again.body.data).toMatchObject({ credentialsValid: true, credentialsError: null });
      expect(Date.parse(again.body.data.credentialsCheckedAt)).toBeGreaterThan(
        Date.parse(first.body.data.credentialsCheckedAt),
      );

      // The same service with nothing listening at its upstream address: no verdict, 502, nothing recorded.
      const before = await accountRow(stack.db, { wabaId: t.account.wabaId });
      const down = await startTestApp({
        UPSTREAM_BASE_URL: `http://127.0.0.1:${await freePort()}/v25.0`,
        ENCRYPTION_KEY: stack.config.encryptionKeys[0]!.key.toString('hex'),
      });
      try {
        const res = await down.http
          .post(`/business-accounts/${t.account.wabaId}/credentials/check`)
          .set('cookie', t.operator.cookie);
        expect(res.status).toBe(502);
        expect(res.body).toEqual({
          statusCode: 502,
          message: expect.stringMatching(/^Upstream platform unavailable: credential check: Network error/),
        });
      } finally {
        await down.close();
      }
      expect(await accountRow(stack.db, { wabaId: t.account.wabaId })).toEqual(before);
    });

    it("answers 404 for another organization's account and changes nothing", async () => {
      const t = await onboard(stack, 'Check Owner Org');
      const other = await signupAndLogin(stack, 'Check Stranger Org');
      const before = await accountRow(stack.db, { wabaId: t.account.wabaId });
      const res = await stack.http
        .post(`/business-accounts/${t.account.wabaId}/credentials/check`)
        .set('cookie', other.cookie);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: 'Business account not found' });
      expect(await accountRow(stack.db, { wabaId: t.account.wabaId })).toEqual(before);
    });
  });

  describe('the scheduled check in the worker', () => {
    let scheduled: Stack;

    beforeAll(async () => {
      scheduled = await startStack({ worker: true, env: { CREDENTIAL_CHECK_INTERVAL_SECONDS: '1' } });
    });
    afterAll(async () => {
      await scheduled?.close();
    });

    it("marks a token Meta rejects as invalid on its own, and the account's sends are refused before any upstream call", async () => {
      const rejected = await onboard(scheduled, 'Scheduled Rejected Org');
      const healthy = await onboard(scheduled, 'Scheduled Healthy Org');
      const healthyCheckedAt = (await accountRow(scheduled.db, { wabaId: healthy.account.wabaId }))
        .credentialsCheckedAt!;
      scheduled.sim.rotateToken(rejected.account.wabaId);

      const marked = await eventually(
        async () => {
          const row = await accountRow(scheduled.db, { wabaId: rejected.account.wabaId });
          return row.credentialsValid ? null : row;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(marked).toMatchObject({ credentialsValid: false, credentialsError: expect.stringContaining('(190)') });

      // The healthy account was checked too (its check time moved on) and stays valid.
      const rechecked = await eventually(
        async () => {
          const row = await accountRow(scheduled.db, { wabaId: healthy.account.wabaId });
          return row.credentialsCheckedAt! > healthyCheckedAt ? row : null;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(rechecked).toMatchObject({ credentialsValid: true, credentialsError: null });

      const to = recipient();
      const res = await scheduled.http.post('/messages').set(rejected.key.headers).send(helloWorld(rejected, to));
      expect(res.status).toBe(424);
      expect(res.body.message).toContain('(190)');
      expect(scheduled.sim.sends({ to })).toEqual([]);
      expect(
        (await scheduled.http.post('/messages').set(healthy.key.headers).send(helloWorld(healthy, recipient()))).status,
      ).toBe(200);
    });
  });
});
