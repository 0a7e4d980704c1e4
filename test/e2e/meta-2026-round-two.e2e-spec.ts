import { jest } from '@jest/globals';
import {
  connectAccount,
  createKey,
  helloWorld,
  onboard,
  recipient,
  signupAndLogin,
  simControl,
  syncAll,
  type OnboardedTenant,
  type Tenant,
} from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';
import { waitFor } from '../utils/webhooks.js';

jest.setTimeout(180_000);

/**
 * Issue 28 end to end, against the real API and worker and the simulator speaking Meta's format: sends to
 * business-scoped user ids, marketing stops, the Marketing Messages API and blocked users.
 */
describe('Meta 2026, second round: user ids, marketing stops, the Marketing Messages API, blocked users', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ worker: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const control = (path: string, body: unknown) => simControl(stack, path, body);
  const send = (t: Tenant, body: Record<string, unknown>) => stack.http.post('/messages').set(t.key.headers).send(body);
  const consoleGet = (t: Tenant, path: string) =>
    stack.http.get(`/business-accounts/${t.account.wabaId}${path}`).set('cookie', t.operator.cookie);
  const blockedUsers = (t: Tenant, phoneNumberId = t.account.phoneNumberId) =>
    `/business-accounts/${t.account.wabaId}/phone-numbers/${phoneNumberId}/blocked-users`;
  const sendsTo = (who: string) => stack.sim.sends({ to: who });
  const inbound = (t: Tenant, who: { from?: string; userId?: string }) =>
    control('inbound', { wabaId: t.account.wabaId, phoneNumberId: t.account.phoneNumberId, text: 'Hi', ...who });
  const userId = () => `US.${String(Date.now())}${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}`;
  const template = (t: Tenant, name: string, language: string, extra: Record<string, unknown>) => ({
    phoneNumberId: t.account.phoneNumberId,
    type: 'template',
    templateName: name,
    templateLanguage: language,
    ...extra,
  });
  const weeklyDeals = (t: Tenant, extra: Record<string, unknown>) => template(t, 'weekly_deals', 'en_US', extra);
  const loginCode = (t: Tenant, extra: Record<string, unknown>) =>
    template(t, 'login_code', 'en_US', {
      components: [
        { type: 'body', parameters: [{ type: 'text', text: '123456' }] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '123456' }] },
      ],
      ...extra,
    });
  const messageIn = (t: Tenant, id: number, status: string) =>
    waitFor(async () => {
      const res = await stack.http.get(`/messages/${id}`).set(t.key.headers);
      return res.body.data?.status === status ? res.body.data : undefined;
    }, `message ${id} ${status}`);
  /** The account's latest marketing preference of `user`, once the worker has stored `value`. */
  const preferenceOf = (t: Tenant, user: string, value: string) =>
    waitFor(async () => {
      const res = await consoleGet(t, `/marketing-preferences?user=${encodeURIComponent(user)}`);
      const item = res.body.data?.items?.[0];
      return item?.value === value ? item : undefined;
    }, `${user}'s marketing preference ${value}`);

  describe('sending to a business-scoped user id (userId)', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'BSUID Sends Org');
    });

    it("sends a template with Meta's recipient (no to), stores userId, and moves it on the statuses Meta reports with recipient_user_id", async () => {
      const user = userId();
      const res = await send(t, template(t, 'hello_world', 'en_US', { userId: user }));
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ to: null, userId: user, upstreamApi: 'cloud_api', status: 'sent' });
      const [recorded] = sendsTo(user);
      expect(recorded!.body).toMatchObject({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        recipient: user,
      });
      expect(recorded!.body).not.toHaveProperty('to');
      expect(recorded!.response.body).toMatchObject({ contacts: [{ input: user, user_id: user }] });
      expect(await messageIn(t, res.body.data.id, 'read')).toMatchObject({ userId: user, to: null });
      const events = await stack.http
        .get('/webhooks/events')
        .set('cookie', t.operator.cookie)
        .query({ wabaId: t.account.wabaId, userId: user, kind: 'status_update' });
      expect(events.body.data.items.length).toBeGreaterThanOrEqual(1);
      expect(events.body.data.items[0]).toMatchObject({
        recipient: null,
        userId: user,
        messageId: res.body.data.upstreamMessageId,
      });
      const listed = await stack.http.get('/messages').set(t.key.headers).query({ userId: user });
      expect(listed.body.data.items.map((m: { id: number }) => m.id)).toEqual([res.body.data.id]);
    });

    it('refuses, naming the field, neither to nor userId, both, a malformed userId, and a user id put into to (which Meta would silently drop)', async () => {
      const base = template(t, 'hello_world', 'en_US', {});
      const cases: [Record<string, unknown>, string, RegExp][] = [
        [base, 'to', /to \(or userId\) is required/],
        [{ ...base, to: recipient(), userId: 'US.13491208655302741918' }, 'userId', /either to or userId, not both/],
        [{ ...base, userId: 'not-a-user-id' }, 'userId', /business-scoped user id/],
        [{ ...base, userId: 'US.ENT.' + 'x'.repeat(129) }, 'userId', /business-scoped user id/],
        [
          { ...base, to: 'US.13491208655302741918' },
          'to',
          /business-scoped user id, not a phone number: send it as userId/,
        ],
      ];
      for (const [body, field, message] of cases) {
        const res = await send(t, body);
        expect(res.status).toBe(422);
        expect(res.body).toMatchObject({ statusCode: 422, message: 'Field Validation Failed' });
        expect(res.body.errors).toEqual([{ field, message: expect.stringMatching(message) }]);
      }
      expect(sendsTo('US.13491208655302741918')).toHaveLength(0);
      // The parent (portfolio) form is accepted.
      expect((await send(t, { ...base, userId: 'BR.ENT.5502576394655843' })).status).toBe(200);
    });

    it('tracks the 24 h window per user id: a text to a user id that never wrote is refused before Meta; once it writes, the reply goes', async () => {
      const user = userId();
      const text = {
        phoneNumberId: t.account.phoneNumberId,
        userId: user,
        type: 'text',
        text: { body: 'Thanks for writing' },
      };
      const refused = await send(t, text);
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([{ field: 'userId', message: expect.stringMatching(/window is closed/) }]);
      expect(sendsTo(user)).toHaveLength(0);
      await inbound(t, { userId: user });
      const sent = await waitFor(async () => {
        const res = await send(t, text);
        return res.status === 200 ? res : undefined;
      }, 'the reply inside the window the inbound message opened');
      expect(sent.body.data).toMatchObject({ userId: user, type: 'text' });
      expect(sendsTo(user)[0]!.body).toMatchObject({ recipient: user, type: 'text' });
    });

    it('refuses one-tap, zero-tap and copy-code authentication templates to a user id (naming the template); the phone number still gets them', async () => {
      const refused = await send(t, loginCode(t, { userId: userId() }));
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([
        {
          field: 'templateName',
          message: expect.stringMatching(/copy-code authentication template.*business-scoped user id/),
        },
      ]);
      const to = recipient();
      expect((await send(t, loginCode(t, { to }))).status).toBe(200);
    });
  });

  describe('marketing stops (user_preferences)', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Marketing Stops Org');
    });

    it('refuses MARKETING templates to a user who stopped them (nothing sent), still sends utility templates, and sends again after resume', async () => {
      const to = recipient();
      await control('user-preferences', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        waId: to,
        value: 'stop',
      });
      const stop = await preferenceOf(t, to, 'stop');
      expect(stop).toMatchObject({ source: 'user_preferences', detail: 'User requested to stop marketing messages' });
      const events = await stack.http
        .get('/webhooks/events')
        .set('cookie', t.operator.cookie)
        .query({ wabaId: t.account.wabaId, recipient: to });
      expect(events.body.data.items[0]).toMatchObject({
        kind: 'account_update',
        eventType: 'user_preferences',
        recipient: to,
        title: `Marketing messages: stop (${to})`,
        processed: true,
      });

      const refused = await send(t, weeklyDeals(t, { to }));
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([
        { field: 'to', message: expect.stringMatching(/stopped marketing messages/) },
      ]);
      expect(sendsTo(to)).toHaveLength(0);
      expect((await send(t, helloWorld(t, to))).status).toBe(200); // utility still goes

      await control('user-preferences', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        waId: to,
        value: 'resume',
      });
      await preferenceOf(t, to, 'resume');
      const again = await send(t, weeklyDeals(t, { to }));
      expect(again.status).toBe(200);
      expect(await messageIn(t, again.body.data.id, 'read')).toMatchObject({ templateName: 'weekly_deals' });
    });

    it('applies a stop named by user id to sends to that userId', async () => {
      const user = userId();
      await control('user-preferences', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        userId: user,
        value: 'stop',
      });
      await preferenceOf(t, user, 'stop');
      const refused = await send(t, weeklyDeals(t, { userId: user }));
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([
        { field: 'userId', message: expect.stringMatching(/stopped marketing messages/) },
      ]);
    });

    it("records the stop from Meta's own 131050 failure, so the next marketing template is refused before Meta", async () => {
      const to = recipient();
      // Meta knows the stop, the service not yet (no webhook): the send is accepted, then fails with 131050.
      await control('user-preferences', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        waId: to,
        value: 'stop',
        webhook: false,
      });
      const first = await send(t, weeklyDeals(t, { to }));
      expect(first.status).toBe(200);
      const failed = await messageIn(t, first.body.data.id, 'failed');
      expect(failed.error).toMatchObject({ code: 131050 });
      expect(await preferenceOf(t, to, 'stop')).toMatchObject({ source: 'error_131050' });
      const refused = await send(t, weeklyDeals(t, { to }));
      expect(refused.status).toBe(422);
      expect(sendsTo(to)).toHaveLength(1);
    });

    it('keeps preferences per business account and shows them only to their organization', async () => {
      const other = await onboard(stack, 'Other Marketing Org');
      const list = await consoleGet(other, '/marketing-preferences');
      expect(list.status).toBe(200);
      expect(list.body.data).toMatchObject({ items: [], total: 0, page: 1 });
      const foreign = await stack.http
        .get(`/business-accounts/${t.account.wabaId}/marketing-preferences`)
        .set('cookie', other.operator.cookie);
      expect(foreign.status).toBe(404);
      const bad = await consoleGet(t, '/marketing-preferences?value=maybe');
      expect(bad.status).toBe(422);
      expect(bad.body.errors).toEqual([{ field: 'value', message: 'value must be stop or resume' }]);
    });
  });

  describe('the Marketing Messages API', () => {
    it('sends MARKETING templates of an onboarded account to /marketing_messages (MM_LITE_TERMS_SIGNED), other categories to /messages, and records which', async () => {
      const t = await onboard(stack, 'MM Org');
      const before = await send(t, weeklyDeals(t, { to: recipient() }));
      expect(before.body.data).toMatchObject({ upstreamApi: 'cloud_api' });
      expect((await consoleGet(t, '')).body.data.marketingMessages).toEqual({
        onboarded: false,
        status: null,
        updatedAt: null,
      });

      await control('marketing-messages', { wabaId: t.account.wabaId, status: 'ONBOARDED' });
      const view = await waitFor(async () => {
        const res = await consoleGet(t, '');
        return res.body.data?.marketingMessages?.onboarded ? res.body.data : undefined;
      }, 'the account onboarded by the webhook');
      expect(view.marketingMessages).toMatchObject({ status: 'ONBOARDED', updatedAt: expect.any(String) });

      const to = recipient();
      const marketing = await waitFor(async () => {
        const res = await send(t, weeklyDeals(t, { to }));
        return res.body.data?.upstreamApi === 'marketing_messages' ? res : undefined;
      }, 'a marketing template through the Marketing Messages API');
      expect(marketing.status).toBe(200);
      expect(sendsTo(to).map((s) => s.edge)).toEqual(['marketing_messages']);
      expect((await stack.http.get(`/messages/${marketing.body.data.id}`).set(t.key.headers)).body.data).toMatchObject({
        upstreamApi: 'marketing_messages',
      });
      expect(await messageIn(t, marketing.body.data.id, 'read')).toBeTruthy();

      const utilityTo = recipient();
      const utility = await send(t, helloWorld(t, utilityTo));
      expect(utility.body.data).toMatchObject({ upstreamApi: 'cloud_api' });
      expect(sendsTo(utilityTo).map((s) => s.edge)).toEqual(['messages']);
    });

    it('reads the onboarding status at connect and in the credential check, and records an error of the marketing endpoint like any upstream error', async () => {
      const operator = await signupAndLogin(stack, 'MM Connect Org');
      const sim = stack.sim.createAccount();
      await control('marketing-messages', { wabaId: sim.wabaId, status: 'ONBOARDED', webhook: false });
      const connected = await stack.http
        .post('/business-accounts')
        .set('cookie', operator.cookie)
        .send({ wabaId: sim.wabaId, accessToken: sim.accessToken });
      expect(connected.status).toBe(201);
      expect(connected.body.data.marketingMessages).toMatchObject({ onboarded: true, status: 'ONBOARDED' });
      await syncAll(stack, operator, sim.wabaId);
      const key = await createKey(stack, operator, sim.wabaId);
      const account = {
        wabaId: sim.wabaId,
        businessAccountId: connected.body.data.id,
        accessToken: sim.accessToken,
        phoneNumberId: sim.phoneNumbers.find((p) => p.status === 'CONNECTED')!.id,
        sim,
      };
      const t: OnboardedTenant = { operator, key, account };

      // Meta no longer lets the business use the API; the service learns it only at the next check.
      await control('marketing-messages', { wabaId: sim.wabaId, status: 'INELIGIBLE_RESTRICTED', webhook: false });
      const rejected = await send(t, weeklyDeals(t, { to: recipient() }));
      expect(rejected.status).toBe(422);
      expect(rejected.body.data).toMatchObject({
        status: 'failed',
        upstreamApi: 'marketing_messages',
        error: { code: 131055 },
      });

      const checked = await stack.http
        .post(`/business-accounts/${sim.wabaId}/credentials/check`)
        .set('cookie', operator.cookie);
      expect(checked.body.data.marketingMessages).toMatchObject({ onboarded: false, status: 'INELIGIBLE_RESTRICTED' });
      const after = await waitFor(async () => {
        const res = await send(t, weeklyDeals(t, { to: recipient() }));
        return res.body.data?.upstreamApi === 'cloud_api' ? res : undefined;
      }, 'marketing templates back on the Cloud API');
      expect(after.status).toBe(200);
    });
  });

  describe('blocked users', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Blocking Org');
    });

    it('refuses an empty or malformed list naming users, and answers Meta’s refusal (only users who wrote in the last 24 h) naming the user', async () => {
      const empty = await stack.http.post(blockedUsers(t)).set('cookie', t.operator.cookie).send({ users: [] });
      expect(empty.status).toBe(422);
      expect(empty.body.errors).toEqual([{ field: 'users', message: 'users must list at least one user' }]);
      const malformed = await stack.http
        .post(blockedUsers(t))
        .set('cookie', t.operator.cookie)
        .send({ users: ['+44 7700'] });
      expect(malformed.status).toBe(422);
      expect(malformed.body.errors[0].field).toBe('users');
      const stranger = recipient();
      const refused = await stack.http
        .post(blockedUsers(t))
        .set('cookie', t.operator.cookie)
        .send({ users: [stranger] });
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([
        { field: 'users.0', message: expect.stringMatching(/last 24 hours.*\(139100\)/) },
      ]);
      expect((await stack.http.get(blockedUsers(t)).set('cookie', t.operator.cookie)).body.data.total).toBe(0);
    });

    it('blocks a user who wrote (Meta first), refuses sends to them before Meta, audit-logs, lists, and unblocks', async () => {
      const to = recipient();
      const stranger = recipient();
      await inbound(t, { from: to });
      const blocked = await waitFor(async () => {
        const res = await stack.http
          .post(blockedUsers(t))
          .set('cookie', t.operator.cookie)
          .send({ users: [to, stranger] });
        return res.status === 200 ? res : undefined;
      }, 'the block once the simulator saw the inbound message');
      expect(blocked.body.data.blocked).toEqual([
        expect.objectContaining({
          user: to,
          waId: to,
          phoneNumberId: t.account.phoneNumberId,
          blockedById: t.operator.operatorId,
        }),
      ]);
      expect(blocked.body.data.failed).toEqual([
        { user: stranger, code: 139100, message: expect.stringMatching(/last 24 hours/) },
      ]);

      const list = await stack.http.get(blockedUsers(t)).set('cookie', t.operator.cookie);
      expect(list.body.data).toMatchObject({ total: 1, items: [{ user: to, waId: to }] });

      const refused = await send(t, helloWorld(t, to));
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([{ field: 'to', message: expect.stringMatching(/blocked on phone number/) }]);
      expect(sendsTo(to)).toHaveLength(0);

      const audit = await stack.http.get('/audit-log').set('cookie', t.operator.cookie);
      expect(audit.body.data.items.map((e: { action: string }) => e.action)).toContain('blocked_users.blocked');

      const unblocked = await stack.http.delete(`${blockedUsers(t)}/${to}`).set('cookie', t.operator.cookie);
      expect(unblocked.status).toBe(200);
      expect(unblocked.body.data).toEqual({ user: to, unblocked: true });
      expect((await send(t, helloWorld(t, to))).status).toBe(200);
      expect((await stack.http.delete(`${blockedUsers(t)}/${to}`).set('cookie', t.operator.cookie)).status).toBe(404);
      const bad = await stack.http.delete(`${blockedUsers(t)}/not-a-user`).set('cookie', t.operator.cookie);
      expect(bad.status).toBe(422);
      expect(bad.body.errors[0].field).toBe('user');
    });

    it('blocks a user known only by user id and refuses sends to that userId', async () => {
      const user = userId();
      await inbound(t, { userId: user });
      const blocked = await waitFor(async () => {
        const res = await stack.http
          .post(blockedUsers(t))
          .set('cookie', t.operator.cookie)
          .send({ users: [user] });
        return res.status === 200 ? res : undefined;
      }, 'the block of a user id');
      expect(blocked.body.data.blocked[0]).toMatchObject({ user });
      const refused = await send(t, template(t, 'hello_world', 'en_US', { userId: user }));
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([{ field: 'userId', message: expect.stringMatching(/blocked/) }]);
    });

    it("answers 404 for another organization's account, and for a number that is not the account's", async () => {
      const other = await signupAndLogin(stack, 'Not The Owner Org');
      await connectAccount(stack, other);
      for (const req of [
        stack.http
          .post(blockedUsers(t))
          .set('cookie', other.cookie)
          .send({ users: [recipient()] }),
        stack.http.get(blockedUsers(t)).set('cookie', other.cookie),
        stack.http.delete(`${blockedUsers(t)}/${recipient()}`).set('cookie', other.cookie),
      ]) {
        expect((await req).status).toBe(404);
      }
      for (const req of [
        stack.http
          .post(blockedUsers(t, '402999999999999'))
          .set('cookie', t.operator.cookie)
          .send({ users: [recipient()] }),
        stack.http.get(blockedUsers(t, '402999999999999')).set('cookie', t.operator.cookie),
        stack.http.delete(`${blockedUsers(t, '402999999999999')}/${recipient()}`).set('cookie', t.operator.cookie),
      ]) {
        const res = await req;
        expect([res.status, res.body.message]).toEqual([404, 'Phone number not found']);
      }
    });
  });
});
