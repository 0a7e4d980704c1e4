import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Response } from 'supertest';
import { inboundWebhook } from '../../simulator/payloads/webhooks.js';
import { RedisService } from '../../src/core/redis/redis.service.js';
import { receiversSaturatedKey } from '../../src/webhooks/acks-first.js';
import { createTenant, wamid, type Tenant } from '../utils/factories.js';
import { poll } from '../utils/poll.js';
import { scratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { postWebhook, startTestWorker, unixNow, type TestWorker } from '../utils/webhooks.js';
import { statementsWaitingOnLock } from '../utils/db-locks.js';

const HOLD_MAX_MS = 6000;

/**
 * Acknowledgements first (docs/operations-and-scaling.md): an API process with WEBHOOK_HOLD_PROCESSING_IN_FLIGHT
 * acknowledgements waiting says so in Redis; the workers then hold processing, for at most
 * WEBHOOK_HOLD_PROCESSING_MAX_MS, and catch up after. A database of its own: the test locks `webhook_inbox`.
 */
describe('Acknowledgements first: the workers hold processing while a receiver is saturated', () => {
  let database: ScratchDatabase;
  let t: TestApp;
  let worker: TestWorker;
  let tenant: Tenant;
  let admin: pg.Client;
  let observer: pg.Client;
  let saturated: () => Promise<boolean>;
  let say: () => Promise<unknown>;
  let unsay: () => Promise<unknown>;

  beforeAll(async () => {
    database = await scratchDatabase();
    t = await startTestApp({
      DATABASE_URL: database.url,
      WEBHOOK_HOLD_PROCESSING_IN_FLIGHT: '3',
      WEBHOOK_HOLD_PROCESSING_MAX_MS: String(HOLD_MAX_MS),
    });
    worker = await startTestWorker(t.config);
    tenant = await createTenant(t);
    admin = new pg.Client({ connectionString: database.url });
    observer = new pg.Client({ connectionString: database.url });
    await Promise.all([admin.connect(), observer.connect()]);
    const redis = t.app.get(RedisService).client;
    const key = receiversSaturatedKey(t.config);
    saturated = async () => (await redis.exists(key)) === 1;
    // What a saturated receiver says, for as long as the test wants.
    say = () => redis.set(key, '1', 'PX', 60_000);
    unsay = () => redis.del(key);
  });
  afterAll(async () => {
    await admin?.end();
    await observer?.end();
    await worker?.close();
    await t?.close();
    await database?.drop();
  });

  const post = (): Promise<Response> =>
    postWebhook(
      t,
      inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
        from: '447700900123',
        id: wamid(),
        timestamp: unixNow(),
        text: 'hello',
      }),
    ).then((r: Response) => r);
  /** The status of the tenant's newest delivery, waiting (the inbox) or processed (the weekly table). */
  const newest = async () => {
    const { rows } = await admin.query<{ status: string }>(
      `SELECT status FROM (
         SELECT id, status FROM webhook_inbox WHERE $1 = ANY(waba_ids)
         UNION ALL
         SELECT id, status FROM webhook_deliveries WHERE $1 = ANY(waba_ids)
       ) d ORDER BY id DESC LIMIT 1`,
      [tenant.account.wabaId],
    );
    return rows[0]?.status;
  };
  /** The receiver's INSERTs waiting on the test's lock (asked on another connection than the locking one). */
  const waitingOnLock = () => statementsWaitingOnLock(observer, 'insert into "webhook_inbox"%');

  it('says so with WEBHOOK_HOLD_PROCESSING_IN_FLIGHT acknowledgements waiting, not with fewer, and stops once they are answered', async () => {
    await admin.query('BEGIN');
    // Every INSERT into webhook_inbox waits (it needs ROW EXCLUSIVE) until the lock is released.
    await admin.query('LOCK TABLE webhook_inbox IN SHARE MODE');
    const answers: Promise<Response>[] = [];
    try {
      answers.push(post(), post());
      await poll(waitingOnLock, { done: (n) => n >= 1, what: 'the first batch to wait on the lock' });
      await sleep(400);
      expect(await saturated()).toBe(false);
      answers.push(post(), post());
      await poll(saturated, { what: 'the receiver to say it is saturated', timeoutMs: 30_000 });
    } finally {
      await admin.query('COMMIT');
    }
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    // Its word lasts 250 ms once it stops saying it.
    await poll(async () => !(await saturated()), { what: 'the receiver to stop saying it', timeoutMs: 10_000 });
    await poll(newest, { done: (s) => s === 'processed', what: 'the deliveries to be processed' });
  });

  it('a delivery stored while a receiver says so waits, and is processed as soon as it stops saying it', async () => {
    await say();
    try {
      // The worker looks every 50 ms.
      await sleep(300);
      expect((await post()).status).toBe(200);
      await sleep(1000);
      expect(await newest()).toBe('received');
    } finally {
      await unsay();
    }
    const unsaid = Date.now();
    await poll(newest, { done: (s) => s === 'processed', what: 'the delivery to be processed' });
    // Not the longest hold's end (at least 4.4 s after this).
    expect(Date.now() - unsaid).toBeLessThan(3000);
  });

  it('holds no longer than WEBHOOK_HOLD_PROCESSING_MAX_MS: a receiver saturated for good still has its deliveries processed', async () => {
    const since = Date.now();
    await say();
    try {
      await sleep(300);
      expect((await post()).status).toBe(200);
      await poll(newest, {
        done: (s) => s === 'processed',
        what: 'the delivery to be processed while still saturated',
      });
      expect(await saturated()).toBe(true);
      expect(Date.now() - since).toBeGreaterThanOrEqual(HOLD_MAX_MS - 100);
    } finally {
      await unsay();
    }
  });
});
