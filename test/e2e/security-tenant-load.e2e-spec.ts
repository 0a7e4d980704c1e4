import pg from 'pg';
import type { Response } from 'supertest';
import { inboundWebhook } from '../../simulator/payloads/webhooks.js';
import { createTenant, wamid, type Tenant } from '../utils/factories.js';
import { scratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { poll } from '../utils/poll.js';
import { postWebhook, unixNow } from '../utils/webhooks.js';
import { statementsWaitingOnLock } from '../utils/db-locks.js';

const ORGANIZATION_BUSY = { statusCode: 429, message: 'Too many requests in flight for this organization' };

/**
 * Issue 37, finding 2 (medium): one key pair could take the whole database pool. 200 concurrent list reads of one
 * key answered 500s ("timeout exceeded when trying to connect"), another tenant's list waited seconds and readiness
 * answered 503. Here the pool has 6 connections, 2 reserved (4 for reads together), and an organization may have 4
 * reads in flight. A lock on `messages` (held by the test on its own connection) keeps every list read waiting in
 * PostgreSQL, holding its connection, for as long as the test wants. The app has a database of its own: that lock on
 * the suite's database would hold every `messages` statement of the file running beside this one (and count them).
 */
describe('Security: one tenant cannot take the database pool', () => {
  let database: ScratchDatabase;
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  let locker: pg.Client;
  let observer: pg.Client;

  beforeAll(async () => {
    database = await scratchDatabase();
    t = await startTestApp({
      DATABASE_URL: database.url,
      DATABASE_POOL_SIZE: '6',
      DATABASE_POOL_RESERVED: '2',
      ORGANIZATION_READS_IN_FLIGHT: '4',
      // Keys stay cached while the pool is held on purpose.
      API_KEY_CACHE_TTL_MS: '60000',
    });
    a = await createTenant(t);
    b = await createTenant(t);
    locker = new pg.Client({ connectionString: database.url });
    observer = new pg.Client({ connectionString: database.url });
    await Promise.all([locker.connect(), observer.connect()]);
  });
  afterAll(async () => {
    await locker?.end();
    await observer?.end();
    await t?.close();
    await database?.drop();
  });

  const list = (tenant: Tenant) =>
    t.http
      .get('/messages?limit=100')
      .set({ 'x-access-key': tenant.key.accessKey, 'x-secret-key': tenant.key.secretKey })
      .then((res: Response) => res);

  /** Statements of the app waiting on the test's lock of `messages` (asked outside the locking transaction). */
  const waitingOnLock = () => statementsWaitingOnLock(observer, '%from "messages"%');

  it('past ORGANIZATION_READS_IN_FLIGHT an organization is answered 429 + Retry-After; reads never take the reserved connections, so webhook ingest and readiness carry on; every read answers 200 once the database frees up', async () => {
    // Warm: each key pair known to the process (its lookup cached) before the pool is busy.
    expect((await list(a)).status).toBe(200);
    expect((await list(b)).status).toBe(200);

    await locker.query('BEGIN');
    await locker.query('LOCK TABLE messages IN ACCESS EXCLUSIVE MODE');
    const reads: Promise<Response>[] = [];
    try {
      reads.push(list(a), list(a), list(a), list(a));
      await poll(waitingOnLock, {
        done: (n) => n === 4,
        what: 'four of the organization’s reads to wait on the lock',
        timeoutMs: 60_000,
      });
      const refused = await list(a);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(ORGANIZATION_BUSY);
      expect(refused.headers['retry-after']).toBe('1');

      // Another organization's reads are admitted and wait their turn for a read's share of the pool, not in it.
      reads.push(list(b), list(b));
      // Ingest still finds a connection (one of the reserved), and readiness has its own.
      const delivered = await postWebhook(
        t,
        inboundWebhook(b.account.wabaId, b.account.phoneNumberId, {
          from: '447700900123',
          id: wamid(),
          timestamp: unixNow(),
          text: 'hello',
        }),
      );
      expect(delivered.status).toBe(200);
      expect((await t.http.get('/health/ready')).status).toBe(200);
      expect(await waitingOnLock()).toBe(4);
    } finally {
      await locker.query('COMMIT');
    }
    const answers = await Promise.all(reads);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('no free connection within the pool’s wait is 503 + Retry-After in the envelope, never 500; readiness stays 200', async () => {
    expect((await list(a)).status).toBe(200);
    const held = await Promise.all(Array.from({ length: 6 }, () => t.db.pool.connect()));
    try {
      const res = await list(a);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body).toEqual({
        statusCode: 503,
        message: 'Service Unavailable: the database is busy, try again shortly',
        errors: [{ field: 'database', message: 'No database connection was free in time' }],
      });
      expect((await t.http.get('/health/ready')).status).toBe(200);
    } finally {
      for (const client of held) client.release();
    }
    expect((await list(a)).status).toBe(200);
  });
});
