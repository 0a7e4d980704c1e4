import { Injectable } from '@nestjs/common';
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
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

export interface DeliveryRow {
  id: number;
  status: string;
  attempts: number;
  lastError: string | null;
  eventCount: number | null;
  wabaIds: string[];
  receivedAt: Date;
  processedAt: Date | null;
}

export interface UnprocessedDelivery {
  id: number;
  receivedAt: Date;
  batchId: string | null;
}

type Eb = ExpressionBuilder<Database, 'webhook_deliveries'>;

/** receivedAt: when Meta delivered it (original_received_at when the retention moved it to a newer partition). */
const receivedAt = (eb: Eb) => eb.fn.coalesce('original_received_at', 'received_at');
const rowColumns = (eb: Eb) =>
  [
    'id',
    'status',
    'attempts',
    'last_error as lastError',
    'event_count as eventCount',
    'waba_ids as wabaIds',
    receivedAt(eb).as('receivedAt'),
    'processed_at as processedAt',
  ] as const;

/**
 * The deliveries insert's columns, once (core/db/column-map.ts): each with its IncomingDelivery field (the
 * parameter `<field><i>` of row i), and the batch the statement gives.
 */
const DELIVERY_INSERT = columnMap('webhook_deliveries', {
  raw_body: ['rawBody', 'bytea'],
  signature: ['signature', 'text'],
  waba_ids: ['wabaIds', 'text[]'],
  batch_id: 'batchId',
});

/** One statement per batch size (1…max rows), prepared once per connection. */
function storeMany(rows: number) {
  return prepared(`store_deliveries_${rows}`, (db, p: Record<string, unknown>) =>
    db
      .insertInto('webhook_deliveries')
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

/**
 * The worker's usual case: deliveries received in the last day, looked up in this week's partition (and last week's
 * near a Monday) instead of every partition's primary key. The bounds are now()-relative, so the partitions are
 * pruned when the statement starts (a generic plan keeps them as parameters of the run).
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
 * Processed: the bytes, their signature and the batch go (the items are in `events` now, the one copy kept; the
 * signature was checked on receipt; the batch named the receiver's job). The same update that marks the delivery, so
 * the space of the old row version is all the processing leaves (docs/storage.md, "Layout"); event_count stays, which
 * tells a replay of it that its items are stored (DeliveryProcessor).
 * `since`: the oldest received_at among them (as read by findForProcessing): the partitions before it are skipped.
 * `d.id = ANY(ids)` beside the join: an index condition the planner uses whatever the partition's statistics say.
 * Without it, a plan made for its values on a week's partition that autovacuum had not analysed yet joined a
 * sequential scan of the whole partition by hash (measured: 12 ms instead of 0.5 ms per chunk of 32, the largest
 * PostgreSQL cost of single-status ingest after partitioning). Exported for bench/data-access-cost.ts.
 */
export const buildMarkProcessed = (db: Kysely<Database>, p: { ids: number[]; events: number[]; since: Date }) =>
  db
    .updateTable('webhook_deliveries as d')
    .from(unnest('v', { id: 'bigint', events: 'int' }, { id: p.ids, events: p.events }))
    .set((eb) => ({
      status: 'processed',
      processed_at: now(),
      event_count: eb.ref('v.events'),
      raw_body: Buffer.alloc(0),
      signature: '',
      batch_id: null,
      last_error: null,
      attempts: eb('d.attempts', '+', 1),
    }))
    .where((eb) =>
      eb.and([
        eb('d.id', '=', eb.ref('v.id')),
        eb('d.id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))),
        eb('d.status', '<>', 'processed'),
        eb('d.received_at', '>=', p.since),
      ]),
    );
const markProcessed = prepared('mark_deliveries_processed', buildMarkProcessed);

const recordFailure = prepared('record_delivery_failure', (db, p: { ids: number[]; error: string; final: boolean }) =>
  db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_error: p.error,
      status: eb.case().when(typed(p.final, 'boolean')).then('failed').else(eb.ref('status')).end(),
    }))
    .where((eb) => eb.and([eb('id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))), eb('status', '=', 'received')])),
);

const markDeadLetter = prepared('mark_delivery_dead_letter', (db, p: { ids: number[]; error: string }) =>
  db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', last_error: p.error })
    .where((eb) => eb.and([eb('id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))), eb('status', '=', 'received')]))
    .returning('id'),
);

/** Keyset over the (status, received_at) index. */
const stillReceived = prepared(
  'deliveries_still_received',
  (db, p: { olderThan: Date; afterReceivedAt: Date; afterId: number; limit: number }) =>
    db
      .selectFrom('webhook_deliveries')
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

/** Served by the (status, received_at) index: one index entry read. */
const oldestUnprocessed = prepared('deliveries_oldest_unprocessed', (db) =>
  db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('received_at').as('at'))
    .where('status', '=', 'received'),
);

/**
 * Before a partition is dropped: its deliveries not processed (waiting, dead letters) move to the partition of now
 * (an UPDATE of the partition key moves the row; its id stays), keeping when Meta delivered them. Served by the
 * (status, received_at) index of the partition: only the few unfinished rows are read.
 */
const keepUnfinished = prepared('retention_keep_unfinished_deliveries', (db, p: { from: Date | null; to: Date }) =>
  db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ original_received_at: eb.fn.coalesce('original_received_at', 'received_at'), received_at: now() }))
    .where((eb) =>
      eb.and([
        eb('status', 'in', ['received', 'failed']),
        eb('received_at', '>=', eb.fn.coalesce(typed(p.from, 'timestamptz'), typed('-infinity', 'timestamptz'))),
        eb('received_at', '<', p.to),
      ]),
    ),
);

/** The organization's accounts (wabaIds) with, per account, the window its holder may read (since, until; null: open). */
interface Windows {
  wabaIds: string[];
  since: (Date | null)[];
  until: (Date | null)[];
}

/** A delivery is listed when it concerns one of the accounts and arrived inside that account's window. */
function inWindows(eb: Eb, p: Windows): Expression<SqlBool> {
  return eb.and([
    eb('waba_ids', '&&', typed(p.wabaIds, 'text[]')),
    eb.exists(
      eb
        .selectFrom(
          unnest(
            'a',
            { waba: 'text', since: 'timestamptz', until: 'timestamptz' },
            { waba: p.wabaIds, since: p.since, until: p.until },
          ),
        )
        .select((eb) => eb.lit(1).as('one'))
        .where((eb) =>
          eb.and([
            eb('a.waba', '=', eb.fn.any('waba_ids')),
            eb(
              eb.fn.coalesce('original_received_at', 'received_at'),
              '>=',
              eb.fn.coalesce('a.since', typed('-infinity', 'timestamptz')),
            ),
            eb(
              eb.fn.coalesce('original_received_at', 'received_at'),
              '<=',
              eb.fn.coalesce('a.until', typed('infinity', 'timestamptz')),
            ),
          ]),
        ),
    ),
  ]);
}

type ListParams = Windows & { skip: number; take: number; status: string | undefined };

function listStatement(withStatus: boolean) {
  return prepared(`list_deliveries_${withStatus ? 'status' : 'all'}`, (db, p: ListParams) =>
    db
      .selectFrom('webhook_deliveries')
      .select(rowColumns)
      .where((eb) => eb.and([inWindows(eb, p), ...(withStatus ? [eb('status', '=', typed(p.status, 'text'))] : [])]))
      .orderBy((eb) => receivedAt(eb), 'desc')
      .orderBy('id', 'desc')
      .offset(p.skip)
      .limit(p.take),
  );
}
function countStatement(withStatus: boolean) {
  return prepared(`count_deliveries_${withStatus ? 'status' : 'all'}`, (db, p: ListParams) =>
    db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
      .where((eb) => eb.and([inWindows(eb, p), ...(withStatus ? [eb('status', '=', typed(p.status, 'text'))] : [])])),
  );
}
const listForAccounts = { all: listStatement(false), status: listStatement(true) };
const countForAccounts = { all: countStatement(false), status: countStatement(true) };

const replay = prepared('replay_delivery', (db, p: Windows & { id: number }) =>
  db
    .updateTable('webhook_deliveries')
    .set({ status: 'received', attempts: 0, last_error: null, processed_at: null })
    .where((eb) => eb.and([inWindows(eb, p), eb('id', '=', typed(p.id, 'bigint'))]))
    .returning(rowColumns),
);

/**
 * Backlog per business account: deliveries waiting (`received`), dead letters (`failed`) and the oldest
 * waiting one. Only unfinished rows are read (the (status, received_at) index), whatever the retention.
 */
const backlogForAccounts = prepared('deliveries_backlog_for_accounts', (db, p: { wabaIds: string[] }) =>
  db
    .selectFrom('webhook_deliveries as d')
    .crossJoinLateral((eb) => unnest('w', { waba: 'text' }, { waba: eb.ref('d.waba_ids') }))
    .select((eb) => [
      eb.ref('w.waba').$notNull().as('wabaId'),
      eb.cast<number>(eb.fn.countAll().filterWhere('d.status', '=', 'received'), 'integer').as('pending'),
      eb.cast<number>(eb.fn.countAll().filterWhere('d.status', '=', 'failed'), 'integer').as('failed'),
      eb.fn.min('d.received_at').filterWhere('d.status', '=', 'received').as('oldestPendingAt'),
    ])
    .where((eb) =>
      eb.and([
        eb('d.status', 'in', ['received', 'failed']),
        eb('d.waba_ids', '&&', typed(p.wabaIds, 'text[]')),
        eb('w.waba', '=', eb.fn.any(typed(p.wabaIds, 'text[]'))),
      ]),
    )
    .groupBy('w.waba'),
);

export interface AccountBacklog {
  wabaId: string;
  pending: number;
  failed: number;
  oldestPendingAt: Date | null;
}

/**
 * The one owner of `webhook_deliveries`: every statement that reads or writes it (receiver, worker, sweeper,
 * retention, console). The receiver's INSERT is the hottest write of the service.
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

  /** In id order; unknown ids are left out. */
  async findForProcessing(ids: number[]): Promise<StoredDelivery[]> {
    const { rows: recent } = await this.db.exec(findRecent, { ids });
    if (recent.length === new Set(ids).size) return recent;
    const { rows } = await this.db.exec(findMany, { ids });
    return rows;
  }

  /**
   * `tx`: in the caller's transaction (the one that stored the deliveries' last events). `receivedAt`: as
   * findForProcessing read them (it bounds the partitions looked at).
   */
  async markProcessed(done: { id: number; events: number; receivedAt: Date }[], tx?: Tx): Promise<void> {
    if (done.length === 0) return;
    const since = new Date(Math.min(...done.map((d) => d.receivedAt.getTime())));
    await this.db.exec(markProcessed, { ids: done.map((d) => d.id), events: done.map((d) => d.events), since }, tx);
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
   * Drops the partitions wholly older than `cutoff` (retention of processed payloads), one transaction each, after
   * moving the deliveries in them that are not processed (waiting, dead letters) to the current week: those are
   * never dropped. Returns the partitions dropped and how many deliveries were kept.
   */
  async dropPartitionsBefore(cutoff: Date): Promise<{ dropped: Partition[]; kept: number }> {
    const dropped: Partition[] = [];
    let kept = 0;
    await dropDetachedLeftovers(this.db, 'webhook_deliveries');
    for (const p of expiredPartitions(await this.partitions(), cutoff)) {
      let moved = 0;
      const done = await dropPartition(this.db, 'webhook_deliveries', p, async (tx) => {
        moved = (await this.db.exec(keepUnfinished, { from: p.lowerBound, to: p.upperBound }, tx)).rowCount;
      });
      // A long reader holds the table: the next partitions would only wait for it too (and stall writes meanwhile).
      if (!done) break;
      dropped.push(p);
      kept += moved;
    }
    return { dropped, kept };
  }

  async listForAccounts(
    accounts: AccountWindow[],
    query: { page: number; limit: number; status?: DeliveryStatus },
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    const shape = query.status === undefined ? 'all' : 'status';
    const params: ListParams = { ...windowsOf(accounts), ...skipTake(query), status: query.status };
    const [rows, count] = await Promise.all([
      this.db.exec(listForAccounts[shape], params),
      this.db.exec(countForAccounts[shape], params),
    ]);
    return { rows: rows.rows, total: count.rows[0]?.n ?? 0 };
  }

  /** Back to `received` (attempts and error cleared) if it concerns one of the accounts, inside its window; null otherwise. */
  async resetForReplay(accounts: AccountWindow[], id: number, tx?: Tx): Promise<DeliveryRow | null> {
    const { rows } = await this.db.exec(replay, { ...windowsOf(accounts), id }, tx);
    return rows[0] ?? null;
  }

  /** Waiting and dead-lettered deliveries per business account of `wabaIds` (accounts with none are absent). */
  async backlogForAccounts(wabaIds: string[]): Promise<AccountBacklog[]> {
    const { rows } = await this.db.exec(backlogForAccounts, { wabaIds });
    return rows;
  }

  // ---- Raw bodies holding one contact (src/contacts: erasure) --------------------------

  /**
   * Up to `limit` deliveries of the account, after `after` (id), whose raw bytes hold one of `needles` (the
   * contact's addresses), in id order: each is rewritten or deleted next. Every partition, dead letters included.
   */
  @GenerateSql({ params: [Sample.WABA_ID, [Sample.PHONE], 0, 100] })
  async holding(
    wabaId: string,
    needles: string[],
    after: number,
    limit: number,
  ): Promise<{ id: number; receivedAt: Date; rawBody: Buffer }[]> {
    if (needles.length === 0) return [];
    return this.db
      .on()
      .selectFrom('webhook_deliveries')
      .select(['id', 'received_at as receivedAt', 'raw_body as rawBody'])
      .where('waba_ids', '@>', typed([wabaId], 'text[]'))
      .where('id', '>', after)
      .where((eb) => eb.or(needles.map((n) => bytesContain('raw_body', Buffer.from(n)))))
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /**
   * Replaces these deliveries' bytes (other users' items kept, the erased contact's gone) and marks them redacted, in
   * one statement (an erasure rewrites up to a batch of bodies at a time).
   */
  @GenerateSql({
    params: [Sample.TX, [{ id: Sample.NUMBER, receivedAt: Sample.DATE, rawBody: Buffer.from('{}') }]],
  })
  async rewriteBodies(tx: Tx, rows: { id: number; receivedAt: Date; rawBody: Buffer }[]): Promise<void> {
    if (rows.length === 0) return;
    const times = rows.map((r) => r.receivedAt.getTime());
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

  /** Deletes these deliveries (every item in them was the erased contact's), in one statement. */
  @GenerateSql({ params: [Sample.TX, [{ id: Sample.NUMBER, receivedAt: Sample.DATE }]] })
  async removeAll(tx: Tx, ds: { id: number; receivedAt: Date }[]): Promise<void> {
    if (ds.length === 0) return;
    const times = ds.map((d) => d.receivedAt.getTime());
    await this.db
      .on(tx)
      .deleteFrom('webhook_deliveries')
      .where('id', '=', (eb) => eb.fn.any(eb.val(ds.map((d) => d.id))))
      .where('received_at', '>=', new Date(Math.min(...times)))
      .where('received_at', '<=', new Date(Math.max(...times)))
      .execute();
  }
}

/** A business account of the reader and the window of its history the reader may see (accounts/business-accounts/read-window.ts). */
export interface AccountWindow {
  wabaId: string;
  since?: Date;
  until?: Date;
}

function windowsOf(accounts: AccountWindow[]): Windows {
  return {
    wabaIds: accounts.map((a) => a.wabaId),
    since: accounts.map((a) => a.since ?? null),
    until: accounts.map((a) => a.until ?? null),
  };
}
