// The service tier of webhook processing: the worker's DeliveryProcessor and its real effects over in-memory
// repositories (test/utils/in-memory), fed Meta's payloads as the simulator builds them. Each test is a webhook
// story as a business sees its result: a message's status, a customer's message and window, a template, an
// account's standing, and the deliveries' and events' state in the console.
import { UnrecoverableError } from 'bullmq';
import { MAX_PENDING_RERUNS, deliveryJobIds } from '../../src/webhooks/delivery-queue.js';
import {
  fieldWebhook,
  inboundWebhook,
  messagesWebhook,
  phoneOf,
  qualityUpdateValue,
  statusItem,
  statusesWebhook,
  templateStatusValue,
  webhookOf,
  messagesValue,
  inboundTextValue,
  type StatusItem,
} from '../../simulator/payloads/webhooks.js';
import { processingOverMemory } from '../utils/in-memory/delivery-processing.js';

const WABA = '310987654321098';
const OTHER_WABA = '310000000000777';
const PHONE = phoneOf('106540352242922', '+44 7700 900500');
const CUSTOMER = '447700900123';
/** Meta's clock for these stories: unix seconds, and the same as a Date. */
const T0 = 1767182400;
const at = (s: number) => new Date((T0 + s) * 1000);
const TEMPLATE = { id: '1203344556677889', name: 'parcel_update', language: 'en_GB', category: 'UTILITY' as const };
const PRICING = { billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' };

const status = (wamid: string, s: string, second: number, extra: Record<string, unknown> = {}): StatusItem =>
  statusItem(wamid, s, T0 + second, CUSTOMER, extra);
const statuses = (...items: StatusItem[]) => statusesWebhook(WABA, PHONE, items);

/** The processor over fresh in-memory tables, with the account connected and one message sent (wamid.A). */
function setUp(opts: { chunk?: number } = {}) {
  const p = processingOverMemory(opts);
  p.accounts.connect(WABA);
  const sent = p.messages.outbound(WABA, { status: 'sent', upstreamMessageId: 'wamid.A', sentAt: at(0) });
  return { ...p, sent };
}

describe('DeliveryProcessor (service tier, in-memory repositories)', () => {
  describe('each kind of event', () => {
    it('status updates move the message to delivered and read at Meta times, priced once, and the delivery shows its events', async () => {
      const p = setUp();
      const id = p.receive(
        statuses(status('wamid.A', 'delivered', 5, { pricing: PRICING }), status('wamid.A', 'read', 9)),
      );

      const result = await p.processor.process([id]);

      expect(result).toEqual({ deliveryIds: [id], items: [2], events: 2, inserted: 2, applied: 2, waiting: 0 });
      expect(p.messages.get(p.sent.id)).toMatchObject({
        status: 'read',
        sentAt: at(0),
        deliveredAt: at(5),
        readAt: at(9),
        pricingCategory: 'utility',
        pricingModel: 'PMP',
        pricingBillable: true,
      });
      expect(p.deliveries.get(id)).toMatchObject({ status: 'processed', eventCount: 2, lastError: null });
      expect(p.events.all().map((e) => [e.kind, e.status, e.processed])).toEqual([
        ['status_update', 'delivered', true],
        ['status_update', 'read', true],
      ]);
    });

    it("a customer's message is stored once as an inbound message and opens the 24 h window for its sender", async () => {
      const p = setUp();
      const id = p.receive(
        inboundWebhook(WABA, PHONE, {
          from: CUSTOMER,
          id: 'wamid.IN1',
          timestamp: T0 + 30,
          text: 'Where is my parcel? 📦',
        }),
      );

      await p.processor.process([id]);

      expect(p.messages.inbound()).toEqual([
        expect.objectContaining({
          direction: 'inbound',
          status: 'received',
          upstreamMessageId: 'wamid.IN1',
          from: CUSTOMER,
          phoneNumberId: PHONE.id,
          type: 'text',
          content: { text: { body: 'Where is my parcel? 📦' } },
        }),
      ]);
      expect(p.windows.lastInbound(PHONE.id, CUSTOMER)).toEqual(at(30));
      expect(p.events.all()).toEqual([
        expect.objectContaining({ kind: 'inbound_message', messageId: 'wamid.IN1', processed: true }),
      ]);
    });

    it("a customer's message to an account not connected here is kept as an event, and files no message", async () => {
      const p = setUp();
      const id = p.receive(
        inboundWebhook(OTHER_WABA, PHONE, { from: CUSTOMER, id: 'wamid.IN2', timestamp: T0, text: 'hello' }),
      );

      await p.processor.process([id]);

      expect(p.messages.inbound()).toEqual([]);
      expect(p.events.all()).toEqual([
        expect.objectContaining({ wabaId: OTHER_WABA, kind: 'inbound_message', processed: true }),
      ]);
    });

    it("Meta's template decisions update the synced template: PAUSED stops it, FLAGGED is only a warning, REINSTATED approves it again", async () => {
      const p = setUp();
      p.templates.synced(WABA, TEMPLATE.name, TEMPLATE.language);
      const decision = (event: string, second: number, reason = 'NONE') =>
        p.receive(
          fieldWebhook(
            WABA,
            'message_template_status_update',
            templateStatusValue(TEMPLATE, event, reason),
            T0 + second,
          ),
        );

      await p.processor.process([decision('PAUSED', 10, 'LOW_QUALITY')]);
      expect(p.templates.get(WABA, TEMPLATE.name, TEMPLATE.language)).toMatchObject({
        status: 'PAUSED',
        statusReason: 'LOW_QUALITY',
        statusUpdatedAt: at(10),
      });

      await p.processor.process([decision('FLAGGED', 20)]);
      expect(p.templates.get(WABA, TEMPLATE.name, TEMPLATE.language)).toMatchObject({ status: 'PAUSED' });

      await p.processor.process([decision('REINSTATED', 30)]);
      expect(p.templates.get(WABA, TEMPLATE.name, TEMPLATE.language)).toMatchObject({
        status: 'APPROVED',
        statusReason: null,
      });
      expect(p.events.all().map((e) => [e.kind, e.processed])).toEqual([
        ['template_status', true],
        ['template_status', true],
        ['template_status', true],
      ]);
    });

    it("Meta's rejection makes the synced template REJECTED with its reason, in that language only; a decision on a template never synced here is kept as an event and files no template", async () => {
      const p = setUp();
      p.templates.synced(WABA, TEMPLATE.name, 'en_GB');
      p.templates.synced(WABA, TEMPLATE.name, 'en_US');
      const unknown = { ...TEMPLATE, name: 'never_synced' };

      await p.processor.process([
        p.receive(
          fieldWebhook(
            WABA,
            'message_template_status_update',
            templateStatusValue(TEMPLATE, 'REJECTED', 'INVALID_FORMAT'),
            T0 + 10,
          ),
        ),
        p.receive(
          fieldWebhook(
            WABA,
            'message_template_status_update',
            templateStatusValue(unknown, 'APPROVED', 'NONE'),
            T0 + 11,
          ),
        ),
      ]);

      expect(p.templates.get(WABA, TEMPLATE.name, 'en_GB')).toMatchObject({
        status: 'REJECTED',
        statusReason: 'INVALID_FORMAT',
        statusUpdatedAt: at(10),
      });
      expect(p.templates.get(WABA, TEMPLATE.name, 'en_US')).toMatchObject({ status: 'APPROVED', statusReason: null });
      expect(p.templates.get(WABA, 'never_synced', TEMPLATE.language)).toBeUndefined();
      expect(p.events.all().map((e) => [e.kind, e.processed])).toEqual([
        ['template_status', true],
        ['template_status', true],
      ]);
    });

    it("account-level webhooks change the account's standing, the number's quality and the user's marketing preference", async () => {
      const p = setUp();
      p.numbers.synced(WABA, '447700900500');
      const ban = p.receive(
        fieldWebhook(
          WABA,
          'account_update',
          { event: 'DISABLED_UPDATE', ban_info: { waba_ban_state: 'DISABLE', waba_ban_date: '2026-01-01' } },
          T0 + 40,
        ),
      );
      const quality = p.receive(
        fieldWebhook(WABA, 'phone_number_quality_update', qualityUpdateValue(PHONE, 'FLAGGED', '1K', '10K'), T0 + 41),
      );
      const stop = p.receive(
        messagesWebhook(
          WABA,
          PHONE,
          {
            contacts: [{ wa_id: CUSTOMER, profile: { name: 'Ana' } }],
            user_preferences: [
              {
                wa_id: CUSTOMER,
                detail: 'User requested to stop marketing messages',
                category: 'marketing_messages',
                value: 'stop',
                timestamp: T0 + 42,
              },
            ],
          },
          'user_preferences',
        ),
      );

      const result = await p.processor.process([ban, quality, stop]);

      expect(result).toMatchObject({ deliveryIds: [ban, quality, stop], events: 3, inserted: 3, applied: 3 });
      expect(p.accounts.get(WABA)).toMatchObject({ banState: 'DISABLE', banDate: '2026-01-01' });
      expect(p.numbers.get(WABA, '447700900500')).toMatchObject({
        status: 'FLAGGED',
        qualityRating: 'RED',
        messagingLimit: '1K',
      });
      expect(p.preferences.get(WABA, CUSTOMER)).toMatchObject({
        value: 'stop',
        source: 'user_preferences',
        at: at(42),
      });
    });

    it('one payload of several kinds is stored and applied in one transaction', async () => {
      const p = setUp();
      const payload = webhookOf(WABA, [
        { field: 'messages', value: messagesValue(PHONE, { statuses: [status('wamid.A', 'delivered', 5)] }) },
        {
          field: 'messages',
          value: messagesValue(
            PHONE,
            inboundTextValue({ from: CUSTOMER, id: 'wamid.IN3', timestamp: T0 + 6, text: 'thanks' }),
          ),
        },
      ]);

      await p.processor.process([p.receive(payload)]);

      expect(p.db.transactions).toEqual({ committed: 1, rolledBack: 0 });
      expect(p.messages.get(p.sent.id)?.status).toBe('delivered');
      expect(p.messages.inbound()).toHaveLength(1);
    });
  });

  describe('duplicates and redeliveries', () => {
    it('a redelivery of a processed payload (Meta retried it) stores nothing and changes nothing', async () => {
      const p = setUp();
      const payload = webhookOf(WABA, [
        { field: 'messages', value: messagesValue(PHONE, { statuses: [status('wamid.A', 'delivered', 5)] }) },
        {
          field: 'messages',
          value: messagesValue(
            PHONE,
            inboundTextValue({ from: CUSTOMER, id: 'wamid.IN4', timestamp: T0 + 6, text: 'hi' }),
          ),
        },
      ]);
      await p.processor.process([p.receive(payload)]);
      const before = structuredClone(p.db.state.messages);

      const again = p.receive(payload);
      const result = await p.processor.process([again]);

      expect(result).toEqual({ deliveryIds: [again], items: [2], events: 2, inserted: 0, applied: 0, waiting: 0 });
      expect(p.db.state.messages).toEqual(before);
      expect(p.events.all()).toHaveLength(2);
      expect(p.deliveries.get(again)).toMatchObject({ status: 'processed', eventCount: 2 });
    });

    it('the same item twice in one payload, and a payload twice in one batch, make one event', async () => {
      const p = setUp();
      const twice = statuses(status('wamid.A', 'delivered', 5), status('wamid.A', 'delivered', 5));
      const [first, second] = [p.receive(twice), p.receive(twice)];

      const result = await p.processor.process([first, second]);

      expect(result).toMatchObject({ events: 2, inserted: 1, applied: 1 });
      expect(p.events.all()).toHaveLength(1);
      expect(p.deliveries.get(first)).toMatchObject({ status: 'processed', eventCount: 1 });
      expect(p.deliveries.get(second)).toMatchObject({ status: 'processed', eventCount: 1 });
    });

    it('a job run again for a processed delivery does nothing, and a dead-lettered delivery is left alone', async () => {
      const p = setUp();
      const done = p.receive(statuses(status('wamid.A', 'delivered', 5)));
      await p.processor.process([done]);
      const dead = p.receive(statuses(status('wamid.A', 'read', 9)));
      expect(await p.processor.markDeadLetter([dead], 'stalled too often')).toBe(1);
      const transactions = { ...p.db.transactions };

      expect(await p.processor.process([done, dead])).toEqual({
        deliveryIds: [done],
        items: [1],
        events: 1,
        inserted: 0,
        applied: 0,
        waiting: 0,
      });
      expect(p.db.transactions).toEqual(transactions);
      expect(p.messages.get(p.sent.id)?.status).toBe('delivered');
      expect(p.deliveries.get(dead)).toMatchObject({ status: 'failed', lastError: 'stalled too often' });
    });
  });

  describe('statuses out of order', () => {
    it('never move a message backwards: read, then delivered, sent and failed arriving late', async () => {
      const p = setUp();
      for (const item of [
        status('wamid.A', 'read', 9),
        status('wamid.A', 'delivered', 5),
        status('wamid.A', 'sent', 1),
        status('wamid.A', 'failed', 12, { errors: [{ code: 131026, title: 'Message undeliverable' }] }),
      ]) {
        await p.processor.process([p.receive(statuses(item))]);
      }

      // delivered at its own (earlier) time, although `read` had filled it first; the late failure is kept as an event only.
      expect(p.messages.get(p.sent.id)).toMatchObject({
        status: 'read',
        deliveredAt: at(5),
        readAt: at(9),
        failedAt: null,
        errorCode: null,
      });
      expect(p.events.all()).toHaveLength(4);
      expect(p.events.all().every((e) => e.processed)).toBe(true);
    });

    it("a message whose send answer was never stored ends read with each of Meta's times: read, delivered, then sent arriving", async () => {
      const p = setUp();
      const pending = p.messages.outbound(WABA, { upstreamMessageId: 'wamid.P' });
      expect(pending).toMatchObject({ status: 'pending', sentAt: null });
      // Each in its own delivery, stored in this (Meta's worst-case) order.
      for (const item of [
        status('wamid.P', 'read', 9),
        status('wamid.P', 'delivered', 5),
        status('wamid.P', 'sent', 1),
      ])
        await p.processor.process([p.receive(statuses(item))]);

      expect(p.messages.get(pending.id)).toMatchObject({
        status: 'read',
        sentAt: at(1),
        deliveredAt: at(5),
        readAt: at(9),
      });
      expect(p.events.all().map((e) => [e.status, e.processed])).toEqual([
        ['read', true],
        ['delivered', true],
        ['sent', true],
      ]);
    });

    it('in one payload too, whatever their order in it', async () => {
      const p = setUp();
      await p.processor.process([p.receive(statuses(status('wamid.A', 'read', 9), status('wamid.A', 'delivered', 5)))]);
      expect(p.messages.get(p.sent.id)).toMatchObject({ status: 'read', deliveredAt: at(5), readAt: at(9) });
    });

    it("a failure before delivery fails the message with Meta's error; 131050 also records the user's marketing stop", async () => {
      const p = setUp();
      const error = {
        code: 131050,
        title:
          'Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business.',
      };

      await p.processor.process([p.receive(statuses(status('wamid.A', 'failed', 3, { errors: [error] })))]);

      expect(p.messages.get(p.sent.id)).toMatchObject({ status: 'failed', failedAt: at(3), errorCode: 131050 });
      expect(p.preferences.get(WABA, CUSTOMER)).toMatchObject({ value: 'stop', source: 'error_131050' });
    });
  });

  describe('late webhooks and unknown messages', () => {
    it('a status that arrives before the send response was stored finds its message by callback data and links the wamid', async () => {
      const p = setUp();
      const pending = p.messages.outbound(WABA);

      await p.processor.process([
        p.receive(statuses(status('wamid.L', 'sent', 1, { biz_opaque_callback_data: `bm:${pending.id}` }))),
      ]);
      await p.processor.process([p.receive(statuses(status('wamid.L', 'delivered', 4)))]);

      expect(p.messages.get(pending.id)).toMatchObject({
        upstreamMessageId: 'wamid.L',
        status: 'delivered',
        sentAt: at(1),
        deliveredAt: at(4),
      });
    });

    it('without callback data the status waits, and the delayed re-run applies it once the send response is stored', async () => {
      const p = setUp();
      const pending = p.messages.outbound(WABA);
      const id = p.receive(statuses(status('wamid.W', 'delivered', 4)));

      expect(await p.processor.process([id])).toMatchObject({ inserted: 1, applied: 0, waiting: 1 });
      expect(p.events.all()).toEqual([
        expect.objectContaining({ messageId: 'wamid.W', processed: false, attempts: 1 }),
      ]);
      expect(p.queue.jobs).toEqual([
        { data: { deliveryIds: [id], rerun: 1 }, jobId: deliveryJobIds.pending([id], 1), delayMs: 500 },
      ]);
      expect(p.messages.get(pending.id)?.status).toBe('pending');

      p.messages.markSent(pending.id, 'wamid.W', at(2));
      expect(await p.processor.process([id], 1)).toMatchObject({ inserted: 0, applied: 1, waiting: 0 });

      expect(p.messages.get(pending.id)).toMatchObject({ status: 'delivered', deliveredAt: at(4) });
      expect(p.events.all()).toEqual([expect.objectContaining({ processed: true })]);
      expect(p.queue.jobs).toHaveLength(1);
    });

    it('a status of a message nobody sent waits through the re-runs, then stays visible unprocessed', async () => {
      const p = setUp();
      const id = p.receive(statuses(status('wamid.UNKNOWN', 'delivered', 4)));
      await p.processor.process([id]);

      for (let rerun = 1; rerun <= MAX_PENDING_RERUNS; rerun++)
        expect(await p.processor.process([id], rerun)).toMatchObject({ applied: 0, waiting: 1 });

      expect(p.queue.jobs.map((j) => j.data.rerun)).toEqual(
        Array.from({ length: MAX_PENDING_RERUNS }, (_, i) => i + 1),
      );
      expect(p.events.all()).toEqual([
        expect.objectContaining({ messageId: 'wamid.UNKNOWN', processed: false, attempts: MAX_PENDING_RERUNS + 1 }),
      ]);
      expect(p.deliveries.get(id)?.status).toBe('processed');
    });

    it("a status naming another tenant's message never changes it", async () => {
      const p = setUp();
      p.accounts.connect(OTHER_WABA);
      const theirs = p.messages.outbound(OTHER_WABA, {
        status: 'sent',
        upstreamMessageId: 'wamid.THEIRS',
        sentAt: at(0),
      });
      const pendingTheirs = p.messages.outbound(OTHER_WABA);

      await p.processor.process([
        p.receive(
          statuses(
            status('wamid.THEIRS', 'read', 9),
            status('wamid.X', 'sent', 1, { biz_opaque_callback_data: `bm:${pendingTheirs.id}` }),
          ),
        ),
      ]);

      expect(p.messages.get(theirs.id)).toMatchObject({ status: 'sent', readAt: null });
      expect(p.messages.get(pendingTheirs.id)).toMatchObject({ status: 'pending', upstreamMessageId: null });
      expect(p.events.all().map((e) => e.processed)).toEqual([false, false]);
    });
  });

  describe('failures', () => {
    it('a chunk failing mid-way rolls back that chunk alone; the retried job finishes the rest exactly once', async () => {
      const p = setUp({ chunk: 2 });
      const wamids = ['wamid.1', 'wamid.2', 'wamid.3', 'wamid.4'];
      const sent = wamids.map((wamid) =>
        p.messages.outbound(WABA, { status: 'sent', upstreamMessageId: wamid, sentAt: at(0) }),
      );
      const id = p.receive(statuses(...wamids.map((wamid, i) => status(wamid, 'delivered', 10 + i))));
      p.db.failAt('messages.writeStatuses', 2, new Error('connection terminated'));

      await expect(p.processor.process([id])).rejects.toThrow('connection terminated');

      expect(sent.map((m) => p.messages.get(m.id)?.status)).toEqual(['delivered', 'delivered', 'sent', 'sent']);
      expect(p.events.all().map((e) => e.messageId)).toEqual(['wamid.1', 'wamid.2']);
      expect(p.deliveries.get(id)?.status).toBe('received');
      expect(p.db.transactions).toEqual({ committed: 1, rolledBack: 1 });

      await p.processor.recordFailure([id], 'connection terminated', false);
      expect(p.deliveries.get(id)).toMatchObject({
        status: 'received',
        attempts: 1,
        lastError: 'connection terminated',
      });

      expect(await p.processor.process([id])).toEqual({
        deliveryIds: [id],
        items: [4],
        events: 4,
        inserted: 2,
        applied: 2,
        waiting: 0,
      });
      expect(sent.map((m) => p.messages.get(m.id)?.deliveredAt)).toEqual([at(10), at(11), at(12), at(13)]);
      expect(p.events.all().map((e) => [e.messageId, e.processed])).toEqual([
        ['wamid.1', true],
        ['wamid.2', true],
        ['wamid.3', true],
        ['wamid.4', true],
      ]);
      expect(p.deliveries.get(id)).toMatchObject({ status: 'processed', eventCount: 4, lastError: null });
    });

    it('a status left waiting by a failed attempt is not forgotten by the retry: it waits for its message and is applied once', async () => {
      const p = setUp({ chunk: 2 });
      const pending = p.messages.outbound(WABA);
      const wamids = ['wamid.1', 'wamid.2', 'wamid.3'];
      const sent = wamids.map((wamid) =>
        p.messages.outbound(WABA, { status: 'sent', upstreamMessageId: wamid, sentAt: at(0) }),
      );
      // Chunk 1: the status of a message whose send response is not stored yet (it waits), and one that applies.
      const id = p.receive(
        statuses(status('wamid.W', 'delivered', 4), ...wamids.map((wamid, i) => status(wamid, 'delivered', 10 + i))),
      );
      p.db.failAt('messages.writeStatuses', 2);
      await expect(p.processor.process([id])).rejects.toThrow();
      expect(p.queue.jobs).toEqual([]);

      expect(await p.processor.process([id])).toMatchObject({ inserted: 2, applied: 2, waiting: 1 });
      expect(p.queue.jobs).toEqual([
        { data: { deliveryIds: [id], rerun: 1 }, jobId: deliveryJobIds.pending([id], 1), delayMs: 500 },
      ]);
      expect(sent.map((m) => p.messages.get(m.id)?.status)).toEqual(['delivered', 'delivered', 'delivered']);

      p.messages.markSent(pending.id, 'wamid.W', at(2));
      expect(await p.processor.process([id], 1)).toMatchObject({ applied: 1, waiting: 0 });
      expect(p.messages.get(pending.id)).toMatchObject({ status: 'delivered', deliveredAt: at(4) });
      expect(p.events.all().every((e) => e.processed)).toBe(true);
    });

    it('the last attempt makes the delivery a dead letter, shown with its error', async () => {
      const p = setUp();
      const id = p.receive(statuses(status('wamid.A', 'delivered', 5)));
      p.db.failAt('events.insert', 1, new Error('disk full'));

      await expect(p.processor.process([id])).rejects.toThrow('disk full');
      await p.processor.recordFailure([id], 'disk full', true);

      expect(p.deliveries.get(id)).toMatchObject({ status: 'failed', lastError: 'disk full' });
      expect(p.events.all()).toEqual([]);
      expect(p.messages.get(p.sent.id)?.status).toBe('sent');
    });

    it('a stored payload that is not JSON is refused for good (no retry), and nothing is stored', async () => {
      const p = setUp();
      const id = p.deliveries.receive(Buffer.from('{"object":"whatsapp_business_account","entry":['));

      await expect(p.processor.process([id])).rejects.toBeInstanceOf(UnrecoverableError);
      expect(p.events.all()).toEqual([]);
    });

    it('events finding no storage partition: the partitions are made and the chunk runs again', async () => {
      const p = setUp();
      p.db.failAt(
        'events.insert',
        1,
        Object.assign(new Error('no partition of relation "events" found for row'), { code: '23514' }),
      );

      const result = await p.processor.process([p.receive(statuses(status('wamid.A', 'delivered', 5)))]);

      expect(result).toMatchObject({ inserted: 1, applied: 1 });
      expect(p.partitions.made).toBe(1);
      expect(p.db.transactions).toEqual({ committed: 1, rolledBack: 1 });
      expect(p.messages.get(p.sent.id)?.status).toBe('delivered');
    });
  });
});

describe('DeliveryProcessor: Meta since mid-2026 (standby, calls, user id changes)', () => {
  const USER_BEFORE = 'US.1111111111111111111';
  const USER_AFTER = 'US.2222222222222222222';

  it("on standby: the customer's message is inbound and opens the window; a status of ours moves it; the agent's own statuses are stored, never waited for", async () => {
    const p = setUp();
    const id = p.receive(
      webhookOf(WABA, [
        {
          field: 'standby',
          value: messagesValue(PHONE, {
            ...inboundTextValue({ from: CUSTOMER, id: 'wamid.SB1', timestamp: T0 + 10, text: 'Hello?' }),
            statuses: [status('wamid.A', 'delivered', 12), status('wamid.AGENT', 'delivered', 13)],
          }),
        },
      ]),
    );

    const result = await p.processor.process([id]);

    expect(result).toMatchObject({ events: 3, inserted: 3, applied: 3, waiting: 0 });
    expect(p.queue.jobs).toEqual([]);
    expect(p.messages.get(p.sent.id)).toMatchObject({ status: 'delivered', deliveredAt: at(12) });
    expect(p.messages.inbound().map((m) => [m.upstreamMessageId, m.from])).toEqual([['wamid.SB1', CUSTOMER]]);
    expect(p.windows.lastInbound(PHONE.id, CUSTOMER)).toEqual(at(10));
    expect(p.events.all().every((e) => e.processed)).toBe(true);
  });

  it('a user-initiated call opens the window; a business-initiated one does not', async () => {
    const p = setUp();
    const call = (customer: string, direction: string) => ({
      id: `wacid.${customer}`,
      from: direction === 'USER_INITIATED' ? customer : '447700900500',
      to: direction === 'USER_INITIATED' ? '447700900500' : customer,
      event: 'connect',
      direction,
      timestamp: String(T0 + 20),
    });
    const id = p.receive(
      webhookOf(WABA, [
        {
          field: 'calls',
          value: messagesValue(PHONE, {
            calls: [call(CUSTOMER, 'USER_INITIATED'), call('447700900999', 'BUSINESS_INITIATED')],
          }),
        },
      ]),
    );

    await p.processor.process([id]);

    expect(p.events.all().map((e) => [e.kind, e.recipient, e.processed])).toEqual([
      ['call', CUSTOMER, true],
      ['call', '447700900999', true],
    ]);
    expect(p.windows.lastInbound(PHONE.id, CUSTOMER)).toEqual(at(20));
    expect(p.windows.lastInbound(PHONE.id, '447700900999')).toBeUndefined();
  });

  it("user_changed_user_id: the window, the marketing stop, blocks and the messages' user id follow the user; nothing else moves", async () => {
    const p = setUp();
    const first = p.receive(
      messagesWebhook(WABA, PHONE, {
        contacts: [{ user_id: USER_BEFORE }],
        messages: [
          { from_user_id: USER_BEFORE, id: 'wamid.U1', timestamp: String(T0 + 5), type: 'text', text: { body: 'Hi' } },
        ],
      }),
    );
    await p.processor.process([first]);
    p.blocked.block(WABA, PHONE.id, USER_BEFORE);
    const stop = p.receive(
      messagesWebhook(
        WABA,
        PHONE,
        {
          user_preferences: [
            { user_id: USER_BEFORE, category: 'marketing_messages', value: 'stop', timestamp: T0 + 6 },
          ],
        },
        'user_preferences',
      ),
    );
    await p.processor.process([stop]);
    const change = p.receive(
      messagesWebhook(WABA, PHONE, {
        messages: [
          {
            from_user_id: USER_BEFORE,
            id: 'wamid.SYS',
            timestamp: String(T0 + 50),
            type: 'system',
            system: { type: 'user_changed_user_id', user_id: USER_AFTER, previous_user_id: USER_BEFORE },
          },
        ],
      }),
    );

    await p.processor.process([change]);

    expect(p.windows.lastInbound(PHONE.id, USER_AFTER)).toEqual(at(50));
    expect(p.preferences.get(WABA, USER_AFTER)).toMatchObject({ value: 'stop', user: USER_AFTER });
    expect(p.blocked.isBlocked(WABA, PHONE.id, USER_AFTER)).toBe(true);
    expect(p.messages.inbound().map((m) => m.userId)).toEqual([USER_AFTER, USER_AFTER]);
    expect(p.messages.get(p.sent.id)?.userId).toBeNull();
  });
});
