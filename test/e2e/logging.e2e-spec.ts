import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import request from 'supertest';
import { metaJson } from '../../simulator/meta-json.js';
import { DeliveryQueue, deliveryJobIds } from '../../src/webhooks/delivery-queue.js';
import { createTenant, eventually, helloWorld, onboard, recipient, wamid, type Tenant } from '../utils/factories.js';
import { allDeliveries } from '../utils/delivery-rows.js';
import { deliveriesOf, insertDeliveries } from '../utils/messaging-rows.js';
import { LogCapture } from '../utils/log-capture.js';
import { startStack, type Stack } from '../utils/stack.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { startTestWorker, unixNow, waitFor, type TestWorker } from '../utils/webhooks.js';
import { fieldWebhook, inboundWebhook } from '../../simulator/payloads/webhooks.js';
import { signatureHeader } from '../../simulator/payloads/signature.js';
import { schemaChange } from '../utils/schema-change.js';

jest.setTimeout(180_000);

const newId = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;

/** Signed inbound-message deliveries for the tenant, one per text, each with a request id of its own. */
function webhookPosts(tenant: Tenant, texts: string[]): { id: string; body: string }[] {
  return texts.map((text) => ({
    id: newId('hook'),
    body: metaJson(
      inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
        from: '447700900123',
        id: wamid(),
        timestamp: String(unixNow()),
        text,
      }),
    ),
  }));
}

/** Posts them all at once, as Meta does, each with its x-request-id; resolves with the answers in order. */
function postAll(t: TestApp, posts: { id: string; body: string }[]) {
  return Promise.all(
    posts.map((p) =>
      request(t.url)
        .post('/webhooks/whatsapp')
        .set('content-type', 'application/json')
        .set('x-request-id', p.id)
        .set('x-hub-signature-256', signatureHeader(p.body, t.config.whatsappAppSecret))
        .send(p.body),
    ),
  );
}

describe('Logging: every line of a request carries its request id, every line of a job its job and delivery ids', () => {
  describe('a send whose upstream call fails: the upstream client, the send service and the request line', () => {
    const logs = new LogCapture();
    let stack: Stack;
    let tenant: Tenant;

    beforeAll(async () => {
      stack = await startStack({ env: { LOG_LEVEL: 'info' }, core: { logDestination: logs.destination } });
      tenant = await onboard(stack);
    });
    afterAll(() => stack?.close());

    it('tags each of six concurrent sends’ lines with its own id, and no line with another’s', async () => {
      // The simulator rejects these recipients with different Meta codes, so each line can be told apart by content too.
      const codes: Record<string, number> = { '15550000001': 131026, '15550000007': 131056 };
      const sends = Array.from({ length: 6 }, (_, i) => ({
        id: newId(`send${i}`),
        to: i % 2 === 0 ? '15550000001' : '15550000007',
      }));
      const answers = await Promise.all(
        sends.map((s) =>
          stack.http.post('/messages').set(tenant.key.headers).set('x-request-id', s.id).send(helloWorld(tenant, s.to)),
        ),
      );

      for (const [i, s] of sends.entries()) {
        const answer = answers[i]!;
        expect(answer.headers['x-request-id']).toBe(s.id);
        expect(answer.status).toBeGreaterThanOrEqual(400);
        const messageId = answer.body.data.id as number;
        const mine = logs.where('reqId', s.id);
        // Three layers: the upstream client, the send service, the HTTP request line.
        expect(mine.map((l) => l.msg).sort()).toEqual([
          'request completed',
          'send rejected upstream',
          'upstream call failed',
        ]);
        // The reason in words too, the same the caller and the stored message get.
        expect(answer.body.data.error.title).toEqual(expect.any(String));
        expect(mine.find((l) => l.msg === 'upstream call failed')).toMatchObject({
          operation: 'sendMessage',
          code: codes[s.to],
          httpStatus: 400,
          title: answer.body.data.error.title,
        });
        expect(mine.find((l) => l.msg === 'send rejected upstream')).toMatchObject({ messageId, code: codes[s.to] });
        expect(mine.find((l) => l.msg === 'request completed')).toMatchObject({
          method: 'POST',
          path: '/messages',
          status: answer.status,
        });
        // No bleed: whatever line names this message carries this request's id.
        for (const line of logs.where('messageId', messageId)) expect(line.reqId).toBe(s.id);
      }
      // Every failed upstream call of the burst was logged inside one of the six requests.
      const upstreamLines = logs.where('msg', 'upstream call failed');
      expect(upstreamLines).toHaveLength(6);
      expect(new Set(upstreamLines.map((l) => l.reqId))).toEqual(new Set(sends.map((s) => s.id)));
    });
  });

  describe('one message through the logs (issue 43): the send, its call to Meta, the status webhooks, the worker', () => {
    const apiLogs = new LogCapture();
    const workerLogs = new LogCapture();
    let stack: Stack;
    let tenant: Tenant;

    beforeAll(async () => {
      stack = await startStack({ env: { LOG_LEVEL: 'info' }, core: { logDestination: apiLogs.destination } });
      await stack.startWorker({ logDestination: workerLogs.destination });
      tenant = await onboard(stack);
    });
    afterAll(() => stack?.close());

    it("logs the send with its message id, wamid and key id, and the Meta call, under the request's id; the worker logs each delivery of the statuses at info under the webhook requests' ids", async () => {
      const reqId = newId('follow');
      const sent = await stack.http
        .post('/messages')
        .set(tenant.key.headers)
        .set('x-request-id', reqId)
        .send(helloWorld(tenant, recipient()));
      expect(sent.status).toBe(200);
      const { id: messageId, upstreamMessageId } = sent.body.data as { id: number; upstreamMessageId: string };

      const mine = apiLogs.where('reqId', reqId);
      expect(mine.map((l) => l.msg).sort()).toEqual(['message sent', 'request completed', 'upstream call']);
      expect(mine.find((l) => l.msg === 'message sent')).toMatchObject({
        level: 30,
        messageId,
        wamid: upstreamMessageId,
        keyId: tenant.key.id,
        phoneNumberId: tenant.account.phoneNumberId,
        type: 'template',
      });
      expect(mine.find((l) => l.msg === 'upstream call')).toMatchObject({
        level: 30,
        operation: 'sendMessage',
        outcome: 'ok',
        httpStatus: 200,
        latencyMs: expect.any(Number),
      });

      // The simulator posts the statuses (sent, delivered, read) as webhooks, each POST with a request id of its own.
      await eventually(
        async () => {
          const res = await stack.http.get(`/messages/${messageId}`).set(tenant.key.headers);
          return res.body.data.status === 'read' ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
      const hooks = apiLogs.lines
        .filter((l) => l.msg === 'request completed' && l.path === '/webhooks/whatsapp' && l.status === 200)
        .map((l) => l.reqId as string);
      expect(hooks.length).toBeGreaterThanOrEqual(3);
      // Each webhook request's id is on the worker's line for the deliveries it stored (the job carries it).
      const processed = await waitFor(
        () => {
          const lines = workerLogs.where('msg', 'webhook deliveries processed');
          const carried = new Set(lines.flatMap((l) => (l.reqIds as string[] | undefined) ?? []));
          return hooks.every((id) => carried.has(id)) ? lines : undefined;
        },
        "the worker's lines for every status webhook",
        30_000,
      );
      for (const line of processed.filter((l) =>
        (l.reqIds as string[] | undefined)?.some((id) => hooks.includes(id)),
      )) {
        expect(line).toMatchObject({
          level: 30,
          jobId: expect.any(String),
          deliveryIds: expect.any(Array),
          items: expect.any(Array),
          events: expect.any(Number),
          ms: expect.any(Number),
        });
        expect((line.items as number[]).length).toBe((line.deliveryIds as number[]).length);
        expect((line.items as number[]).every((n) => n >= 1)).toBe(true);
      }
    });
  });

  describe.each([
    ['the fast path', 'true'],
    ['Express', 'false'],
  ])('webhook deliveries on %s sharing one group commit that fails', (_label, fastPath) => {
    const logs = new LogCapture();
    let t: TestApp;
    let admin: pg.Client;

    beforeAll(async () => {
      // A wide window: the concurrent requests share one batch (one INSERT) deterministically.
      t = await startTestApp(
        { LOG_LEVEL: 'info', WEBHOOK_FAST_PATH: fastPath, WEBHOOK_BATCH_WINDOW_MS: '300' },
        { logDestination: logs.destination },
      );
      admin = new pg.Client({ connectionString: t.config.databaseUrl });
      await admin.connect();
    });
    afterAll(async () => {
      await admin?.end();
      await t?.close();
    });

    it('logs "could not be stored" once per request, each with its own id', async () => {
      const tenant = await createTenant(t);
      const poison = `poison-${tenant.account.wabaId}`;
      const trigger = `test_log_poison_${tenant.account.wabaId}`;
      // One poisoned row makes the batch's INSERT fail for every request in it (as a lost connection would).
      await admin.query(`
        CREATE OR REPLACE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF position('${poison}' in convert_from(NEW.raw_body, 'UTF8')) > 0 THEN RAISE EXCEPTION 'poisoned delivery'; END IF;
          RETURN NEW;
        END $$`);
      await schemaChange(
        admin,
        `CREATE TRIGGER ${trigger} BEFORE INSERT ON webhook_inbox FOR EACH ROW EXECUTE FUNCTION ${trigger}()`,
      );
      const posts = webhookPosts(tenant, ['hi', 'hello', poison]);
      try {
        const answers = await postAll(t, posts);
        expect(answers.map((a) => a.status)).toEqual([503, 503, 503]);
      } finally {
        await schemaChange(admin, `DROP TRIGGER ${trigger} ON webhook_inbox`);
        await admin.query(`DROP FUNCTION ${trigger}()`);
      }
      for (const p of posts) {
        const mine = logs.where('reqId', p.id);
        expect(mine.map((l) => l.msg).sort()).toEqual(['request completed', 'webhook delivery could not be stored']);
        expect(mine.find((l) => l.msg === 'request completed')).toMatchObject({
          path: '/webhooks/whatsapp',
          status: 503,
        });
      }
      const stored = logs.where('msg', 'webhook delivery could not be stored');
      expect(stored.map((l) => l.reqId).sort()).toEqual(posts.map((p) => p.id).sort());
    });

    it('logs the work shared by several requests (their queue job, not enqueued) with no request id, naming the deliveries', async () => {
      const shared = new LogCapture();
      const noRedis = await startTestApp(
        {
          LOG_LEVEL: 'info',
          WEBHOOK_FAST_PATH: fastPath,
          WEBHOOK_BATCH_WINDOW_MS: '300',
          REDIS_URL: 'redis://127.0.0.1:9',
        },
        { logDestination: shared.destination },
      );
      try {
        const tenant = await createTenant(t);
        const posts = webhookPosts(tenant, ['hi', 'hello']);
        const answers = await postAll(noRedis, posts);
        expect(answers.map((a) => a.status)).toEqual([200, 200]);
        const stored = await deliveriesOf(t, tenant.account.wabaId);
        expect(stored).toHaveLength(2);
        const notEnqueued = await waitFor(
          () => shared.where('msg', 'webhook deliveries stored but not enqueued; the sweeper will enqueue them')[0],
          'the enqueue to time out',
        );
        // One job for both requests' deliveries: it belongs to neither request.
        expect(notEnqueued.deliveryIds).toEqual(stored.map((d) => d.id));
        expect(notEnqueued.reqId).toBeUndefined();
        for (const p of posts) expect(shared.where('reqId', p.id).map((l) => l.msg)).toEqual(['request completed']);
      } finally {
        await noRedis.close();
      }
    });
  });

  describe('the worker', () => {
    const workerLogs = new LogCapture();
    let t: TestApp;
    let worker: TestWorker;

    beforeAll(async () => {
      // The API's lines are not looked at here, just kept off the test output.
      t = await startTestApp({ LOG_LEVEL: 'info' }, { logDestination: new LogCapture().destination });
      worker = await startTestWorker(t.config, { logDestination: workerLogs.destination });
    });
    afterAll(async () => {
      await worker?.close();
      await t?.close();
    });

    it('tags the lines of a job (worker, processor, effects) with its job id and the deliveries they concern', async () => {
      const tenant = await createTenant(t);
      const bodies = [
        metaJson(fieldWebhook(tenant.account.wabaId, 'account_update', { event: 'ACCOUNT_RESTRICTION' })),
        'this is not json',
        metaJson(
          inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
            from: '447700900123',
            id: wamid(),
            timestamp: String(unixNow()),
            text: 'hi',
          }),
        ),
      ];
      // One batch job of three deliveries, one of which cannot be parsed. Stored just now: younger than the sweeper's
      // 5 s, so only this file's worker (whose queue gets the job) processes them.
      const batchId = `log-${tenant.account.wabaId}`;
      const stored = await insertDeliveries(
        t,
        bodies.map((b) => ({
          raw_body: Buffer.from(b),
          signature: signatureHeader(b, t.config.whatsappAppSecret),
          waba_ids: [tenant.account.wabaId],
          batch_id: batchId,
        })),
      );
      const [account, broken, inbound] = stored.map((d) => d.id);
      const ids = [account!, broken!, inbound!];
      // A processed delivery leaves the inbox and its batch behind: the batch's rows are looked up by id.
      const inBatch = () => t.db.on().selectFrom(allDeliveries(t.db)).select(['id', 'status']).where('id', 'in', ids);
      const jobId = deliveryJobIds.batch(batchId);
      await t.app.get(DeliveryQueue).enqueue({ deliveryIds: ids }, jobId);
      await waitFor(async () => {
        const rows = await inBatch().execute();
        return rows.length === ids.length && rows.every((d) => d.status !== 'received') ? rows : undefined;
      }, 'the batch to be processed');

      const ofJob = workerLogs.where('jobId', jobId);
      // The batch as a whole, then each delivery on its own: the bad one dead-lettered, the account update logged.
      expect(ofJob.find((l) => l.msg === 'webhook batch failed; processing its deliveries one by one')).toMatchObject({
        deliveryIds: ids,
      });
      expect(ofJob.find((l) => l.msg === 'webhook delivery processing failed')).toMatchObject({
        deliveryIds: [broken],
        final: true,
      });
      expect(ofJob.find((l) => l.msg === 'webhook deliveries dead-lettered')).toMatchObject({ deliveryIds: [broken] });
      expect(
        ofJob.find((l) => l.msg === 'account-level webhook event' && l.wabaId === tenant.account.wabaId),
      ).toMatchObject({ deliveryIds: [account] });
      // Every line about these deliveries carries the job's id.
      const aboutThem = workerLogs.lines.filter(
        (l) => Array.isArray(l.deliveryIds) && (l.deliveryIds as number[]).some((id) => ids.includes(id)),
      );
      expect(aboutThem.length).toBeGreaterThanOrEqual(4);
      for (const line of aboutThem) expect(line.jobId).toBe(jobId);
    });
  });
});
