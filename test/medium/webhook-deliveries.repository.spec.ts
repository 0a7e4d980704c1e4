import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { WebhookDeliveriesRepository } from '../../src/webhooks/deliveries/webhook-deliveries.repository.js';
import {
  incomingDelivery,
  insertBusinessAccount,
  insertDelivery,
  insertOrganization,
  metaId,
  momentIn,
  repositoryUnderTest,
} from '../utils/factories.js';
import { sql } from 'kysely';
import { columns } from '../../src/core/db/database.js';
import { countRows } from '../utils/db-rows.js';

describe('WebhookDeliveriesRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new WebhookDeliveriesRepository(db));

  /** A business account's deliveries as the console lists them. */
  async function listed(wabaId: string) {
    return (await t.repo.listForAccounts([{ wabaId }], { page: 1, limit: 100 })).rows;
  }

  describe('storeBatch', () => {
    it('stores a batch in the inbox in one commit, ids in the order of the rows, each with the batch id', async () => {
      const batchId = randomUUID();
      const rows = [incomingDelivery(), incomingDelivery({ wabaIds: [metaId(), metaId()] }), incomingDelivery()];
      const ids = await t.repo.storeBatch(batchId, rows);

      expect(ids).toHaveLength(3);
      const stored = await t.repo.findForProcessing(ids);
      expect(stored.map((d) => [d.id, Buffer.from(d.rawBody).toString(), d.status, d.eventCount])).toEqual(
        rows.map((r, i) => [ids[i], r.rawBody.toString(), 'received', null]),
      );
      const saved = await t.db
        .on()
        .selectFrom('webhook_inbox')
        .select(columns.webhook_inbox)
        .where('id', 'in', ids)
        .orderBy('id')
        .execute();
      expect(saved.map((d) => [d.id, d.signature, d.wabaIds, d.batchId])).toEqual(
        rows.map((r, i) => [ids[i], r.signature, r.wabaIds, batchId]),
      );
      // One INSERT: one transaction wrote every row.
      const { rows: writers } = await sql<{
        xmin: string;
      }>`SELECT DISTINCT xmin::text FROM webhook_inbox WHERE id = ANY(${ids}::bigint[])`.execute(t.db.on());
      expect(writers).toHaveLength(1);
    });

    it('stores none of the batch when PostgreSQL refuses one row, and the next batch of that size still stores', async () => {
      const batchId = randomUUID();
      // text cannot hold a NUL byte: PostgreSQL rejects the parameter, so the whole INSERT fails.
      const rows = [incomingDelivery(), incomingDelivery({ signature: 'sha256=ab\u0000cd' }), incomingDelivery()];
      await expect(t.repo.storeBatch(batchId, rows)).rejects.toThrow(/0x00/);
      expect(await countRows(t.db, 'webhook_inbox', { batch_id: batchId })).toBe(0);
      expect(await listed(rows[0]!.wabaIds[0]!)).toEqual([]);

      const retry = await t.repo.storeBatch(batchId, [rows[0]!, incomingDelivery(), rows[2]!]);
      expect(await countRows(t.db, 'webhook_inbox', { batch_id: batchId })).toBe(3);
      expect((await listed(rows[0]!.wabaIds[0]!)).map((d) => d.id)).toEqual([retry[0]]);
    });
  });

  it('finds the asked deliveries in id order, skipping unknown ids', async () => {
    const wabaId = metaId();
    const [a, b] = await t.repo.storeBatch(randomUUID(), [
      incomingDelivery({ wabaIds: [wabaId] }),
      incomingDelivery({ wabaIds: [wabaId] }),
    ]);
    const done = await insertDelivery(t.db, { wabaIds: [wabaId], status: 'processed', eventCount: 4 });
    const found = await t.repo.findForProcessing([done.id, b!, 2_000_000_000, a!]);
    expect(found.map((d) => [d.id, d.status, d.eventCount])).toEqual([
      [a, 'received', null],
      [b, 'received', null],
      [done.id, 'processed', 4],
    ]);
    // One received weeks ago (another partition than this week's) is found too, with the recent ones.
    const old = await insertDelivery(t.db, {
      wabaIds: [wabaId],
      receivedAt: new Date(Date.now() - 40 * 24 * 3600_000),
    });
    expect((await t.repo.findForProcessing([a!, old.id])).map((d) => d.id)).toEqual(
      [a, old.id].sort((x, y) => x! - y!),
    );
  });

  it('marks deliveries processed with their event counts, leaving one processed before as it was', async () => {
    const wabaId = metaId();
    const [a, b] = await t.repo.storeBatch(randomUUID(), [
      incomingDelivery({ wabaIds: [wabaId] }),
      incomingDelivery({ wabaIds: [wabaId] }),
    ]);
    await t.repo.recordFailure([a!], 'upstream timeout', false);
    const before = new Date('2026-01-01T00:00:00.000Z');
    const earlier = await insertDelivery(t.db, {
      wabaIds: [wabaId],
      status: 'processed',
      eventCount: 7,
      processedAt: before,
    });

    const receivedAt = new Map((await t.repo.findForProcessing([a!, b!])).map((d) => [d.id, d.receivedAt]));
    await t.repo.markProcessed([
      { id: a!, events: 3 },
      { id: b!, events: 0 },
      { id: earlier.id, events: 99 },
    ]);
    const rows = new Map((await listed(wabaId)).map((d) => [d.id, d]));
    expect(rows.get(a!)).toMatchObject({ status: 'processed', eventCount: 3, attempts: 2, lastError: null });
    expect(rows.get(b!)).toMatchObject({ status: 'processed', eventCount: 0, attempts: 1 });
    expect(rows.get(a!)!.processedAt).toBeInstanceOf(Date);
    expect(rows.get(a!)!.receivedAt).toEqual(receivedAt.get(a!));
    expect(rows.get(earlier.id)).toMatchObject({
      status: 'processed',
      eventCount: 7,
      attempts: 0,
      processedAt: before,
    });
  });

  it('moves a processed delivery out of the inbox into the weekly table without its bytes, once', async () => {
    const wabaId = metaId();
    const batchId = randomUUID();
    const [id] = await t.repo.storeBatch(batchId, [incomingDelivery({ wabaIds: [wabaId] })]);
    const [waiting] = await t.repo.findForProcessing([id!]);
    await t.repo.markProcessed([{ id: id!, events: 2 }]);
    // Again (a second worker that ran the same job): nothing left to move, nothing stored twice.
    await t.repo.markProcessed([{ id: id!, events: 5 }]);

    expect(await countRows(t.db, 'webhook_inbox', { id: id! })).toBe(0);
    const weekly = await t.db
      .on()
      .selectFrom('webhook_deliveries')
      .select(columns.webhook_deliveries)
      .where('id', '=', id!)
      .execute();
    expect(weekly).toHaveLength(1);
    expect(weekly[0]).toMatchObject({
      status: 'processed',
      eventCount: 2,
      signature: '',
      batchId: null,
      receivedAt: waiting!.receivedAt,
      originalReceivedAt: null,
    });
    expect(weekly[0]!.rawBody).toHaveLength(0);
    expect(await t.repo.findForProcessing([id!])).toMatchObject([{ id, status: 'processed', eventCount: 2 }]);
  });

  it('stores a delivery processed more than a day after it arrived in the current week, saying when it arrived', async () => {
    const wabaId = metaId();
    const arrived = new Date(Date.now() - 40 * 24 * 3600_000);
    const dead = await insertDelivery(t.db, { wabaIds: [wabaId], status: 'failed', receivedAt: arrived });
    const before = Date.now();
    await t.repo.markProcessed([{ id: dead.id, events: 1 }]);

    const [row] = await t.db
      .on()
      .selectFrom('webhook_deliveries')
      .select(['received_at as receivedAt', 'original_received_at as originalReceivedAt'])
      .where('id', '=', dead.id)
      .execute();
    expect(row!.originalReceivedAt).toEqual(arrived);
    expect(row!.receivedAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect((await listed(wabaId))[0]).toMatchObject({ id: dead.id, status: 'processed', receivedAt: arrived });
  });

  /**
   * Regression guard: on a table autovacuum had not analysed yet, a plan made for markProcessed's values hash-joined a
   * sequential scan of the whole table (measured on the weekly partitions: 12 ms per chunk of 32 instead of 0.5 ms).
   * Planned here, with the values the repository sends, on a copy of the inbox analysed empty and then grown to
   * 20,000 rows: the inbox's rows must be reached through an index.
   */
  it("moves processed deliveries through the inbox's primary key, whatever its statistics say", async () => {
    // A chunk as the worker marks them (32 deliveries).
    const ids = await t.repo.storeBatch(
      randomUUID(),
      Array.from({ length: 32 }, () => incomingDelivery()),
    );
    const id = Math.min(...ids);
    const spy = jest.spyOn(t.db.pool, 'query');
    let statement: { text: string; values: unknown[] };
    try {
      await t.repo.markProcessed(ids.map((id) => ({ id, events: 1 })));
      statement = spy.mock.calls[0]![0] as unknown as { text: string; values: unknown[] };
    } finally {
      spy.mockRestore();
    }
    type PlanNode = { 'Node Type': string; 'Relation Name'?: string; Plans?: PlanNode[] };
    const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];
    const client = await t.db.pool.connect();
    try {
      await client.query('BEGIN');
      // Shadows public.webhook_inbox in this transaction only (pg_temp is searched first).
      await client.query('CREATE TEMPORARY TABLE webhook_inbox (LIKE public.webhook_inbox INCLUDING ALL)');
      // The inbox analysed empty, then grown by 20,000 deliveries and the chunk (the real ones' ids).
      await client.query('ANALYZE webhook_inbox');
      await client.query(
        `INSERT INTO webhook_inbox (id, raw_body, signature, waba_ids)
         SELECT $1::bigint - 20000 + g, convert_to(repeat('x', 1000), 'UTF8'), 'sha256=00', ARRAY['1']
           FROM generate_series(0, 19999) g`,
        [id],
      );
      await client.query(
        `INSERT INTO webhook_inbox (id, raw_body, signature, waba_ids)
         SELECT id, convert_to(repeat('x', 1000), 'UTF8'), 'sha256=00', ARRAY['1'] FROM unnest($1::bigint[]) AS id`,
        [ids],
      );
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${statement.text}`,
        statement.values,
      );
      const scans = nodesOf(rows[0]!['QUERY PLAN'][0].Plan)
        .filter((n) => n['Relation Name'] === 'webhook_inbox')
        .map((n) => n['Node Type']);
      expect(scans.length).toBeGreaterThan(0);
      expect(scans.filter((type) => type === 'Seq Scan')).toEqual([]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('records failed attempts on deliveries still received; the final one makes them dead letters', async () => {
    const wabaId = metaId();
    const [a, b] = await t.repo.storeBatch(randomUUID(), [
      incomingDelivery({ wabaIds: [wabaId] }),
      incomingDelivery({ wabaIds: [wabaId] }),
    ]);
    const done = await insertDelivery(t.db, { wabaIds: [wabaId], status: 'processed', eventCount: 1 });

    await t.repo.recordFailure([a!, b!, done.id], 'PostgreSQL unavailable', false);
    await t.repo.recordFailure([a!], `payload rejected: ${'x'.repeat(5000)}`, true);
    await t.repo.recordFailure([a!, b!], 'too late for a', true);

    const rows = new Map((await listed(wabaId)).map((d) => [d.id, d]));
    expect(rows.get(a!)).toMatchObject({ status: 'failed', attempts: 2 });
    expect(rows.get(a!)!.lastError).toHaveLength(2000);
    expect(rows.get(a!)!.lastError).toMatch(/^payload rejected: x+$/);
    expect(rows.get(b!)).toMatchObject({ status: 'failed', attempts: 2, lastError: 'too late for a' });
    expect(rows.get(done.id)).toMatchObject({ status: 'processed', attempts: 0, lastError: null });
  });

  it('the database refuses a delivery status other than received or failed in the inbox, and processed ones outside it', async () => {
    const wabaId = metaId();
    const [id] = await t.repo.storeBatch(randomUUID(), [incomingDelivery({ wabaIds: [wabaId] })]);
    for (const status of ['done', 'processed']) {
      const set = t.db.on().updateTable('webhook_inbox').set({ status }).where('id', '=', id!).execute();
      await expect(set).rejects.toThrow(/webhook_inbox_status_check/);
    }
    const done = await insertDelivery(t.db, { wabaIds: [wabaId], status: 'processed' });
    const set = t.db.on().updateTable('webhook_deliveries').set({ status: 'done' }).where('id', '=', done.id).execute();
    await expect(set).rejects.toThrow(/webhook_deliveries_status_check/);
    expect((await listed(wabaId)).map((d) => [d.id, d.status])).toEqual([
      [done.id, 'processed'],
      [id, 'received'],
    ]);
  });

  it('dead-letters only deliveries still received and says which changed', async () => {
    const wabaId = metaId();
    const [a] = await t.repo.storeBatch(randomUUID(), [incomingDelivery({ wabaIds: [wabaId] })]);
    const done = await insertDelivery(t.db, { wabaIds: [wabaId], status: 'processed' });
    const dead = await insertDelivery(t.db, { wabaIds: [wabaId], status: 'failed', lastError: 'first death' });

    expect(await t.repo.markDeadLetter([a!, done.id, dead.id], 'job stalled too often')).toEqual([a]);
    const rows = new Map((await listed(wabaId)).map((d) => [d.id, d]));
    expect(rows.get(a!)).toMatchObject({ status: 'failed', lastError: 'job stalled too often', attempts: 0 });
    expect(rows.get(done.id)).toMatchObject({ status: 'processed', lastError: null });
    expect(rows.get(dead.id)).toMatchObject({ status: 'failed', lastError: 'first death' });
    expect(await t.repo.markDeadLetter([a!], 'again')).toEqual([]);
  });

  it('lists deliveries still received before a time, oldest first, page by page with their batch ids', async () => {
    // Ahead of now: older than the test's bound, never older than a sweeper's (no worker of another test file runs them).
    const t0 = momentIn(2990, 3000);
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
    const batchId = randomUUID();
    const first = await insertDelivery(t.db, { receivedAt: at(0), batchId });
    const tied = await insertDelivery(t.db, { receivedAt: at(1), batchId });
    const alone = await insertDelivery(t.db, { receivedAt: at(1) });
    await insertDelivery(t.db, { status: 'processed' });
    await insertDelivery(t.db, { receivedAt: at(3), status: 'failed' });
    const last = await insertDelivery(t.db, { receivedAt: at(4) });
    await insertDelivery(t.db, { receivedAt: at(10) });

    const olderThan = at(5);
    const start = { receivedAt: at(-1), id: 0 };
    const page1 = await t.repo.stillReceived(olderThan, start, 2);
    expect(page1).toEqual([
      { id: first.id, receivedAt: at(0), batchId },
      { id: tied.id, receivedAt: at(1), batchId },
    ]);
    const page2 = await t.repo.stillReceived(olderThan, page1[1], 2);
    expect(page2).toEqual([
      { id: alone.id, receivedAt: at(1), batchId: null },
      { id: last.id, receivedAt: at(4), batchId: null },
    ]);
    expect(await t.repo.stillReceived(olderThan, page2[1], 2)).toEqual([]);
  });

  // The retention (whole weekly partitions dropped, dead letters and waiting deliveries kept) is tested on a database
  // of its own: test/medium/storage-partitions.spec.ts.

  it("lists and replays a tenant's deliveries only for that tenant's business accounts", async () => {
    const [mine, theirs] = [await insertOrganization(t.db), await insertOrganization(t.db)];
    const [a, b] = [
      (await insertBusinessAccount(t.db, mine.organizationId)).wabaId,
      (await insertBusinessAccount(t.db, theirs.organizationId)).wabaId,
    ];
    const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute));
    const ours = await insertDelivery(t.db, {
      wabaIds: [a],
      status: 'failed',
      lastError: 'bad payload',
      receivedAt: at(1),
    });
    const theirsOnly = await insertDelivery(t.db, {
      wabaIds: [b],
      status: 'failed',
      lastError: 'bad payload',
      receivedAt: at(2),
    });
    const shared = await insertDelivery(t.db, {
      wabaIds: [b, a],
      status: 'processed',
      eventCount: 3,
      receivedAt: at(3),
    });

    const all = await t.repo.listForAccounts([{ wabaId: a }], { page: 1, limit: 10 });
    expect([all.total, all.rows.map((d) => d.id)]).toEqual([2, [shared.id, ours.id]]);
    expect(all.rows[1]).toMatchObject({ status: 'failed', lastError: 'bad payload', wabaIds: [a], receivedAt: at(1) });
    const page2 = await t.repo.listForAccounts([{ wabaId: a }], { page: 2, limit: 1 });
    expect([page2.total, page2.rows.map((d) => d.id)]).toEqual([2, [ours.id]]);
    const deadLetters = await t.repo.listForAccounts([{ wabaId: a }], { page: 1, limit: 10, status: 'failed' });
    expect([deadLetters.total, deadLetters.rows.map((d) => d.id)]).toEqual([1, [ours.id]]);
    expect(await t.repo.listForAccounts([], { page: 1, limit: 10 })).toEqual({ rows: [], total: 0 });

    expect(await t.repo.resetForReplay([{ wabaId: a }], theirsOnly.id)).toBeNull();
    expect(await t.repo.resetForReplay([{ wabaId: b }], ours.id)).toBeNull();
    expect((await t.repo.findForProcessing([theirsOnly.id, ours.id])).map((d) => d.status)).toEqual([
      'failed',
      'failed',
    ]);

    expect(await t.repo.resetForReplay([{ wabaId: a }], ours.id)).toMatchObject({
      id: ours.id,
      status: 'received',
      attempts: 0,
      lastError: null,
      processedAt: null,
    });
    expect(await t.repo.resetForReplay([{ wabaId: b }], shared.id)).toMatchObject({
      id: shared.id,
      status: 'received',
      eventCount: 3,
      receivedAt: at(3),
      processedAt: null,
    });
    // A processed delivery replayed waits in the inbox again, once, and is processed again from there.
    expect(await countRows(t.db, 'webhook_inbox', { id: shared.id })).toBe(1);
    expect(await countRows(t.db, 'webhook_deliveries', { id: shared.id })).toBe(0);
    expect((await t.repo.listForAccounts([{ wabaId: a }], { page: 1, limit: 10, status: 'received' })).rows).toEqual([
      expect.objectContaining({ id: shared.id, eventCount: 3 }),
      expect.objectContaining({ id: ours.id }),
    ]);
    await t.repo.markProcessed([{ id: shared.id, events: 3 }]);
    expect((await t.repo.listForAccounts([{ wabaId: a }], { page: 1, limit: 10, status: 'processed' })).rows).toEqual([
      expect.objectContaining({ id: shared.id, status: 'processed', eventCount: 3, receivedAt: at(3) }),
    ]);
  });

  it("lists and replays only what arrived inside the reader's window of the account (taken over, credentials failed: issue 29, finding 5)", async () => {
    const mine = await insertOrganization(t.db);
    const a = (await insertBusinessAccount(t.db, mine.organizationId)).wabaId;
    const at = (minute: number) => new Date(Date.UTC(2026, 2, 2, 10, minute));
    const [early, middle, late] = [
      await insertDelivery(t.db, { wabaIds: [a], status: 'failed', lastError: 'x', receivedAt: at(1) }),
      await insertDelivery(t.db, { wabaIds: [a], status: 'failed', lastError: 'x', receivedAt: at(2) }),
      await insertDelivery(t.db, { wabaIds: [a], status: 'failed', lastError: 'x', receivedAt: at(3) }),
    ];
    const ids = async (window: { since?: Date; until?: Date }) => {
      const listed = await t.repo.listForAccounts([{ wabaId: a, ...window }], { page: 1, limit: 10 });
      return [listed.total, listed.rows.map((d) => d.id)];
    };
    expect(await ids({})).toEqual([3, [late.id, middle.id, early.id]]);
    expect(await ids({ since: at(2) })).toEqual([2, [late.id, middle.id]]);
    expect(await ids({ until: at(2) })).toEqual([2, [middle.id, early.id]]);
    expect(await ids({ since: at(2), until: at(2) })).toEqual([1, [middle.id]]);
    expect(await t.repo.resetForReplay([{ wabaId: a, until: at(2) }], late.id)).toBeNull();
    expect(await t.repo.resetForReplay([{ wabaId: a, since: at(2) }], early.id)).toBeNull();
    expect(await t.repo.resetForReplay([{ wabaId: a, since: at(2), until: at(2) }], middle.id)).toMatchObject({
      id: middle.id,
      status: 'received',
    });
  });

  it("counts each business account's waiting deliveries, dead letters and oldest waiting one, for the asked accounts only", async () => {
    const [a, b, other] = [metaId(), metaId(), metaId()];
    // Younger than the sweeper's 5 s, so no worker of another test file processes them meanwhile.
    const older = new Date(Date.now() - 3000);
    const newer = new Date(Date.now() - 1000);
    await insertDelivery(t.db, { wabaIds: [a], status: 'received', receivedAt: newer });
    await insertDelivery(t.db, { wabaIds: [a, other], status: 'received', receivedAt: older });
    await insertDelivery(t.db, { wabaIds: [a, b], status: 'failed', lastError: 'x' });
    await insertDelivery(t.db, { wabaIds: [b], status: 'processed', processedAt: new Date() });
    await insertDelivery(t.db, { wabaIds: [other], status: 'failed', lastError: 'y' });

    const rows = await t.repo.backlogForAccounts([a, b]);
    expect(rows.sort((x, y) => (x.wabaId === a ? -1 : y.wabaId === a ? 1 : 0))).toEqual([
      { wabaId: a, pending: 2, failed: 1, oldestPendingAt: older },
      { wabaId: b, pending: 0, failed: 1, oldestPendingAt: null },
    ]);
    expect(await t.repo.backlogForAccounts([metaId()])).toEqual([]);
  });
});
