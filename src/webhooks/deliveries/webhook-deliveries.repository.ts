import { Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { columnMap } from '../../core/db/column-map.js';
import type { Database } from '../../core/db/database.js';
import { Db, type Tx } from '../../core/db/db.js';
import {
  dropDetachedLeftovers,
  dropPartition,
  compactEndedPartition,
  type Compaction,
  ensurePartitions,
  expiredPartitions,
  partitionsOf,
  type Partition,
} from '../../core/db/partitions.js';
import { bytesContain, minus, now, plus, typed, unnest } from '../../core/db/pg.js';
import { prepared } from '../../core/db/statement.js';
import { skipTake } from '../../core/rows/page.js';
import type { DeliveryStatus } from './dto/deliveries.dto.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';
import {
  backlogForAccounts,
  countForAccounts,
  listForAccounts,
  replayProcessed,
  replayWaiting,
  shapeOf,
  windowsOf,
  type AccountWindow,
  type DeliveryRow,
  type ListParams,
} from './statements/console.js';

export type { AccountWindow, DeliveryRow } from './statements/console.js';

/** A signed POST as the receiver stores it: the bytes as received. */
export interface IncomingDelivery {
  rawBody: Buffer;
  signature: string;
  /** entry[].id of the payload: which business accounts it concerns (console scoping). */
  wabaIds: string[];
}

export interface StoredDelivery {
  id: number;
  status: string;
  rawBody: Buffer;
  receivedAt: Date;
  eventCount: number | null;
}

export interface UnprocessedDelivery {
  id: number;
  receivedAt: Date;
  batchId: string | null;
}

/**
 * The receiver's insert's columns, once (core/db/column-map.ts): each with its IncomingDelivery field (the
 * parameter `<field><i>` of row i), and the batch the statement gives.
 */
const DELIVERY_INSERT = columnMap('webhook_inbox', {
  raw_body: ['rawBody', 'bytea'],
  signature: ['signature', 'text'],
  waba_ids: ['wabaIds', 'text[]'],
  batch_id: 'batchId',
});

/** One statement per batch size (1…max rows), prepared once per connection. Into the inbox: its primary key only. */
function storeMany(rows: number) {
  return prepared(`store_deliveries_${rows}`, (db, p: Record<string, unknown>) =>
    db
      .insertInto('webhook_inbox')
      .values(
        Array.from({ length: rows }, (_, i) => DELIVERY_INSERT.row((key) => p[`${key}${i}`], { batchId: p.batchId })),
      )
      .returning('id'),
  );
}
const storeStatements = new Map<number, ReturnType<typeof storeMany>>();

const DELIVERY_COLUMNS = [
  'id',
  'status',
  'raw_body as rawBody',
  'received_at as receivedAt',
  'event_count as eventCount',
] as const;

/** The worker's usual case: the deliveries wait in the inbox. */
const findWaiting = prepared('find_waiting_deliveries', (db, p: { ids: number[] }) =>
  db
    .selectFrom('webhook_inbox')
    .select(DELIVERY_COLUMNS)
    .where((eb) => eb('id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))))
    .orderBy('id'),
);

/**
 * Deliveries processed already (a re-run for statuses that waited for their message, a redelivered job): received in
 * the last day, looked up in this week's partition (and last week's near a Monday) instead of every partition's
 * primary key. The bounds are now()-relative, so the partitions are pruned when the statement starts (a generic plan
 * keeps them as parameters of the run).
 */
const findRecent = prepared('find_recent_deliveries', (db, p: { ids: number[] }) =>
  db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where((eb) =>
      eb.and([
        eb('id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))),
        eb('received_at', '>=', minus(now(), '1 day')),
        eb('received_at', '<=', plus(now(), '1 hour')),
      ]),
    )
    .orderBy('id'),
);

/** Any delivery, in whichever partition (a sweep, a replay, a re-run of an older one). */
const findMany = prepared('find_deliveries', (db, p: { ids: number[] }) =>
  db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where((eb) => eb('id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))))
    .orderBy('id'),
);

/**
 * Processed: the delivery moves out of the inbox into the weekly table, in one statement, without its bytes, their
 * signature and the batch (the items are in `events` now, the one copy kept; the signature was checked on receipt; the
 * batch named the receiver's job). event_count tells a replay of it that its items are stored (DeliveryProcessor).
 * Stored under when it arrived, so in that week's partition; one processed more than a day later (a dead letter
 * replayed, a backlog of days) is stored in the current week with original_received_at saying when it arrived: the
 * week it arrived in may be gone (WEBHOOK_RETENTION_DAYS). Deliveries no longer in the inbox (another run moved them)
 * are left alone. Exported for bench/data-access-cost.ts.
 */
export const buildMarkProcessed = (db: Kysely<Database>, p: { ids: number[]; events: number[] }) =>
  db
    .with('moved', (db) =>
      db
        .deleteFrom('webhook_inbox as i')
        .using(unnest('v', { id: 'bigint', events: 'int' }, { id: p.ids, events: p.events }))
        .where((eb) => eb.and([eb('i.id', '=', eb.ref('v.id')), eb('i.id', '=', eb.fn.any(typed(p.ids, 'bigint[]')))]))
        .returning([
          'i.id',
          'i.waba_ids',
          'i.attempts',
          'v.events',
          'i.received_at',
          'i.original_received_at',
          'i.redacted_at',
          (eb) => eb('i.received_at', '>=', minus(now(), '1 day')).as('recent'),
        ]),
    )
    .insertInto('webhook_deliveries')
    .columns([
      'id',
      'raw_body',
      'signature',
      'waba_ids',
      'status',
      'attempts',
      'event_count',
      'received_at',
      'original_received_at',
      'processed_at',
      'redacted_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('moved')
        .select((eb) => [
          'id',
          typed(Buffer.alloc(0), 'bytea').as('raw_body'),
          eb.val('').as('signature'),
          'waba_ids',
          eb.val('processed').as('status'),
          eb('attempts', '+', 1).as('attempts'),
          'events',
          eb.case().when('recent', '=', true).then(eb.ref('received_at')).else(now()).end().as('received_at'),
          eb
            .case()
            .when('recent', '=', true)
            .then(eb.ref('original_received_at'))
            .else(eb.fn.coalesce('original_received_at', 'received_at'))
            .end()
            .as('original_received_at'),
          now().as('processed_at'),
          'redacted_at',
        ]),
    );
const markProcessed = prepared('mark_deliveries_processed', buildMarkProcessed);

const recordFailure = prepared('record_delivery_failure', (db, p: { ids: number[]; error: string; final: boolean }) =>
  db
    .updateTable('webhook_inbox')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_error: p.error,
      status: eb.case().when(typed(p.final, 'boolean')).then('failed').else(eb.ref('status')).end(),
    }))
    .where((eb) => eb.and([eb('id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))), eb('status', '=', 'received')])),
);

const markDeadLetter = prepared('mark_delivery_dead_letter', (db, p: { ids: number[]; error: string }) =>
  db
    .updateTable('webhook_inbox')
    .set({ status: 'failed', last_error: p.error })
    .where((eb) => eb.and([eb('id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))), eb('status', '=', 'received')]))
    .returning('id'),
);

/** Keyset over the inbox's (status, received_at) index. */
const stillReceived = prepared(
  'deliveries_still_received',
  (db, p: { olderThan: Date; afterReceivedAt: Date; afterId: number; limit: number }) =>
    db
      .selectFrom('webhook_inbox')
      .select(['id', 'received_at as receivedAt', 'batch_id as batchId'])
      .where((eb) =>
        eb.and([
          eb('status', '=', 'received'),
          eb('received_at', '<', p.olderThan),
          eb(
            eb.refTuple('received_at', 'id'),
            '>',
            eb.tuple(typed(p.afterReceivedAt, 'timestamptz'), typed(p.afterId, 'bigint')),
          ),
        ]),
      )
      .orderBy('received_at')
      .orderBy('id')
      .limit(p.limit),
);

/** Served by the inbox's (status, received_at) index: one index entry read. */
const oldestUnprocessed = prepared('deliveries_oldest_unprocessed', (db) =>
  db
    .selectFrom('webhook_inbox')
    .select((eb) => eb.fn.min('received_at').as('at'))
    .where('status', '=', 'received'),
);

export interface AccountBacklog {
  wabaId: string;
  pending: number;
  failed: number;
  oldestPendingAt: Date | null;
}

/**
 * The one owner of `webhook_inbox` and `webhook_deliveries`: every statement that reads or writes them (receiver,
 * worker, sweeper, retention, console). The receiver's INSERT (into the inbox) is the hottest write of the service; a
 * delivery is in one of the two tables at a time, with the same id (docs/storage.md, "The inbox").
 * Console reads are scoped by the organization's business accounts (`wabaIds`, first argument).
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(private readonly db: Db) {}

  /** One INSERT (one commit) for the whole batch; ids in the order of `rows`. All or nothing. */
  async storeBatch(batchId: string, rows: IncomingDelivery[]): Promise<number[]> {
    let statement = storeStatements.get(rows.length);
    if (!statement) storeStatements.set(rows.length, (statement = storeMany(rows.length)));
    const params: Record<string, unknown> = { batchId };
    rows.forEach((r, i) => {
      for (const key of DELIVERY_INSERT.keys) params[`${key}${i}`] = r[key];
    });
    const { rows: ids } = await this.db.exec(statement, params);
    // RETURNING follows the VALUES order for a plain multi-row INSERT.
    return ids.map((r) => r.id);
  }

  /** In id order; unknown ids are left out. The inbox first (the usual case), then the processed ones. */
  async findForProcessing(ids: number[]): Promise<StoredDelivery[]> {
    const wanted = new Set(ids);
    const { rows: waiting } = await this.db.exec(findWaiting, { ids });
    if (waiting.length === wanted.size) return waiting;
    for (const d of waiting) wanted.delete(d.id);
    const rest = [...wanted];
    let { rows: processed } = await this.db.exec(findRecent, { ids: rest });
    if (processed.length < rest.length) processed = (await this.db.exec(findMany, { ids: rest })).rows;
    return [...waiting, ...processed].sort((a, b) => a.id - b.id);
  }

  /** `tx`: in the caller's transaction (the one that stored the deliveries' last events). */
  async markProcessed(done: { id: number; events: number }[], tx?: Tx): Promise<void> {
    if (done.length === 0) return;
    await this.db.exec(markProcessed, { ids: done.map((d) => d.id), events: done.map((d) => d.events) }, tx);
  }

  /** A failed attempt of deliveries still `received`; `final` makes them dead letters (status failed). */
  async recordFailure(ids: number[], error: string, final: boolean): Promise<void> {
    if (ids.length === 0) return;
    await this.db.exec(recordFailure, { ids, error: error.slice(0, 2000), final });
  }

  /** Dead letters for deliveries still `received`; returns the ids that changed. */
  async markDeadLetter(ids: number[], error: string): Promise<number[]> {
    const { rows } = await this.db.exec(markDeadLetter, { ids, error: error.slice(0, 2000) });
    return rows.map((r) => r.id);
  }

  /** Deliveries still `received` that arrived before `olderThan`, oldest first, after the keyset `after`. */
  async stillReceived(
    olderThan: Date,
    after: { receivedAt: Date; id: number } | undefined,
    limit: number,
  ): Promise<UnprocessedDelivery[]> {
    const from = after ?? { receivedAt: new Date(0), id: 0 };
    const { rows } = await this.db.exec(stillReceived, {
      olderThan,
      afterReceivedAt: from.receivedAt,
      afterId: from.id,
      limit,
    });
    return rows;
  }

  /** When the oldest delivery still waiting to be processed arrived (null when none waits), all accounts. */
  async oldestUnprocessedAt(): Promise<Date | null> {
    const { rows } = await this.db.exec(oldestUnprocessed, {});
    return rows[0]?.at ?? null;
  }

  /** Creates the weekly partitions missing from `from` through `through`; returns how many it made. */
  ensurePartitions(from: Date, through: Date): Promise<number> {
    return ensurePartitions(this.db, 'webhook_deliveries', from, through);
  }

  /** Compacts one partition whose week ended before `endedBefore` (core/db/partitions.ts); null: none due. */
  compactEndedPartition(endedBefore: Date): Promise<Compaction | null> {
    return compactEndedPartition(this.db, 'webhook_deliveries', endedBefore);
  }

  partitions(): Promise<Partition[]> {
    return partitionsOf(this.db, 'webhook_deliveries');
  }

  /**
   * Drops the partitions wholly older than `cutoff` (retention of processed deliveries), one transaction each. The
   * deliveries not processed (waiting, dead letters) are in the inbox: never dropped. Returns the partitions dropped.
   */
  async dropPartitionsBefore(cutoff: Date): Promise<Partition[]> {
    const dropped: Partition[] = [];
    await dropDetachedLeftovers(this.db, 'webhook_deliveries');
    for (const p of expiredPartitions(await this.partitions(), cutoff)) {
      const done = await dropPartition(this.db, 'webhook_deliveries', p);
      // A long reader holds the table: the next partitions would only wait for it too (and stall writes meanwhile).
      if (!done) break;
      dropped.push(p);
    }
    return dropped;
  }

  async listForAccounts(
    accounts: AccountWindow[],
    query: { page: number; limit: number; status?: DeliveryStatus },
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    const shape = shapeOf(query.status);
    const params: ListParams = { ...windowsOf(accounts), ...skipTake(query), status: query.status };
    const [rows, count] = await Promise.all([
      this.db.exec(listForAccounts[shape], params),
      this.db.exec(countForAccounts[shape], params),
    ]);
    return { rows: rows.rows, total: count.rows[0]?.n ?? 0 };
  }

  /**
   * Back to `received` in the inbox (attempts and error cleared) if it concerns one of the accounts, inside its
   * window; null otherwise.
   */
  async resetForReplay(accounts: AccountWindow[], id: number, tx?: Tx): Promise<DeliveryRow | null> {
    const params = { ...windowsOf(accounts), id };
    const { rows } = await this.db.exec(replayWaiting, params, tx);
    if (rows[0]) return rows[0];
    return (await this.db.exec(replayProcessed, params, tx)).rows[0] ?? null;
  }

  /** Waiting and dead-lettered deliveries per business account of `wabaIds` (accounts with none are absent). */
  async backlogForAccounts(wabaIds: string[]): Promise<AccountBacklog[]> {
    const { rows } = await this.db.exec(backlogForAccounts, { wabaIds });
    return rows;
  }

  // ---- Raw bodies holding one contact (src/contacts: erasure) --------------------------

  /**
   * Up to `limit` deliveries of the account, after `after` (id), whose raw bytes hold one of `needles` (the
   * contact's addresses), in id order: each is rewritten or deleted next. The inbox (waiting ones, dead letters) and
   * every partition (a processed delivery's bytes are empty since migration lean_events, an older one's may not be).
   */
  @GenerateSql({ params: [Sample.WABA_ID, [Sample.PHONE], 0, 100] })
  async holding(
    wabaId: string,
    needles: string[],
    after: number,
    limit: number,
  ): Promise<{ id: number; receivedAt: Date; rawBody: Buffer }[]> {
    if (needles.length === 0) return [];
    const db = this.db.on();
    // The same columns in both tables: the query is written once, over the weekly table's type.
    const holdingIn = (table: 'webhook_inbox' | 'webhook_deliveries') =>
      (db as unknown as Kysely<Pick<Database, 'webhook_deliveries'>>)
        .selectFrom(table as 'webhook_deliveries')
        .select(['id', 'received_at as receivedAt', 'raw_body as rawBody'])
        .where('waba_ids', '@>', typed([wabaId], 'text[]'))
        .where('id', '>', after)
        .where((eb) => eb.or(needles.map((n) => bytesContain('raw_body', Buffer.from(n)))));
    return db
      .selectFrom(holdingIn('webhook_inbox').unionAll(holdingIn('webhook_deliveries')).as('d'))
      .selectAll()
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /**
   * Replaces these deliveries' bytes (other users' items kept, the erased contact's gone) and marks them redacted, one
   * statement per table (an erasure rewrites up to a batch of bodies at a time).
   */
  @GenerateSql({
    params: [Sample.TX, [{ id: Sample.NUMBER, receivedAt: Sample.DATE, rawBody: Buffer.from('{}') }]],
  })
  async rewriteBodies(tx: Tx, rows: { id: number; receivedAt: Date; rawBody: Buffer }[]): Promise<void> {
    if (rows.length === 0) return;
    const times = rows.map((r) => r.receivedAt.getTime());
    await this.db
      .on(tx)
      .updateTable('webhook_inbox')
      .from(
        unnest('r', { id: 'bigint', body: 'bytea' }, { id: rows.map((r) => r.id), body: rows.map((r) => r.rawBody) }),
      )
      .set((eb) => ({ raw_body: eb.ref('r.body').$notNull(), redacted_at: now() }))
      .whereRef('webhook_inbox.id', '=', 'r.id')
      .execute();
    await this.db
      .on(tx)
      .updateTable('webhook_deliveries')
      .from(
        unnest(
          'r',
          { id: 'bigint', at: 'timestamptz', body: 'bytea' },
          { id: rows.map((r) => r.id), at: rows.map((r) => r.receivedAt), body: rows.map((r) => r.rawBody) },
        ),
      )
      .set((eb) => ({ raw_body: eb.ref('r.body').$notNull(), redacted_at: now() }))
      .whereRef('webhook_deliveries.id', '=', 'r.id')
      .whereRef('webhook_deliveries.received_at', '=', 'r.at')
      .where('webhook_deliveries.received_at', '>=', new Date(Math.min(...times)))
      .where('webhook_deliveries.received_at', '<=', new Date(Math.max(...times)))
      .execute();
  }

  /**
   * Content retention (src/retention): up to `limit` processed deliveries received in [since, before) that concern
   * only these accounts (a body that also holds another organization's account is left to WEBHOOK_RETENTION_DAYS)
   * lose their raw bytes (an empty body, marked redacted); their events stay. Dead letters and deliveries still
   * waiting keep theirs (a replay needs them). Returns how many; fewer than `limit` means none is left in the range.
   */
  @GenerateSql({ params: [Sample.TX, [Sample.WABA_ID], { since: null, before: Sample.DATE }, 500], rows: Sample.FOUND })
  async scrubBodiesBatch(
    tx: Tx,
    wabaIds: string[],
    range: { since: Date | null; before: Date },
    limit: number,
  ): Promise<number> {
    const db = this.db.on(tx);
    const found = await db
      .selectFrom('webhook_deliveries')
      .select(['id', 'received_at as receivedAt'])
      .where('waba_ids', '<@', typed(wabaIds, 'text[]'))
      .where('received_at', '<', range.before)
      .where('received_at', '>=', range.since ?? new Date(0))
      .where('status', '=', 'processed')
      .where((eb) => eb(eb.fn<number>('octet_length', ['raw_body']), '>', 0))
      .limit(limit)
      .execute();
    if (found.length === 0) return 0;
    await db
      .updateTable('webhook_deliveries')
      .set({ raw_body: Buffer.alloc(0), redacted_at: now() })
      .where('id', '=', (eb) => eb.fn.any(eb.val(found.map((d) => d.id))))
      .where('received_at', '>=', new Date(Math.min(...found.map((d) => d.receivedAt.getTime()))))
      .where('received_at', '<', range.before)
      .execute();
    return found.length;
  }

  /** Deletes these deliveries (every item in them was the erased contact's), one statement per table. */
  @GenerateSql({ params: [Sample.TX, [{ id: Sample.NUMBER, receivedAt: Sample.DATE }]] })
  async removeAll(tx: Tx, ds: { id: number; receivedAt: Date }[]): Promise<void> {
    if (ds.length === 0) return;
    const times = ds.map((d) => d.receivedAt.getTime());
    await this.db
      .on(tx)
      .deleteFrom('webhook_inbox')
      .where('id', '=', (eb) => eb.fn.any(eb.val(ds.map((d) => d.id))))
      .execute();
    await this.db
      .on(tx)
      .deleteFrom('webhook_deliveries')
      .where('id', '=', (eb) => eb.fn.any(eb.val(ds.map((d) => d.id))))
      .where('received_at', '>=', new Date(Math.min(...times)))
      .where('received_at', '<=', new Date(Math.max(...times)))
      .execute();
  }
}
