import { jest } from '@jest/globals';
import { sql } from 'kysely';
import pg from 'pg';
import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { metaJson } from '../../simulator/meta-json.js';
import { postWebhook, startTestWorker, unixNow, waitFor, type TestWorker } from '../utils/webhooks.js';
import { createTenant, wamid, type Tenant } from '../utils/factories.js';
import { countEvents, deliveriesOf, insertDeliveries } from '../utils/messaging-rows.js';
import { inboundWebhook } from '../../simulator/payloads/webhooks.js';
import { signatureHeader } from '../../simulator/payloads/signature.js';
import { schemaChange } from '../utils/schema-change.js';

jest.setTimeout(180_000);

/** `n` signed inbound-message deliveries for one tenant, posted at once; resolves when all are answered. */
function postConcurrently(
  t: TestApp,
  tenant: Tenant,
  n: number,
  text = 'hi',
): { ids: string[]; answers: Promise<Response[]> } {
  const ids = Array.from({ length: n }, () => wamid());
  const answers = Promise.all(
    ids.map((id) =>
      postWebhook(
        t,
        inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
          from: '447700900123',
          id,
          timestamp: String(unixNow()),
          text,
        }),
      ),
    ),
  );
  return { ids, answers };
}

interface Stored {
  id: number;
  status: string;
  batchId: string | null;
  xmin: string;
}

/**
 * The tenant's stored deliveries, waiting (the inbox) or processed. While one waits, `xmin` names the transaction (the
 * INSERT) that stored it and `batchId` its queue job; processing moves it into the weekly table (another transaction,
 * no batch).
 */
async function storedFor(t: TestApp, wabaId: string): Promise<Stored[]> {
  const { rows } = await sql<Stored>`
    SELECT id, status, batch_id AS "batchId", xmin::text AS xmin FROM webhook_inbox WHERE ${wabaId} = ANY(waba_ids)
    UNION ALL
    SELECT id, status, batch_id AS "batchId", xmin::text AS xmin FROM webhook_deliveries WHERE ${wabaId} = ANY(waba_ids)
    ORDER BY id`.execute(t.db.on());
  return rows;
}

describe('Webhook receiver: group commit', () => {
  let t: TestApp;
  let worker: TestWorker;
  let admin: pg.Client;

  beforeAll(async () => {
    // A wide window, so that the concurrent requests of a test share one batch deterministically.
    t = await startTestApp({
      WEBHOOK_BATCH_WINDOW_MS: '300',
      WEBHOOK_BATCH_MAX_ROWS: '50',
      WEBHOOK_SWEEP_INTERVAL_MS: '300',
    });
    worker = await startTestWorker(t.config);
    admin = new pg.Client({ connectionString: t.config.databaseUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await worker?.close();
    await t?.close();
  });

  it('stores concurrent deliveries with one INSERT, answers each 200, and processes the batch as one job', async () => {
    const tenant = await createTenant(t);
    // The rows' xmin names the transaction that wrote them last: the worker (its own queue: QUEUE_PREFIX is
    // per app) would move them out of the inbox as it processes, so it starts only once the INSERT has been looked at.
    await worker.close();
    const { answers } = postConcurrently(t, tenant, 12);
    const responses = await answers;
    expect(responses.map((r) => r.status)).toEqual(Array(12).fill(200));
    const rows = await storedFor(t, tenant.account.wabaId);
    expect(rows).toHaveLength(12);
    expect(rows.map((r) => r.status)).toEqual(Array(12).fill('received'));
    // One group commit (one INSERT, one transaction) and one queue job for all twelve rows.
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(1);
    expect(new Set(rows.map((r) => r.batchId)).size).toBe(1);
    expect(rows[0]!.batchId).not.toBeNull();
    worker = await startTestWorker(t.config);
    await waitFor(
      async () => ((await countEvents(t, tenant.account.wabaId, { processed: true })) === 12 ? true : undefined),
      '12 processed events',
    );
    const deliveries = await deliveriesOf(t, tenant.account.wabaId);
    expect(deliveries.every((d) => d.status === 'processed' && d.eventCount === 1)).toBe(true);
  });

  it('writes a full window early (WEBHOOK_BATCH_MAX_ROWS rows per INSERT at most), one queue job for the INSERTs of a job window', async () => {
    const small = await startTestApp({
      WEBHOOK_BATCH_WINDOW_MS: '300',
      WEBHOOK_BATCH_MAX_ROWS: '3',
      WEBHOOK_JOB_WINDOW_MS: '1000',
    });
    try {
      const tenant = await createTenant(small);
      const responses = await postConcurrently(small, tenant, 7).answers;
      expect(responses.map((r) => r.status)).toEqual(Array(7).fill(200));
      // Nothing takes `small`'s jobs (a QUEUE_PREFIX of its own) and the sweeper leaves a delivery for 5 s: all wait.
      const rows = await storedFor(small, tenant.account.wabaId);
      expect(rows).toHaveLength(7);
      expect(rows.map((r) => r.status)).toEqual(Array(7).fill('received'));
      const sizes = [
        ...rows.reduce((m, r) => m.set(r.xmin, (m.get(r.xmin) ?? 0) + 1), new Map<string, number>()).values(),
      ];
      expect(Math.max(...sizes)).toBeLessThanOrEqual(3);
      expect(sizes.length).toBeGreaterThanOrEqual(3);
      // Written within one WEBHOOK_JOB_WINDOW_MS: those INSERTs make one queue job.
      expect(new Set(rows.map((r) => r.batchId)).size).toBe(1);
    } finally {
      await small.close();
    }
  });

  it('answers no request before the commit that holds its row', async () => {
    const tenant = await createTenant(t);
    // A SHARE lock on the inbox makes every receiver's INSERT wait (it needs ROW EXCLUSIVE) until the lock is released.
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE webhook_inbox IN SHARE MODE');
    const answered: number[] = [];
    const { answers } = postConcurrently(t, tenant, 5);
    void answers.then(() => answered.push(Date.now()));
    try {
      await waitFor(async () => {
        // Asked on another connection: inside the locking transaction pg_stat_activity is a frozen snapshot.
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'insert into "webhook_inbox"%'`.execute(
          t.db.on(),
        );
        return rows[0]!.n >= 1 ? true : undefined;
      }, 'the batch INSERT to wait on the lock');
      await new Promise((r) => setTimeout(r, 300));
      expect(answered).toHaveLength(0);
    } finally {
      await admin.query('COMMIT');
    }
    const responses = await answers;
    expect(responses.map((r) => r.status)).toEqual(Array(5).fill(200));
    expect(await storedFor(t, tenant.account.wabaId)).toHaveLength(5);
  });

  it('answers 503 to every request of a batch whose INSERT fails, and stores none of them', async () => {
    const tenant = await createTenant(t);
    const poison = `poison-${tenant.account.wabaId}`;
    // A row carrying the marker makes the whole statement fail, as a constraint or a lost connection would.
    await admin.query(`
      CREATE OR REPLACE FUNCTION test_reject_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF position('${poison}' in convert_from(NEW.raw_body, 'UTF8')) > 0 THEN RAISE EXCEPTION 'poisoned delivery'; END IF;
        RETURN NEW;
      END $$`);
    await schemaChange(
      admin,
      `CREATE TRIGGER test_reject_poison_${tenant.account.wabaId} BEFORE INSERT ON webhook_inbox FOR EACH ROW EXECUTE FUNCTION test_reject_poison()`,
    );
    try {
      const good = postConcurrently(t, tenant, 4);
      const bad = postConcurrently(t, tenant, 1, poison);
      const responses = [...(await good.answers), ...(await bad.answers)];
      expect(responses.map((r) => r.status)).toEqual(Array(5).fill(503));
      for (const r of responses)
        expect(r.body).toMatchObject({ statusCode: 503, message: expect.stringContaining('could not be stored') });
      expect(await storedFor(t, tenant.account.wabaId)).toHaveLength(0);
    } finally {
      await schemaChange(admin, `DROP TRIGGER test_reject_poison_${tenant.account.wabaId} ON webhook_inbox`);
    }
    // Meta retries: the same deliveries, without the poisoned one, are then stored and acknowledged.
    const retried = await postConcurrently(t, tenant, 4).answers;
    expect(retried.map((r) => r.status)).toEqual(Array(4).fill(200));
    expect(await storedFor(t, tenant.account.wabaId)).toHaveLength(4);
  });

  it('processes the good deliveries of a batch that holds a bad one, and dead-letters only the bad one', async () => {
    const tenant = await createTenant(t);
    const inbound = () =>
      metaJson(
        inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
          from: '447700900123',
          id: wamid(),
          timestamp: String(unixNow()),
          text: 'hi',
        }),
      );
    const bodies = [inbound(), 'this is not json', inbound()];
    // Stored as one group commit whose job was lost (Redis down at the time): the sweeper enqueues the batch.
    const batchId = `test-${tenant.account.wabaId}`;
    await insertDeliveries(
      t,
      bodies.map((b) => ({
        raw_body: Buffer.from(b),
        signature: signatureHeader(b, t.config.whatsappAppSecret),
        waba_ids: [tenant.account.wabaId],
        batch_id: batchId,
        received_at: new Date(Date.now() - 10_000),
      })),
    );
    const rows = await waitFor(async () => {
      const all = await deliveriesOf(t, tenant.account.wabaId);
      return all.every((d) => d.status !== 'received') ? all : undefined;
    }, 'the batch to be processed');
    expect(rows.map((r) => r.status)).toEqual(['processed', 'failed', 'processed']);
    expect(rows[1]!.lastError).toContain('not valid JSON');
    expect(await countEvents(t, tenant.account.wabaId, { processed: true })).toBe(2);
  });

  it('stores a delivery whose entry id holds NUL (never a real account) without failing the others of its batch', async () => {
    const tenant = await createTenant(t);
    const good = postConcurrently(t, tenant, 3);
    const odd = postWebhook(
      t,
      inboundWebhook(`${tenant.account.wabaId}\u0000x`, tenant.account.phoneNumberId, {
        from: '447700900123',
        id: wamid(),
        timestamp: String(unixNow()),
        text: 'hi',
      }),
    );
    const responses = [...(await good.answers), await odd];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await storedFor(t, tenant.account.wabaId)).toHaveLength(3);
  });
});
