import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { metaJson } from '../../simulator/meta-json.js';
import { QUEUES } from '../../src/core/queue/queue.constants.js';
import { QueueService } from '../../src/core/queue/queue.service.js';
import {
  createTenant,
  metaId,
  onboard,
  recipient,
  wamid,
  type OnboardedTenant,
  type Tenant,
} from '../utils/factories.js';
import {
  countDeliveries,
  countEvents,
  countMessages,
  deliveriesOf,
  eventsOf,
  insertDeliveries,
  insertMessages,
  messageRow,
} from '../utils/messaging-rows.js';
import { allDeliveries } from '../utils/delivery-rows.js';
import { startStack, type Stack } from '../utils/stack.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { postWebhook, startTestWorker, unixNow, waitFor, type TestWorker } from '../utils/webhooks.js';
import { inboundWebhook, messagesValue, statusItem, statusesWebhook } from '../../simulator/payloads/webhooks.js';
import { signatureHeader } from '../../simulator/payloads/signature.js';

jest.setTimeout(180_000);

/** Helpers bound to one running app. */
function harness(t: TestApp) {
  return {
    /** Waits until `n` deliveries concerning this WABA are processed (and none is left `received`). */
    async processed(wabaId: string, n: number) {
      return waitFor(async () => {
        const rows = await deliveriesOf(t, wabaId);
        const done = rows.filter((r) => r.status === 'processed');
        return done.length >= n && rows.every((r) => r.status !== 'received') ? done : undefined;
      }, `${n} processed deliveries for ${wabaId}`);
    },
    async events(wabaId: string) {
      return eventsOf(t, wabaId);
    },
    async createMessage(tenant: Tenant, data: { upstreamMessageId?: string | null; status?: string; to?: string }) {
      const [message] = await insertMessages(t, [
        {
          business_account_id: tenant.account.businessAccountId,
          phone_number_id: tenant.account.phoneNumberId,
          to: data.to ?? '447700900123',
          type: 'template',
          template_name: 'parcel_update',
          template_language: 'en_GB',
          status: data.status ?? 'sent',
          upstream_message_id: data.upstreamMessageId === undefined ? wamid() : data.upstreamMessageId,
          sent_at: data.status === 'pending' ? null : new Date(),
        },
      ]);
      return message!;
    },
    listEvents(tenant: Tenant, query: Record<string, string | number>) {
      return t.http.get('/webhooks/events').set('cookie', tenant.operator.cookie).query(query);
    },
  };
}

const reEngagement = {
  code: 131047,
  title: 'Re-engagement message',
  message: 'Re-engagement message',
  error_data: {
    details:
      'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
  },
};

describe('Webhooks: receiver, processing and events API', () => {
  let t: TestApp;
  let worker: TestWorker;
  let h: ReturnType<typeof harness>;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_SWEEP_INTERVAL_MS: '300' });
    worker = await startTestWorker(t.config);
    h = harness(t);
  });
  afterAll(async () => {
    await worker?.close();
    await t?.close();
  });

  describe('GET /webhooks/whatsapp (subscription handshake)', () => {
    it('answers the challenge as plain text when mode and verify token match', async () => {
      const res = await t.http.get('/webhooks/whatsapp').query({
        'hub.mode': 'subscribe',
        'hub.verify_token': t.config.whatsappVerifyToken,
        'hub.challenge': '1158201444',
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toBe('1158201444');
    });

    it('refuses a wrong token, a wrong mode or missing parameters with a 403 envelope', async () => {
      const wrongToken = await t.http
        .get('/webhooks/whatsapp')
        .query({ 'hub.mode': 'subscribe', 'hub.verify_token': 'nope-nope-nope', 'hub.challenge': '1' });
      expect(wrongToken.status).toBe(403);
      expect(wrongToken.body).toEqual({ statusCode: 403, message: 'Webhook verification failed' });
      const wrongMode = await t.http
        .get('/webhooks/whatsapp')
        .query({ 'hub.mode': 'unsubscribe', 'hub.verify_token': t.config.whatsappVerifyToken, 'hub.challenge': '1' });
      expect(wrongMode.status).toBe(403);
      expect((await t.http.get('/webhooks/whatsapp')).status).toBe(403);
    });
  });

  describe('POST /webhooks/whatsapp (receiver)', () => {
    it('acknowledges a signed delivery at once and stores the exact bytes it received, until they are processed', async () => {
      const tenant = await createTenant(t);
      // No worker while the stored bytes are read: once processed, the items live in `events` and the bytes go.
      await worker.close();
      // Non-ASCII and "/" make Meta's serialisation differ from JSON.stringify: the check must use the raw bytes.
      const payload = inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
        from: '447700900123',
        id: wamid(),
        timestamp: String(unixNow()),
        text: 'Olá, 1/2 ✓',
        name: 'João',
      });
      const res = await postWebhook(t, payload);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ statusCode: 200, message: 'Success', data: { received: true } });
      const [row] = await deliveriesOf(t, tenant.account.wabaId);
      expect(row!.status).toBe('received');
      expect(Buffer.from(row!.rawBody).toString('utf8')).toBe(metaJson(payload));
      expect(row!.wabaIds).toEqual([tenant.account.wabaId]);
      expect(row!.signature).toBe(signatureHeader(metaJson(payload), t.config.whatsappAppSecret));

      worker = await startTestWorker(t.config);
      const [processed] = await h.processed(tenant.account.wabaId, 1);
      expect(processed).toMatchObject({ rawBody: Buffer.alloc(0), signature: '', batchId: null, eventCount: 1 });
      const [event] = await h.events(tenant.account.wabaId);
      expect(event!.raw).toMatchObject({ from: '447700900123', type: 'text', text: { body: 'Olá, 1/2 ✓' } });
    });

    it('rejects a missing, wrong or re-serialised signature with 401 and stores nothing', async () => {
      const wabaId = metaId();
      const payload = inboundWebhook(wabaId, '402345678901234', {
        from: '447700900123',
        id: wamid(),
        timestamp: String(unixNow()),
        text: 'Olá/Hi',
        name: 'João',
      });
      const missing = await postWebhook(t, payload, { signature: null });
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ statusCode: 401, message: 'Invalid or missing X-Hub-Signature-256' });
      // A well-formed header with the wrong HMAC is refused once the body is in: the same bytes.
      const wrong = await postWebhook(t, payload, {
        signature: signatureHeader(metaJson(payload), 'some-other-secret'),
      });
      expect([wrong.status, wrong.text]).toEqual([
        401,
        '{"statusCode":401,"message":"Invalid or missing X-Hub-Signature-256"}',
      ]);
      expect(wrong.headers['retry-after']).toBeUndefined();
      expect(
        (
          await postWebhook(t, payload, {
            signature: signatureHeader(JSON.stringify(payload), t.config.whatsappAppSecret),
          })
        ).status,
      ).toBe(401);
      expect((await postWebhook(t, payload, { signature: 'sha256=abc' })).status).toBe(401);
      expect(await countDeliveries(t, wabaId)).toBe(0);
    });

    it('answers 400 for a body that is not JSON, not a WhatsApp business account object, or has no entries', async () => {
      // Each answer to the byte: the envelope with its message and nothing else (no errors[], no Retry-After).
      const answer = async (res: ReturnType<typeof postWebhook>) => {
        const r = await res;
        return [r.status, r.text, r.headers['retry-after']];
      };
      const refused = (message: string) => [400, JSON.stringify({ statusCode: 400, message }), undefined];
      expect(await answer(postWebhook(t, undefined, { body: '{"object": "whatsapp_business_account", ' }))).toEqual(
        refused('Malformed JSON body'),
      );
      expect(await answer(postWebhook(t, { object: 'page', entry: [] }))).toEqual(
        refused('Unsupported webhook object: expected whatsapp_business_account'),
      );
      expect(await answer(postWebhook(t, { object: 'whatsapp_business_account' }))).toEqual(
        refused('Webhook payload has no entry array'),
      );
      expect(await answer(postWebhook(t, [1, 2]))).toEqual(
        refused('Unsupported webhook object: expected whatsapp_business_account'),
      );
    });

    it('answers 503 (so Meta retries) when the delivery cannot be stored', async () => {
      const noDb = await startTestApp({ DATABASE_URL: 'postgresql://postgres:postgres@127.0.0.1:9/none' });
      try {
        const res = await postWebhook(
          noDb,
          inboundWebhook('310000000000001', '402345678901234', {
            from: '447700900123',
            id: wamid(),
            timestamp: String(unixNow()),
            text: 'hi',
          }),
        );
        expect(res.status).toBe(503);
        expect(res.text).toBe(
          '{"statusCode":503,"message":"Service Unavailable: the delivery could not be stored, retry later"}',
        );
        expect(res.headers['retry-after']).toBeUndefined();
      } finally {
        await noDb.close();
      }
    });

    it('answers 413 for a body over 3 MB', async () => {
      const big = metaJson({ object: 'whatsapp_business_account', entry: [], pad: 'x'.repeat(3 * 1024 * 1024) });
      const res = await postWebhook(t, undefined, { body: big });
      expect(res.status).toBe(413);
    });
  });

  describe('processing', () => {
    it('stores every item of a batched delivery (entries × changes × items) with its kind', async () => {
      const tenant = await createTenant(t);
      const ids = [wamid(), wamid(), wamid()];
      const now = unixNow();
      const payload = {
        object: 'whatsapp_business_account',
        entry: [
          {
            id: tenant.account.wabaId,
            changes: [
              {
                field: 'messages',
                value: messagesValue(tenant.account.phoneNumberId, {
                  statuses: [statusItem(ids[0]!, 'sent', now), statusItem(ids[1]!, 'delivered', now)],
                }),
              },
              {
                field: 'messages',
                value: messagesValue(tenant.account.phoneNumberId, {
                  contacts: [{ profile: { name: 'Priya' }, wa_id: '447700900777' }],
                  messages: [
                    { from: '447700900777', id: ids[2], timestamp: String(now), type: 'text', text: { body: 'hi' } },
                  ],
                  statuses: [statusItem(ids[0]!, 'delivered', now + 1)],
                }),
              },
            ],
          },
          {
            id: tenant.account.wabaId,
            time: now,
            changes: [
              {
                field: 'message_template_status_update',
                value: {
                  event: 'APPROVED',
                  message_template_id: 1,
                  message_template_name: 'x',
                  message_template_language: 'en_GB',
                  reason: 'NONE',
                },
              },
              { field: 'account_update', value: { event: 'ACCOUNT_RESTRICTION' } },
              { field: 'some_future_field', value: { anything: [1, 2, 3] } },
            ],
          },
        ],
      };
      expect((await postWebhook(t, payload)).status).toBe(200);
      const [delivery] = await h.processed(tenant.account.wabaId, 1);
      expect(delivery!.eventCount).toBe(7);
      const events = await h.events(tenant.account.wabaId);
      expect(events.map((e) => [e.kind, e.eventType, e.title])).toEqual(
        expect.arrayContaining([
          ['status_update', 'messages', 'Message sent'],
          ['status_update', 'messages', 'Message delivered'],
          ['status_update', 'messages', 'Message delivered'],
          ['inbound_message', 'messages', 'Inbound text from 447700900777'],
          ['template_status', 'message_template_status_update', 'Template x (en_GB) approved'],
          ['account_update', 'account_update', 'Account update: ACCOUNT_RESTRICTION'],
          ['account_update', 'some_future_field', 'Update: some_future_field'],
        ]),
      );
      expect(events).toHaveLength(7);
    });

    it('applies a status that arrived before its message had a wamid, once the wamid is stored', async () => {
      const tenant = await createTenant(t);
      const message = await h.createMessage(tenant, { status: 'pending', upstreamMessageId: null });
      const w = wamid();
      expect(
        (
          await postWebhook(
            t,
            statusesWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, [
              statusItem(w, 'delivered', unixNow()),
            ]),
          )
        ).status,
      ).toBe(200);
      // Stored and visible at once, waiting for its message; the delivery itself is done.
      const waiting = await waitFor(async () => {
        const [e] = await h.events(tenant.account.wabaId);
        return e && e.attempts >= 1 ? e : undefined;
      }, 'the status to wait for its message');
      expect(waiting.processed).toBe(false);
      await h.processed(tenant.account.wabaId, 1);

      // The send response arrives late.
      await t.db
        .on()
        .updateTable('messages')
        .set({ upstream_message_id: w, status: 'sent', sent_at: new Date(), updated_at: new Date() })
        .where('id', '=', message.id)
        .execute();
      const applied = await waitFor(
        async () => {
          const m = await messageRow(t, message.id);
          return m.status === 'delivered' ? m : undefined;
        },
        'the delayed re-run to apply the status',
        20_000,
      );
      expect(applied.deliveredAt).not.toBeNull();
      const [event] = await h.events(tenant.account.wabaId);
      expect(event!.processed).toBe(true);
    });

    it('applies a status stranded after its delayed re-runs were lost (Redis wiped) at the next sweep', async () => {
      const tenant = await createTenant(t);
      const w = wamid();
      expect(
        (
          await postWebhook(
            t,
            statusesWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, [statusItem(w, 'read', unixNow())]),
          )
        ).status,
      ).toBe(200);
      const [delivery] = await h.processed(tenant.account.wabaId, 1);
      // Redis loses the delayed re-runs; the message becomes known; the status has been waiting longer than the re-runs
      // would have lasted. (The message first: a scheduled sweep between the two would otherwise run the delivery while
      // the status still waits, and its job id holds for the minute.)
      await t.app.get(QueueService).queue(QUEUES.webhookDeliveries).drain(true);
      const message = await h.createMessage(tenant, { status: 'sent', upstreamMessageId: w });
      await t.db
        .on()
        .updateTable('webhook_deliveries')
        .set({ received_at: new Date(Date.now() - 11 * 60_000) })
        .where('id', '=', delivery!.id)
        .execute();
      await t.db
        .on()
        .updateTable('events')
        .set({ created_at: new Date(Date.now() - 10 * 60_000) })
        .where('waba_id', '=', tenant.account.wabaId)
        .execute();

      await worker.sweeper.sweep();
      const applied = await waitFor(async () => {
        const m = await messageRow(t, message.id);
        return m.status === 'read' ? m : undefined;
      }, 'the sweeper to re-run the delivery');
      expect(applied.readAt).not.toBeNull();
      expect((await h.events(tenant.account.wabaId)).map((e) => e.processed)).toEqual([true]);
    });

    it('records an asynchronous 131047 failure on the message with code, title and detail', async () => {
      const tenant = await createTenant(t);
      const message = await h.createMessage(tenant, {});
      const payload = statusesWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, [
        statusItem(message.upstreamMessageId!, 'failed', unixNow(), '447700900456', { errors: [reEngagement] }),
      ]);
      expect((await postWebhook(t, payload)).status).toBe(200);
      await h.processed(tenant.account.wabaId, 1);
      const failed = await messageRow(t, message.id);
      expect(failed).toMatchObject({
        status: 'failed',
        errorCode: 131047,
        errorTitle: 'Re-engagement message',
        errorDetail: reEngagement.error_data.details,
        errorCategory: 'window',
      });
      expect(failed.failedAt).not.toBeNull();
      const res = await h.listEvents(tenant, { wabaId: tenant.account.wabaId, status: 'failed' });
      expect(res.body.data.items).toHaveLength(1);
      expect(res.body.data.items[0]).toMatchObject({
        title: 'Message failed: Re-engagement message (131047)',
        recipient: '447700900456',
        error: { code: 131047, title: 'Re-engagement message', detail: reEngagement.error_data.details },
        processed: true,
      });
    });

    it('stores and applies items whose text holds a NUL or a lone surrogate (JSON escapes PostgreSQL cannot store), as U+FFFD', async () => {
      const tenant = await createTenant(t);
      const from = recipient();
      const payload = inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
        from,
        id: wamid(),
        timestamp: String(unixNow()),
        text: 'a\u0000b\ud800c\udfffd 😀',
      });
      expect((await postWebhook(t, payload)).status).toBe(200);
      const [delivery] = await h.processed(tenant.account.wabaId, 1);
      expect(delivery).toMatchObject({ status: 'processed', eventCount: 1 });
      const [event] = await h.events(tenant.account.wabaId);
      expect(event).toMatchObject({
        processed: true,
        kind: 'inbound_message',
        raw: { text: { body: 'a\uFFFDb\uFFFDc\uFFFDd 😀' } },
      });
    });
  });

  describe('GET /webhooks/events', () => {
    let tenant: Tenant;
    const ids = { a: wamid(), b: wamid(), c: wamid() };

    beforeAll(async () => {
      tenant = await createTenant(t);
      const now = unixNow();
      await postWebhook(
        t,
        statusesWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, [
          statusItem(ids.a, 'sent', now),
          statusItem(ids.b, 'sent', now, '447700900456'),
        ]),
      );
      await h.processed(tenant.account.wabaId, 1);
      await postWebhook(
        t,
        statusesWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, [
          statusItem(ids.a, 'delivered', now + 1),
          statusItem(ids.c, 'failed', now + 1, '447700900789', { errors: [reEngagement] }),
        ]),
      );
      await h.processed(tenant.account.wabaId, 2);
      await postWebhook(
        t,
        inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
          from: '447700900456',
          id: wamid(),
          timestamp: String(now + 2),
          text: 'hello',
        }),
      );
      await h.processed(tenant.account.wabaId, 3);
    });

    it('lists the events of a business account newest first, with every field', async () => {
      const res = await h.listEvents(tenant, { wabaId: tenant.account.wabaId });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ statusCode: 200, message: 'Success' });
      const { items, page, limit, total, totalPages } = res.body.data;
      expect({ page, limit, total, totalPages }).toEqual({ page: 1, limit: 20, total: 5, totalPages: 1 });
      const order = items.map((e: { id: number; createdAt: string }) => [e.createdAt, e.id]);
      const sorted = [...order].sort((x, y) => (x[0] === y[0] ? y[1] - x[1] : x[0] < y[0] ? 1 : -1));
      expect(order).toEqual(sorted);
      expect(items[0]).toMatchObject({ kind: 'inbound_message', title: 'Inbound text from 447700900456' });
      const delivered = items.find((e: { status: string }) => e.status === 'delivered');
      expect(Object.keys(delivered).sort()).toEqual(
        [
          'createdAt',
          'error',
          'eventType',
          'id',
          'kind',
          'media',
          'messageId',
          'phoneNumberId',
          'pricing',
          'processed',
          'raw',
          'recipient',
          'status',
          'title',
          'upstreamTimestamp',
          'userId',
          'wabaId',
        ].sort(),
      );
      expect(delivered).toMatchObject({
        eventType: 'messages',
        kind: 'status_update',
        title: 'Message delivered',
        status: 'delivered',
        recipient: '447700900123',
        userId: null,
        pricing: null,
        messageId: ids.a,
        wabaId: tenant.account.wabaId,
        phoneNumberId: tenant.account.phoneNumberId,
        error: null,
        processed: false,
        raw: expect.objectContaining({ id: ids.a, status: 'delivered' }),
      });
      expect(delivered.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(delivered.upstreamTimestamp).toMatch(/\.000Z$/);
    });

    it('pages with page and limit', async () => {
      const all = (await h.listEvents(tenant, { wabaId: tenant.account.wabaId })).body.data.items.map(
        (e: { id: number }) => e.id,
      );
      const second = await h.listEvents(tenant, { wabaId: tenant.account.wabaId, page: 2, limit: 2 });
      expect(second.body.data).toMatchObject({ page: 2, limit: 2, total: 5, totalPages: 3 });
      expect(second.body.data.items.map((e: { id: number }) => e.id)).toEqual(all.slice(2, 4));
      const beyond = await h.listEvents(tenant, { wabaId: tenant.account.wabaId, page: 9, limit: 2 });
      expect(beyond.body.data).toMatchObject({ items: [], total: 5 });
    });

    it('filters by kind, status, messageId, recipient and time', async () => {
      const q = async (extra: Record<string, string>) =>
        (await h.listEvents(tenant, { wabaId: tenant.account.wabaId, ...extra })).body.data;
      expect((await q({ kind: 'status_update' })).total).toBe(4);
      expect((await q({ kind: 'inbound_message' })).total).toBe(1);
      expect((await q({ kind: 'template_status' })).total).toBe(0);
      expect((await q({ status: 'sent' })).items.map((e: { messageId: string }) => e.messageId).sort()).toEqual(
        [ids.a, ids.b].sort(),
      );
      expect((await q({ messageId: ids.a })).items.map((e: { status: string }) => e.status)).toEqual([
        'delivered',
        'sent',
      ]);
      expect((await q({ recipient: '447700900456' })).total).toBe(2);
      expect((await q({ recipient: '447700900456', kind: 'status_update' })).total).toBe(1);
      expect((await q({ since: new Date(Date.now() + 60_000).toISOString() })).total).toBe(0);
      expect((await q({ until: new Date(Date.now() - 3600_000).toISOString() })).total).toBe(0);
      expect(
        (
          await q({
            since: new Date(Date.now() - 3600_000).toISOString(),
            until: new Date(Date.now() + 60_000).toISOString(),
          })
        ).total,
      ).toBe(5);
    });

    it('answers 422 naming the field for a missing wabaId and malformed parameters', async () => {
      const missing = await t.http.get('/webhooks/events').set('cookie', tenant.operator.cookie);
      expect(missing.status).toBe(422);
      expect(missing.body).toMatchObject({ statusCode: 422, message: 'Field Validation Failed' });
      expect(missing.body.errors.map((e: { field: string }) => e.field)).toEqual(['wabaId']);
      for (const [field, value] of [
        ['limit', '101'],
        ['limit', '0'],
        ['page', '0'],
        ['kind', 'bogus'],
        ['since', 'yesterday'],
        ['until', '2026-13-45'],
      ]) {
        const res = await h.listEvents(tenant, { wabaId: tenant.account.wabaId, [field!]: value! });
        expect(res.status).toBe(422);
        expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
      }
    });

    it("answers 404 for another organization's business account and its events", async () => {
      const other = await createTenant(t);
      const res = await h.listEvents(tenant, { wabaId: other.account.wabaId });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: 'Business account not found' });
      const mine = (await h.listEvents(tenant, { wabaId: tenant.account.wabaId })).body.data.items[0];
      const one = await t.http.get(`/webhooks/events/${mine.id}`).set('cookie', tenant.operator.cookie);
      expect(one.status).toBe(200);
      expect(one.body.data).toEqual(mine);
      expect((await t.http.get(`/webhooks/events/${mine.id}`).set('cookie', other.operator.cookie)).status).toBe(404);
      expect((await t.http.get('/webhooks/events/abc').set('cookie', tenant.operator.cookie)).status).toBe(404);
      expect(mine.id).toBeGreaterThan(2 ** 31);
      for (const id of ['99999999999', '9007199254740993', '99999999999999999999']) {
        expect({
          id,
          status: (await t.http.get(`/webhooks/events/${id}`).set('cookie', tenant.operator.cookie)).status,
        }).toEqual({ id, status: 404 });
      }
    });

    it('keeps listing the events of a disconnected business account', async () => {
      const setDisconnectedAt = (at: Date | null) =>
        t.db
          .on()
          .updateTable('business_accounts')
          .set({ disconnected_at: at, updated_at: new Date() })
          .where('id', '=', tenant.account.businessAccountId)
          .execute();
      await setDisconnectedAt(new Date());
      try {
        expect((await h.listEvents(tenant, { wabaId: tenant.account.wabaId })).body.data.total).toBe(5);
      } finally {
        await setDisconnectedAt(null);
      }
    });

    it('answers 401 without a console session, including for an API key pair', async () => {
      const none = await t.http.get('/webhooks/events').query({ wabaId: tenant.account.wabaId });
      expect(none.status).toBe(401);
      const created = await t.http
        .post('/api-keys')
        .set('cookie', tenant.operator.cookie)
        .send({ wabaId: tenant.account.wabaId, name: 'events reader' });
      expect(created.status).toBe(201);
      const withKey = await t.http
        .get('/webhooks/events')
        .query({ wabaId: tenant.account.wabaId })
        .set('x-access-key', created.body.data.accessKey)
        .set('x-secret-key', created.body.data.secretKey);
      expect(withKey.status).toBe(401);
      expect(withKey.body.statusCode).toBe(401);
    });

    it('is documented in the OpenAPI description', async () => {
      const json = await t.http.get('/swagger/docs-json');
      const op = json.body.paths['/webhooks/events'].get;
      expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
        expect.arrayContaining([
          'wabaId',
          'page',
          'limit',
          'kind',
          'status',
          'messageId',
          'recipient',
          'since',
          'until',
        ]),
      );
      expect(op.security).toEqual([{ session: [] }]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '404', '422']));
      expect(json.body.paths['/webhooks/whatsapp'].post).toBeDefined();
    });
  });

  describe('recovery: sweeper, dead letters and replay', () => {
    // The retention of deliveries and events (whole weekly partitions dropped; dead letters and waiting deliveries
    // kept) is tested on a database of its own: test/medium/storage-partitions.spec.ts.

    it('processes a delivery that was stored but never enqueued (Redis was down when it arrived)', async () => {
      const tenant = await createTenant(t);
      const message = await h.createMessage(tenant, {});
      const body = metaJson(
        statusesWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, [
          statusItem(message.upstreamMessageId!, 'read', unixNow()),
        ]),
      );
      const [row] = await insertDeliveries(t, [
        {
          raw_body: Buffer.from(body),
          signature: signatureHeader(body, t.config.whatsappAppSecret),
          waba_ids: [tenant.account.wabaId],
          received_at: new Date(Date.now() - 10_000),
        },
      ]);
      const [done] = await h.processed(tenant.account.wabaId, 1);
      expect(done!.id).toBe(row!.id);
      expect(done!.eventCount).toBe(1);
      expect((await messageRow(t, message.id)).status).toBe('read');
    });

    it('runs a delivery again when its batch job ended without it (the job carried only the part of the batch old enough to sweep)', async () => {
      const tenant = await createTenant(t);
      const batchId = `split-${randomUUID()}`;
      const stored = async (receivedAt: Date) => {
        const message = await h.createMessage(tenant, {});
        const body = metaJson(
          statusesWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, [
            statusItem(message.upstreamMessageId!, 'read', unixNow()),
          ]),
        );
        const [row] = await insertDeliveries(t, [
          {
            raw_body: Buffer.from(body),
            signature: signatureHeader(body, t.config.whatsappAppSecret),
            waba_ids: [tenant.account.wabaId],
            batch_id: batchId,
            received_at: receivedAt,
          },
        ]);
        return { message, row: row! };
      };
      // Redis was down when the batch was stored; a sweep saw only its older delivery, and batch-<id> ran for it alone.
      const first = await stored(new Date(Date.now() - 10_000));
      await h.processed(tenant.account.wabaId, 1);
      // The rest of the same batch becomes old enough after that job has completed (kept in Redis under its id).
      const second = await stored(new Date());
      const [a, b] = await h.processed(tenant.account.wabaId, 2);
      expect([a!.id, b!.id].sort()).toEqual([first.row.id, second.row.id].sort());
      expect((await messageRow(t, second.message.id)).status).toBe('read');
    });

    it('acknowledges with 200 while Redis is unreachable, and the sweeper processes the delivery', async () => {
      const tenant = await createTenant(t);
      const noRedis = await startTestApp({ REDIS_URL: 'redis://127.0.0.1:9' });
      try {
        const payload = inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
          from: '447700900123',
          id: wamid(),
          timestamp: String(unixNow()),
          text: 'hi',
        });
        const body = metaJson(payload);
        const started = Date.now();
        const res = await noRedis.http
          .post('/webhooks/whatsapp')
          .set('content-type', 'application/json')
          .set('x-hub-signature-256', signatureHeader(body, noRedis.config.whatsappAppSecret))
          .send(body);
        expect(res.status).toBe(200);
        expect(Date.now() - started).toBeLessThan(3000);
      } finally {
        await noRedis.close();
      }
      // The stored delivery is picked up by the running worker's sweeper.
      await h.processed(tenant.account.wabaId, 1);
      expect(await h.events(tenant.account.wabaId)).toHaveLength(1);
    });

    it('dead-letters a delivery that cannot be processed, lists it, and replays it once fixed', async () => {
      const tenant = await createTenant(t);
      const other = await createTenant(t);
      const [inserted] = await insertDeliveries(t, [
        {
          raw_body: Buffer.from('this is not json'),
          signature: 'sha256=00',
          waba_ids: [tenant.account.wabaId, '999999999999'],
          received_at: new Date(Date.now() - 10_000),
        },
      ]);
      const broken = inserted!;
      const deliveryRow = () =>
        t.db.on().selectFrom(allDeliveries(t.db)).selectAll().where('id', '=', broken.id).executeTakeFirstOrThrow();
      const failed = await waitFor(async () => {
        const d = await deliveryRow();
        return d.status === 'failed' ? d : undefined;
      }, 'the delivery to be dead-lettered');
      expect(failed.lastError).toContain('not valid JSON');

      const list = await t.http
        .get('/webhooks/deliveries')
        .query({ status: 'failed' })
        .set('cookie', tenant.operator.cookie);
      expect(list.status).toBe(200);
      const item = list.body.data.items.find((d: { id: number }) => d.id === broken.id);
      expect(item).toMatchObject({
        status: 'failed',
        wabaIds: [tenant.account.wabaId],
        eventCount: null,
        processedAt: null,
      });
      expect(item.lastError).toContain('not valid JSON');
      const otherList = await t.http.get('/webhooks/deliveries').set('cookie', other.operator.cookie);
      expect(otherList.body.data.items.find((d: { id: number }) => d.id === broken.id)).toBeUndefined();
      expect(
        (await t.http.post(`/webhooks/deliveries/${broken.id}/replay`).set('cookie', other.operator.cookie)).status,
      ).toBe(404);
      for (const id of ['9007199254740993', '99999999999999999999']) {
        expect({
          id,
          status: (await t.http.post(`/webhooks/deliveries/${id}/replay`).set('cookie', tenant.operator.cookie)).status,
        }).toEqual({ id, status: 404 });
      }
      expect(
        (await t.http.get('/webhooks/deliveries').query({ status: 'lost' }).set('cookie', tenant.operator.cookie))
          .status,
      ).toBe(422);

      const fixed = metaJson(
        inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
          from: '447700900123',
          id: wamid(),
          timestamp: String(unixNow()),
          text: 'hi',
        }),
      );
      // A dead letter waits in the inbox, bytes and all, for its replay.
      const { numUpdatedRows } = await t.db
        .on()
        .updateTable('webhook_inbox')
        .set({ raw_body: Buffer.from(fixed) })
        .where('id', '=', broken.id)
        .executeTakeFirstOrThrow();
      expect(numUpdatedRows).toBe(1n);
      const replay = await t.http
        .post(`/webhooks/deliveries/${broken.id}/replay`)
        .set('cookie', tenant.operator.cookie);
      expect(replay.status).toBe(200);
      expect(replay.body.data).toMatchObject({ id: broken.id, status: 'received', attempts: 0, lastError: null });
      const [done] = await h.processed(tenant.account.wabaId, 1);
      expect(done).toMatchObject({ id: broken.id, eventCount: 1, lastError: null });
      expect(await h.events(tenant.account.wabaId)).toHaveLength(1);
    });
  });
});

describe('Webhooks: a worker killed in the middle of a batch', () => {
  let t: TestApp;
  const workers: TestWorker[] = [];
  // Items per transaction: small enough that Meta's largest POST (1,000 statuses) spans several of them.
  const EVENT_CHUNK = 100;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_SWEEP_INTERVAL_MS: '500', WEBHOOK_EVENT_CHUNK: String(EVENT_CHUNK) });
  });
  afterAll(async () => {
    for (const w of workers) await w.close();
    await t?.close();
  });

  it('leaves every event stored and applied exactly once after a restart', async () => {
    const tenant = await createTenant(t);
    const count = 500;
    const messages = await insertMessages(
      t,
      Array.from({ length: count }, (_, i) => ({
        business_account_id: tenant.account.businessAccountId,
        phone_number_id: tenant.account.phoneNumberId,
        to: `4477009${String(i).padStart(5, '0')}`,
        type: 'template',
        status: 'sent',
        upstream_message_id: wamid(),
      })),
    );
    const now = unixNow();
    // Meta's maximum: 1000 updates in one POST.
    const statuses = messages.flatMap((m) => [
      statusItem(m.upstreamMessageId!, 'delivered', now + 1, m.to!),
      statusItem(m.upstreamMessageId!, 'read', now + 2, m.to!),
    ]);

    // Statuses are applied in chunks, each in its own transaction. Holding a lock on a message of the third
    // chunk stops the worker there, deterministically part-way: two chunks committed, the third in progress.
    // The worker is started before the lock is taken: the blocker's transaction holds the cluster's xid horizon
    // back, and with it every other test file's feeds (a guide's 25 s long poll saw nothing while a worker started
    // on a loaded CI machine), so it stays open no longer than the test needs.
    const first = await startTestWorker(t.config);
    workers.push(first);
    const blocker = new pg.Client({ connectionString: t.config.databaseUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    const lockedIndex = Math.floor((2 * EVENT_CHUNK + EVENT_CHUNK / 2) / 2);
    await blocker.query('SELECT id FROM messages WHERE id = $1 FOR UPDATE', [messages[lockedIndex]!.id]);
    expect(
      (await postWebhook(t, statusesWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, statuses))).status,
    ).toBe(200);
    const blockedPid = await waitFor(
      async () => {
        // Asked on another connection: inside the blocker's transaction pg_stat_activity is a frozen snapshot.
        const { rows } = await sql<{ pid: number }>`
        SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%for update of "m"%'`.execute(
          t.db.on(),
        );
        return rows[0]?.pid;
      },
      'the first worker to wait on the locked message',
      60_000,
    );
    const progressed = await countEvents(t, tenant.account.wabaId, { processed: true });
    expect(progressed).toBe(2 * EVENT_CHUNK);

    // The crash: the worker stops, and its database connection dies in the middle of the third chunk.
    const crashing = first.crash();
    await blocker.query('SELECT pg_terminate_backend($1)', [blockedPid]);
    await crashing;
    await blocker.query('ROLLBACK');
    await blocker.end();
    const atCrash = await countEvents(t, tenant.account.wabaId, { processed: true });
    expect(atCrash).toBe(2 * EVENT_CHUNK);
    const halfway = await countMessages(t, { businessAccountId: tenant.account.businessAccountId, status: 'read' });
    expect(halfway).toBe(EVENT_CHUNK);

    const second = await startTestWorker(t.config);
    workers.push(second);
    const [delivery] = await waitFor(
      async () => {
        const rows = await deliveriesOf(t, tenant.account.wabaId);
        const pending = await countEvents(t, tenant.account.wabaId, { processed: false });
        return rows[0]?.status === 'processed' && pending === 0 ? rows : undefined;
        // A crashed worker's lock expires after 15 s; then the batch is finished (slower on a loaded machine).
      },
      'the restarted worker to finish the batch',
      150_000,
    );
    expect(delivery!.eventCount).toBe(2 * count);

    const events = await t.db
      .on()
      .selectFrom('events')
      .select(['dedupe_key as dedupeKey', 'processed'])
      .where('waba_id', '=', tenant.account.wabaId)
      .execute();
    expect(events).toHaveLength(2 * count);
    expect(new Set(events.map((e) => e.dedupeKey.toString('hex'))).size).toBe(2 * count);
    const after = await t.db
      .on()
      .selectFrom('messages')
      .select((eb) => ['status', eb.fn.countAll<number>().as('_count')])
      .where('business_account_id', '=', tenant.account.businessAccountId)
      .groupBy('status')
      .execute();
    expect(after).toEqual([{ status: 'read', _count: count }]);
    const { stamped } = await t.db
      .on()
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('stamped'))
      .where('business_account_id', '=', tenant.account.businessAccountId)
      .where('delivered_at', '=', new Date((now + 1) * 1000))
      .where('read_at', '=', new Date((now + 2) * 1000))
      .executeTakeFirstOrThrow();
    expect(stamped).toBe(count);
  }, 240_000);
});

describe('Webhooks: with the simulator posting in Meta’s format', () => {
  let stack: Stack;
  let tenant: OnboardedTenant;

  beforeAll(async () => {
    stack = await startStack({ worker: true });
    tenant = await onboard(stack, 'Webhook Sim Org');
  });
  afterAll(async () => {
    await stack?.close();
  });

  const events = (query: Record<string, string>) =>
    stack.http
      .get('/webhooks/events')
      .set('cookie', tenant.operator.cookie)
      .query({ wabaId: tenant.account.wabaId, ...query });
  const control = (path: string, body: unknown) =>
    fetch(`${stack.sim.url}/_sim/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it("lists a sent message's statuses under its upstream message id", async () => {
    const send = await stack.http.post('/messages').set(tenant.key.headers).send({
      phoneNumberId: tenant.account.phoneNumberId,
      to: '447700900123',
      type: 'template',
      templateName: 'hello_world',
      templateLanguage: 'en_US',
    });
    expect(send.status).toBe(200);
    const wamidOfSend = send.body.data.upstreamMessageId as string;
    const listed = await waitFor(async () => {
      const res = await events({ messageId: wamidOfSend });
      // The page and its total are two reads: both must show all three.
      const page = res.body.data;
      return page?.total === 3 &&
        page.items.length === 3 &&
        page.items.every((e: { processed: boolean }) => e.processed)
        ? page
        : undefined;
    }, 'sent, delivered and read events');
    // Listed in the order they were stored, which concurrent workers may make differ from Meta's order.
    type Listed = { status: string; title: string; recipient: string; raw: unknown };
    const byStatus = (listed.items as Listed[])
      .map((e) => [e.status, e.title, e.recipient])
      .sort((a, b) => a[0]!.localeCompare(b[0]!));
    expect(byStatus).toEqual([
      ['delivered', 'Message delivered', '447700900123'],
      ['read', 'Message read', '447700900123'],
      ['sent', 'Message sent', '447700900123'],
    ]);
    for (const e of listed.items as Listed[])
      expect(e.raw).toMatchObject({ biz_opaque_callback_data: `bm:${send.body.data.id}` });
  });

  it("makes a template Meta paused unsendable, and shows Meta's account updates", async () => {
    const paused = await control('template-status', {
      wabaId: tenant.account.wabaId,
      templateName: 'hello_world',
      language: 'en_US',
      event: 'PAUSED',
      reason: 'LOW_QUALITY',
    });
    expect(paused.status).toBe(200);
    expect(
      (await control('account-update', { wabaId: tenant.account.wabaId, event: 'ACCOUNT_RESTRICTION' })).status,
    ).toBe(200);
    // Until our worker has processed Meta's template event, a send reaches Meta and is refused there (a failed
    // message); once it has, we refuse it ourselves before calling Meta, naming the field.
    const template = await waitFor(async () => {
      const res = await events({ kind: 'template_status' });
      return res.body.data?.total === 1 && res.body.data.items[0].processed ? res.body.data.items[0] : undefined;
    }, 'the template event');
    expect(template).toMatchObject({
      eventType: 'message_template_status_update',
      title: 'Template hello_world (en_US) paused: LOW_QUALITY',
      status: null,
    });
    const refused = await stack.http.post('/messages').set(tenant.key.headers).send({
      phoneNumberId: tenant.account.phoneNumberId,
      to: '447700900124',
      type: 'template',
      templateName: 'hello_world',
      templateLanguage: 'en_US',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ field: 'templateName', message: expect.stringContaining('PAUSED') }]);
    expect(refused.body.data).toBeUndefined();

    const account = await waitFor(async () => {
      const res = await events({ kind: 'account_update' });
      return res.body.data?.total === 1 ? res.body.data.items[0] : undefined;
    }, 'the account event');
    expect(account).toMatchObject({
      eventType: 'account_update',
      title: 'Account update: ACCOUNT_RESTRICTION',
      processed: true,
    });
  });
});
