import { jest } from '@jest/globals';
import { userIdFor } from '../../simulator/payloads/webhooks.js';
import { helloWorld, onboard, recipient, simControl, type Tenant } from '../utils/factories.js';
import { countMessages, deliveriesOf } from '../utils/messaging-rows.js';
import { startStack, type Stack } from '../utils/stack.js';
import { waitFor } from '../utils/webhooks.js';

jest.setTimeout(180_000);

/**
 * Issue 14 parts 2–4 end to end: the simulator posts each webhook in Meta's shape (signed), the real receiver
 * stores it, the real worker classifies and applies it; the test reads the stored event (its kind) and the
 * effect through the console and key-pair APIs. The simulator's automatic status webhooks are off: every
 * status here is posted explicitly.
 */
describe("Meta fidelity 2026: user ids, pricing, quality, limits and account health (Meta's payloads through the simulator)", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ worker: true, sim: { webhooksEnabled: false } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const control = (path: string, body: unknown) => simControl(stack, path, body);
  const events = (t: Tenant, query: Record<string, string | number>) =>
    stack.http
      .get('/webhooks/events')
      .set('cookie', t.operator.cookie)
      .query({ wabaId: t.account.wabaId, ...query });
  const console = (t: Tenant, path: string) =>
    stack.http.get(`/business-accounts/${t.account.wabaId}${path}`).set('cookie', t.operator.cookie);
  const send = (t: Tenant, body: Record<string, unknown>) => stack.http.post('/messages').set(t.key.headers).send(body);

  /** The one processed event of this field (the account's only one), as listed. */
  async function processedEvent(t: Tenant, eventType: string, n = 1): Promise<Record<string, unknown>> {
    return waitFor(async () => {
      const res = await events(t, { limit: 100 });
      const mine = (res.body.data?.items ?? []).filter(
        (e: { eventType: string; processed: boolean }) => e.eventType === eventType && e.processed,
      );
      return mine.length >= n ? mine[0] : undefined;
    }, `a processed ${eventType} event`);
  }

  /** One signed status webhook from the simulator carrying these statuses (Meta's shape). */
  const postStatuses = (t: Tenant, statuses: Record<string, unknown>[]) =>
    control('statuses', { wabaId: t.account.wabaId, phoneNumberId: t.account.phoneNumberId, statuses });

  /** The message as GET /messages/:id shows it, once it has reached `status`. */
  const messageIn = (t: Tenant, id: number, status: string) =>
    waitFor(async () => {
      const res = await stack.http.get(`/messages/${id}`).set(t.key.headers);
      return res.body.data?.status === status ? res.body.data : undefined;
    }, `message ${id} ${status}`);

  async function sentMessage(
    t: Tenant,
    to = recipient(),
  ): Promise<{ id: number; upstreamMessageId: string; to: string }> {
    const res = await send(t, helloWorld(t, to));
    expect(res.status).toBe(200);
    return res.body.data;
  }

  describe('business-scoped user ids', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'BSUID Org');
    });

    it('moves a message forward on a status that carries only recipient_user_id (no recipient_id), listed with recipient null and userId', async () => {
      const message = await sentMessage(t);
      const userId = 'US.13491208655302741918';
      await postStatuses(t, [{ id: message.upstreamMessageId, status: 'delivered', recipient_user_id: userId }]);
      const moved = await messageIn(t, message.id, 'delivered');
      expect(moved.deliveredAt).not.toBeNull();

      const listed = await events(t, { messageId: message.upstreamMessageId });
      expect(listed.body.data.items).toHaveLength(1);
      expect(listed.body.data.items[0]).toMatchObject({
        kind: 'status_update',
        status: 'delivered',
        recipient: null,
        userId,
        processed: true,
      });
      expect(listed.body.data.items[0].raw).toMatchObject({ recipient_user_id: userId });
      expect(listed.body.data.items[0].raw).not.toHaveProperty('recipient_id');
      const delivery = await deliveriesOf(stack, t.account.wabaId);
      expect(delivery.every((d) => d.status === 'processed')).toBe(true);
    });

    it('stores an inbound message with only a user id (no from, no wa_id): recipient null, userId set, filterable in pages and in the feed', async () => {
      const userId = 'BR.1502576394655843';
      const posted = await control('inbound', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        userId,
        text: 'Olá, tudo bem?',
        name: 'Ana',
      });
      const inbound = await waitFor(async () => {
        const res = await events(t, { userId });
        return res.body.data?.total === 1 && res.body.data.items[0].processed ? res.body.data.items[0] : undefined;
      }, 'the inbound event, filtered by userId');
      expect(inbound).toMatchObject({
        kind: 'inbound_message',
        eventType: 'messages',
        recipient: null,
        userId,
        messageId: posted.wamid,
        title: 'Inbound text from BR.1502576394655843',
      });
      expect(inbound.raw).not.toHaveProperty('from');
      expect(inbound.raw).toMatchObject({ from_user_id: userId, contact: { user_id: userId } });

      // The feed shows only what is below its horizon: another test file's open transaction may hold it back a moment.
      const feed = await waitFor(async () => {
        const res = await events(t, { after: '0', userId });
        expect(res.status).toBe(200);
        return res.body.data.items.length > 0 ? res.body.data : undefined;
      }, 'the inbound event in the feed, filtered by userId');
      expect(feed.items.map((e: { id: number }) => e.id)).toEqual([inbound.id]);
      const page = await events(t, { userId: 'US.0000000000000000000' });
      expect(page.body.data).toMatchObject({ total: 0, items: [] });
      const feedNone = await events(t, { after: '0', userId: 'US.0000000000000000000' });
      expect(feedNone.body.data.items).toEqual([]);
      // Nothing failed or was dead-lettered for want of a phone number.
      const deliveries = await deliveriesOf(stack, t.account.wabaId);
      expect(deliveries.map((d) => d.status)).not.toContain('failed');
    });

    it('refuses a malformed userId filter with 422 naming the field', async () => {
      const res = await events(t, { userId: 'x'.repeat(161) });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ field: 'userId', message: 'userId must be at most 160 characters' }]);
    });
  });

  describe('pricing', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Pricing Org');
    });

    it('keeps the pricing object on the event and on the message, and counts messages per category and type, per day', async () => {
      const [marketing, utility, service, unpriced] = await Promise.all([
        sentMessage(t),
        sentMessage(t),
        sentMessage(t),
        sentMessage(t),
      ]);
      const pricing = (category: string, type: string, billable: boolean) => ({
        billable,
        pricing_model: 'PMP',
        type,
        category,
      });
      await postStatuses(t, [
        {
          id: marketing.upstreamMessageId,
          status: 'sent',
          recipient_id: marketing.to,
          pricing: pricing('marketing', 'regular', true),
        },
        {
          id: marketing.upstreamMessageId,
          status: 'delivered',
          recipient_id: marketing.to,
          pricing: pricing('marketing', 'regular', true),
        },
        {
          id: utility.upstreamMessageId,
          status: 'delivered',
          recipient_id: utility.to,
          pricing: pricing('utility', 'regular', true),
        },
        {
          id: service.upstreamMessageId,
          status: 'read',
          recipient_id: service.to,
          pricing: pricing('service', 'free_customer_service', false),
        },
        { id: unpriced.upstreamMessageId, status: 'delivered', recipient_id: unpriced.to },
      ]);
      await waitFor(async () => {
        const res = await events(t, { kind: 'status_update' });
        return res.body.data?.total === 5 && res.body.data.items.every((e: { processed: boolean }) => e.processed)
          ? true
          : undefined;
      }, 'five processed statuses');

      const event = (await events(t, { messageId: utility.upstreamMessageId })).body.data.items[0];
      // camelCase like every other field (issue 43); Meta's pricing_model kept beside it for existing clients.
      expect(event.pricing).toEqual({
        pricingModel: 'PMP',
        pricing_model: 'PMP',
        category: 'utility',
        type: 'regular',
        billable: true,
      });
      expect((await events(t, { messageId: unpriced.upstreamMessageId })).body.data.items[0].pricing).toBeNull();
      const detail = await stack.http.get(`/messages/${service.id}`).set(t.key.headers);
      expect(detail.body.data.pricing).toEqual({
        pricingModel: 'PMP',
        category: 'service',
        type: 'free_customer_service',
        billable: false,
      });
      expect((await stack.http.get(`/messages/${unpriced.id}`).set(t.key.headers)).body.data.pricing).toBeNull();

      const res = await stack.http.get('/messages/analytics').set(t.key.headers);
      expect(res.status).toBe(200);
      const none = {
        marketing: 0,
        utility: 0,
        authentication: 0,
        authentication_international: 0,
        service: 0,
        marketing_lite: 0,
        referral_conversion: 0,
        group_marketing: 0,
        group_utility: 0,
        group_service: 0,
        general_purpose_ai: 0,
      };
      const expected = {
        byCategory: { ...none, marketing: 1, utility: 1, service: 1 },
        byType: { regular: 2, free_customer_service: 1, free_entry_point: 0 },
        billable: 2,
        billableByCategory: { ...none, marketing: 1, utility: 1 },
      };
      expect(res.body.data.pricing).toEqual(expected);
      const today = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString();
      const buckets = res.body.data.series as Array<{ bucket: string; pricing: unknown }>;
      expect(buckets.find((b) => b.bucket === today)?.pricing).toEqual(expected);
      const earlier = buckets.filter((b) => b.bucket !== today);
      expect(earlier.length).toBeGreaterThan(0);
      for (const b of earlier)
        expect(b.pricing).toEqual({
          byCategory: none,
          byType: { regular: 0, free_customer_service: 0, free_entry_point: 0 },
          billable: 0,
          billableByCategory: none,
        });
    });
  });

  describe('phone numbers: quality, limit and name', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Quality Org');
    });
    const number = async () =>
      ((await console(t, '/phone-numbers')).body.data.items as Array<Record<string, unknown>>).find(
        (n) => n.phoneNumberId === t.account.phoneNumberId,
      )!;

    it('applies phone_number_quality_update FLAGGED (status, RED rating, limit) and refuses sends from the number with 424 before any upstream call', async () => {
      await control('phone-number-quality', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        event: 'FLAGGED',
        limit: 'TIER_2K',
      });
      const event = await processedEvent(t, 'phone_number_quality_update');
      expect(event).toMatchObject({
        kind: 'account_update',
        title: expect.stringMatching(/^Phone number quality update: FLAGGED \(\d+\), limit TIER_2K$/),
      });
      expect(event.raw).toMatchObject({
        event: 'FLAGGED',
        current_limit: 'TIER_2K',
        max_daily_conversations_per_business: 'TIER_2K',
      });
      expect(await number()).toMatchObject({
        status: 'FLAGGED',
        qualityRating: 'RED',
        messagingLimit: 'TIER_2K',
        qualityUpdatedAt: expect.any(String),
      });

      const to = recipient();
      const refused = await send(t, helloWorld(t, to));
      expect(refused.status).toBe(424);
      expect(refused.body.message).toMatch(/FLAGGED/);
      expect(refused.body.errors).toEqual([{ field: 'phoneNumberId', message: 'phone number status is FLAGGED' }]);
      expect(stack.sim.sends({ to })).toEqual([]);
      expect(await countMessages(stack, { to })).toBe(0);
    });

    it('lets the number send again once Meta unflags it, and keeps the newest limit', async () => {
      await control('phone-number-quality', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        event: 'UNFLAGGED',
      });
      await control('phone-number-quality', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        event: 'UPGRADE',
        oldLimit: 'TIER_2K',
        limit: 'TIER_10K',
      });
      await processedEvent(t, 'phone_number_quality_update', 3);
      await waitFor(async () => ((await number()).messagingLimit === 'TIER_10K' ? true : undefined), 'the new limit');
      expect(await number()).toMatchObject({ status: 'CONNECTED', messagingLimit: 'TIER_10K' });
      const to = recipient();
      expect((await send(t, helloWorld(t, to))).status).toBe(200);
      expect(stack.sim.sends({ to })).toHaveLength(1);
    });

    it('applies phone_number_name_update: the approved name and name status', async () => {
      await control('phone-number-name', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        decision: 'APPROVED',
        requestedVerifiedName: 'Quality Parcels',
      });
      const event = await processedEvent(t, 'phone_number_name_update');
      expect(event).toMatchObject({ kind: 'account_update', title: expect.stringContaining('APPROVED') });
      expect(await number()).toMatchObject({ nameStatus: 'APPROVED', verifiedName: 'Quality Parcels' });
    });
  });

  describe('templates: quality score and category', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Template Health Org');
    });
    const template = async () =>
      ((await console(t, '/templates')).body.data.items as Array<Record<string, unknown>>).find(
        (x) => x.name === 'hello_world' && x.language === 'en_US',
      )!;

    it('applies message_template_quality_update (qualityScore) and template_category_update (category) as template_status events', async () => {
      expect(await template()).toMatchObject({ qualityScore: null, category: 'UTILITY' });
      await control('template-quality', {
        wabaId: t.account.wabaId,
        templateName: 'hello_world',
        language: 'en_US',
        previousQualityScore: 'GREEN',
        newQualityScore: 'YELLOW',
      });
      await control('template-category', {
        wabaId: t.account.wabaId,
        templateName: 'hello_world',
        language: 'en_US',
        newCategory: 'MARKETING',
      });
      const quality = await processedEvent(t, 'message_template_quality_update');
      const category = await processedEvent(t, 'template_category_update');
      expect(quality).toMatchObject({
        kind: 'template_status',
        title: 'Template hello_world (en_US) quality: GREEN → YELLOW',
      });
      expect(category).toMatchObject({
        kind: 'template_status',
        title: 'Template hello_world (en_US) category: UTILITY → MARKETING',
      });
      expect(await template()).toMatchObject({ qualityScore: 'YELLOW', category: 'MARKETING', status: 'APPROVED' });
    });
  });

  describe('account health: ban, restrictions, violations, pricing tiers and alerts', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Standing Org');
    });
    const standing = async () => (await console(t, '')).body.data.standing as Record<string, unknown>;

    it('shows a clean standing on GET /business-accounts/{wabaId} before Meta says anything', async () => {
      expect(await standing()).toEqual({
        banState: null,
        banDate: null,
        banned: false,
        restrictions: [],
        violationType: null,
        pricingTiers: [],
        alerts: [],
        updatedAt: null,
      });
    });

    it('applies a DISABLED_UPDATE ban: the account shows it and every send is refused with 424 before any upstream call, until REINSTATE', async () => {
      await control('account-update', {
        wabaId: t.account.wabaId,
        event: 'DISABLED_UPDATE',
        ban_info: { waba_ban_state: 'DISABLE', waba_ban_date: 'November 24, 2026' },
      });
      const event = await processedEvent(t, 'account_update');
      expect(event).toMatchObject({ kind: 'account_update', title: 'Account update: DISABLED_UPDATE: DISABLE' });
      expect(await standing()).toMatchObject({ banState: 'DISABLE', banDate: 'November 24, 2026', banned: true });

      const to = recipient();
      const refused = await send(t, helloWorld(t, to));
      expect(refused.status).toBe(424);
      expect(refused.body).toEqual({
        statusCode: 424,
        message: expect.stringMatching(/disabled this business account \(ban state DISABLE since November 24, 2026\)/),
      });
      expect(stack.sim.sends({ to })).toEqual([]);
      expect(await countMessages(stack, { to })).toBe(0);

      await control('account-update', {
        wabaId: t.account.wabaId,
        event: 'DISABLED_UPDATE',
        ban_info: { waba_ban_state: 'REINSTATE', waba_ban_date: 'November 25, 2026' },
      });
      await processedEvent(t, 'account_update', 2);
      await waitFor(async () => ((await standing()).banState === 'REINSTATE' ? true : undefined), 'the reinstatement');
      expect((await send(t, helloWorld(t, recipient()))).status).toBe(200);
    });

    it('applies ACCOUNT_RESTRICTION: restrictions listed, business-initiated sends refused while in force', async () => {
      const expiration = new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, '+0000');
      await control('account-update', {
        wabaId: t.account.wabaId,
        event: 'ACCOUNT_RESTRICTION',
        restriction_info: [{ restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration }],
      });
      await processedEvent(t, 'account_update', 3);
      await waitFor(
        async () => (((await standing()).restrictions as unknown[]).length === 1 ? true : undefined),
        'the restriction',
      );
      expect((await standing()).restrictions).toEqual([
        { type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration, active: true },
      ]);
      const to = recipient();
      const refused = await send(t, helloWorld(t, to));
      expect(refused.status).toBe(424);
      expect(refused.body.message).toContain('RESTRICTED_BIZ_INITIATED_MESSAGING');
      expect(stack.sim.sends({ to })).toEqual([]);
      // Meta lifts it by sending the account's restrictions again, without this one.
      await control('account-update', { wabaId: t.account.wabaId, event: 'ACCOUNT_RESTRICTION', restriction_info: [] });
      await waitFor(
        async () => (((await standing()).restrictions as unknown[]).length === 0 ? true : undefined),
        'the restriction lifted',
      );
      expect((await send(t, helloWorld(t, recipient()))).status).toBe(200);
    });

    it('records ACCOUNT_VIOLATION, VOLUME_BASED_PRICING_TIER_UPDATE and account_alerts on the account', async () => {
      await control('account-update', {
        wabaId: t.account.wabaId,
        event: 'ACCOUNT_VIOLATION',
        violation_info: { violation_type: 'SCAM' },
      });
      await control('account-update', {
        wabaId: t.account.wabaId,
        event: 'VOLUME_BASED_PRICING_TIER_UPDATE',
        volume_tier_info: {
          tier_update_time: 1767183000,
          pricing_category: 'UTILITY',
          tier: '25000:50000',
          effective_month: '2026-12',
          region: 'India',
        },
      });
      await control('account-alerts', {
        wabaId: t.account.wabaId,
        entity_type: 'PHONE_NUMBER',
        entity_id: t.account.phoneNumberId,
        alert_severity: 'WARNING',
        alert_status: 'ACTIVE',
        alert_type: 'INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED',
        alert_description: 'Your eligibility for increased messaging limits was deferred.',
      });
      const alert = await processedEvent(t, 'account_alerts');
      expect(alert).toMatchObject({
        kind: 'account_update',
        title: 'Account alert: INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED (ACTIVE)',
      });
      const s = await waitFor(async () => {
        const current = await standing();
        return current.violationType === 'SCAM' &&
          (current.pricingTiers as unknown[]).length === 1 &&
          (current.alerts as unknown[]).length === 1
          ? current
          : undefined;
      }, 'violation, pricing tier and alert on the account');
      expect(s.pricingTiers).toEqual([
        {
          pricingCategory: 'UTILITY',
          region: 'India',
          tier: '25000:50000',
          effectiveMonth: '2026-12',
          at: expect.any(String),
        },
      ]);
      expect(s.alerts).toEqual([
        {
          type: 'INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED',
          severity: 'WARNING',
          status: 'ACTIVE',
          description: 'Your eligibility for increased messaging limits was deferred.',
          entityType: 'PHONE_NUMBER',
          entityId: t.account.phoneNumberId,
          at: expect.any(String),
        },
      ]);
      const kinds = (await events(t, { kind: 'account_update', limit: 100 })).body.data.items.map(
        (e: { eventType: string }) => e.eventType,
      );
      expect(kinds).toEqual(expect.arrayContaining(['account_update', 'account_alerts']));
    });
  });

  describe('errors: statuses[].errors and webhook-level value.errors', () => {
    let t: Tenant;
    beforeAll(async () => {
      t = await onboard(stack, 'Errors Org');
    });

    it('records a failed status with its code, title and error_data.details, on the event and the message', async () => {
      const message = await sentMessage(t);
      const details =
        'Message failed to send because more than 24 hours have passed since the customer last replied to this number.';
      await postStatuses(t, [
        {
          id: message.upstreamMessageId,
          status: 'failed',
          recipient_id: message.to,
          errors: [
            { code: 131047, title: 'Re-engagement message', message: 'Re-engagement message', error_data: { details } },
          ],
        },
      ]);
      const failed = await messageIn(t, message.id, 'failed');
      expect(failed.error).toMatchObject({ code: 131047, title: 'Re-engagement message', detail: details });
      const event = (await events(t, { messageId: message.upstreamMessageId })).body.data.items[0];
      expect(event).toMatchObject({
        kind: 'status_update',
        status: 'failed',
        error: { code: 131047, title: 'Re-engagement message', detail: details },
      });
    });

    it('records webhook-level value.errors as an event with error_data.details', async () => {
      await control('webhook-errors', {
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        errors: [
          {
            code: 131000,
            title: 'Something went wrong',
            message: 'Something went wrong',
            error_data: { details: 'Temporary failure: try again later' },
          },
        ],
      });
      const event = await waitFor(async () => {
        const res = await events(t, { kind: 'account_update' });
        return res.body.data?.items.find(
          (e: { eventType: string; processed: boolean }) => e.eventType === 'messages' && e.processed,
        );
      }, 'the errors event');
      expect(event).toMatchObject({
        title: 'Error 131000: Something went wrong',
        error: { code: 131000, title: 'Something went wrong', detail: 'Temporary failure: try again later' },
      });
    });
  });
});

describe('Meta fidelity 2026: a simulator whose automatic statuses carry only business-scoped user ids (userIds: only)', () => {
  let stack: Stack;
  let t: Tenant;

  beforeAll(async () => {
    stack = await startStack({ worker: true, sim: { userIds: 'only' } });
    t = await onboard(stack, 'Usernames Org');
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('takes a sent message to read on statuses without any phone number, and lists them with recipient null and the user id', async () => {
    const to = recipient();
    const sent = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, to));
    expect(sent.status).toBe(200);
    const read = await waitFor(async () => {
      const res = await stack.http.get(`/messages/${sent.body.data.id}`).set(t.key.headers);
      return res.body.data?.status === 'read' ? res.body.data : undefined;
    }, 'the message read');
    expect(read.pricing).toMatchObject({ pricingModel: 'PMP', category: 'utility', type: 'regular' });
    const listed = await waitFor(async () => {
      const res = await stack.http
        .get('/webhooks/events')
        .set('cookie', t.operator.cookie)
        .query({ wabaId: t.account.wabaId, userId: userIdFor(to) });
      return res.body.data?.total === 3 ? res.body.data.items : undefined;
    }, 'three statuses listed by user id');
    for (const e of listed) {
      expect(e).toMatchObject({
        kind: 'status_update',
        recipient: null,
        userId: userIdFor(to),
        messageId: sent.body.data.upstreamMessageId,
        processed: true,
      });
      expect(e.raw).not.toHaveProperty('recipient_id');
    }
  });
});
