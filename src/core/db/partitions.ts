import { sql } from 'kysely';
import { Db, type Tx } from './db.js';
import { builder, prepared } from './statement.js';

/**
 * Weekly range partitions (Monday 00:00 UTC) of the tables that grow with traffic: `events` (by created_at) and
 * `webhook_deliveries` (by received_at). Their DDL is SQL functions of migrations storage_bigint_partitions and
 * storage_partition_ddl (identifiers cannot be parameters; there they are quoted by format('%I')); docs/storage.md
 * says why weekly. The repository that owns a table is the only caller for that table.
 */
export type PartitionedTable = 'events' | 'webhook_deliveries';

export const WEEK_MS = 7 * 24 * 3600_000;
/** How far ahead partitions are kept (the maintenance task runs hourly, so weeks of slack if it stops). */
export const PARTITION_WEEKS_AHEAD = 4;
/**
 * A detach waits at most this long for the parent's lock; past it the drop is left to the next pass. While it waits,
 * the inserts and reads that come after it wait behind it (PostgreSQL's lock queue): this bounds that stall.
 */
const DROP_LOCK_TIMEOUT = '200ms';

/**
 * A new week's partition analyzed as soon as it holds rows. PostgreSQL plans a partition without statistics until
 * autovacuum first analyzes it (its next pass after the first 50 rows: up to autovacuum_naptime, a minute by
 * default; and never while an ANALYZE of it made when it was empty stands); meanwhile the planner guesses a default
 * selectivity for every condition, and the events' dedupe probe (`= ANY(keys)` in the 8-day window) was planned as a
 * scan of the week's per-account index by created_at: all of the partition for every chunk, 2–5× the PostgreSQL time
 * per event (docs/storage.md, "The account's key"). The writer names the partition it stored rows in; a quarter of a
 * second later (its transaction has committed: its rows are what ANALYZE samples) this ANALYZEs the partition if
 * PostgreSQL holds no statistics of it (pg_stats), once per partition and process (again at the writer's next rows
 * while ANALYZE found none). A failure leaves it to autovacuum, as before.
 */
export class FreshPartitions {
  private readonly settled = new Set<number>();
  private readonly pending = new Set<number>();

  constructor(
    private readonly db: Db,
    private readonly delayMs = 250,
  ) {}

  /** Rows were stored in this partition (its oid). */
  stored(partition: number | undefined): void {
    if (partition === undefined || this.settled.has(partition) || this.pending.has(partition)) return;
    this.pending.add(partition);
    setTimeout(() => {
      analyzeWithoutStatistics(this.db, partition)
        .then((analyzed) => analyzed && this.settled.add(partition))
        .catch(() => this.settled.add(partition))
        .finally(() => this.pending.delete(partition));
    }, this.delayMs).unref();
  }
}

/**
 * ANALYZE a partition (its oid) if PostgreSQL holds no statistics of it (never analyzed, or analyzed while empty);
 * whether it has statistics now.
 */
export async function analyzeWithoutStatistics(db: Db, partition: number): Promise<boolean> {
  const has = sql<boolean>`EXISTS (SELECT 1 FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname)`;
  const state = async () =>
    (
      await sql<{ name: string; has: boolean }>`
        SELECT c.oid::regclass::text AS name, ${has} AS has
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ${partition}::oid`.execute(
        db.on(),
      )
    ).rows[0];
  const before = await state();
  if (!before || before.has) return true;
  // regclass's text is the name quoted where it needs to be.
  await sql`ANALYZE ${sql.raw(before.name)}`.execute(db.on());
  return (await state())?.has ?? true;
}

export interface Partition {
  name: string;
  /** null for the history partition (MINVALUE: everything stored before the upgrade). */
  lowerBound: Date | null;
  upperBound: Date;
}

/** PostgreSQL's answer to a row whose partition does not exist (SQLSTATE 23514, "no partition of relation … found for row"). */
export function isMissingPartition(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === '23514' && typeof e.message === 'string' && e.message.startsWith('no partition of relation');
}

const ensure = prepared('storage_ensure_partitions', (db, p: { table: PartitionedTable; from: Date; through: Date }) =>
  db.selectNoFrom((eb) =>
    eb.fn<number>('storage_ensure_partitions', [eb.val(p.table), eb.val(p.from), eb.val(p.through)]).as('made'),
  ),
);

const list = prepared('storage_partitions', (db, p: { table: PartitionedTable }) =>
  db
    .selectFrom((eb) =>
      eb
        .fn<{ name: string; lower_bound: Date | null; upper_bound: Date }>('storage_partitions', [eb.val(p.table)])
        .as('p'),
    )
    .select(['p.name', 'p.lower_bound as lowerBound', 'p.upper_bound as upperBound']),
);

/** SET LOCAL lock_timeout: the rest of the transaction waits at most that long for any lock. */
const lockTimeout = prepared('storage_lock_timeout', (db, p: { timeout: string }) =>
  db.selectNoFrom((eb) =>
    eb.fn<string>('set_config', [eb.val('lock_timeout'), eb.val(p.timeout), eb.lit(true)]).as('timeout'),
  ),
);

const detach = prepared('storage_detach_partition', (db, p: { table: PartitionedTable; partition: string }) =>
  db.selectNoFrom((eb) =>
    eb.fn<null>('storage_detach_partition', [eb.val(p.table), eb.val(p.partition)]).as('detached'),
  ),
);

const dropDetached = prepared('storage_drop_detached', (db, p: { table: PartitionedTable; partition: string }) =>
  db.selectNoFrom((eb) =>
    eb.fn<boolean>('storage_drop_detached', [eb.val(p.table), eb.val(p.partition)]).as('dropped'),
  ),
);

const leftovers = prepared('storage_detached_leftovers', (db, p: { table: PartitionedTable }) =>
  db
    .selectFrom((eb) => eb.fn<{ name: string }>('storage_detached_leftovers', [eb.val(p.table)]).as('l'))
    .select('l.name'),
);

/** Creates the missing weekly partitions from the week of `from` through `through`; returns how many it made. */
export async function ensurePartitions(db: Db, table: PartitionedTable, from: Date, through: Date): Promise<number> {
  const { rows } = await db.exec(ensure, { table, from, through });
  return rows[0]?.made ?? 0;
}

/** The partitions of `table`, oldest first. */
export async function partitionsOf(db: Db, table: PartitionedTable): Promise<Partition[]> {
  const { rows } = await db.exec(list, { table });
  return rows;
}

/**
 * Takes one partition out of its table, in one short transaction: `before`, if given (in the same transaction), deals
 * with its rows (counts, rows to keep), then DETACH: the catalogue changes, no scan of the rows, no DELETE. The detach
 * needs the parent's ACCESS EXCLUSIVE lock for a moment; it waits at most DROP_LOCK_TIMEOUT for it (a long reader
 * holding the parent), so the live partition is never held up for longer than that. The files go afterwards, in a
 * transaction of their own (DROP TABLE of the detached table: seconds for gigabytes of files, while nothing waits
 * on it). Returns false when the lock was not had in time (the next pass tries again).
 */
export async function dropPartition(
  db: Db,
  table: PartitionedTable,
  partition: Partition,
  before?: (tx: Tx) => Promise<void>,
): Promise<boolean> {
  try {
    await db.transaction(async (tx) => {
      await db.exec(lockTimeout, { timeout: DROP_LOCK_TIMEOUT }, tx);
      await before?.(tx);
      await db.exec(detach, { table, partition: partition.name }, tx);
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === '55P03') return false; // lock_not_available
    throw err;
  }
  await db.exec(dropDetached, { table, partition: partition.name });
  return true;
}

/**
 * Drops the tables of `table`'s partition names that are no longer attached: a drop whose DROP TABLE did not happen
 * (the process stopped between the detach and the drop). Returns their names.
 */
export async function dropDetachedLeftovers(db: Db, table: PartitionedTable): Promise<string[]> {
  const { rows } = await db.exec(leftovers, { table });
  for (const { name } of rows) await db.exec(dropDetached, { table, partition: name });
  return rows.map((r) => r.name);
}

/** The partitions wholly before `cutoff` (every row in them is older): the ones a retention may drop. */
export function expiredPartitions(partitions: Partition[], cutoff: Date): Partition[] {
  return partitions.filter((p) => p.upperBound.getTime() <= cutoff.getTime());
}

/**
 * A week's partitions are compacted once the week has been over this long: by then the late work on its rows is done
 * (the processing of a backlog, a replay); a week ends Monday 00:00 UTC, so this is Tuesday.
 */
export const COMPACT_AFTER_MS = 24 * 3600_000;
/** A claimed compaction not finished after this long (its process stopped) is taken over by the next pass. */
const COMPACTION_TAKEOVER = '6 hours';
/** The rewrite of a deliveries partition waits at most this long for each lock (writers of its week, the swap). */
const REWRITE_LOCK_TIMEOUT = '200ms';

export interface Compaction {
  partition: string;
  /** The partition's bytes (heap, TOAST, indexes) before and after. */
  bytesBefore: number;
  bytesAfter: number;
  seconds: number;
  /** webhook_deliveries: the rows copied by the rewrite of its heap (null: events, whose heap is only ever appended to). */
  rewrittenRows: number | null;
  /** Invalid indexes an interrupted rebuild had left, dropped first. */
  leftovers: string[];
}

const claimCompaction = prepared(
  'storage_compaction_claim',
  (db, p: { table: PartitionedTable; endedBefore: Date; takeover: string }) =>
    db.selectNoFrom((eb) =>
      eb
        .fn<string | null>('storage_compaction_claim', [
          eb.val(p.table),
          eb.val(p.endedBefore),
          sql<string>`${p.takeover}::interval`,
        ])
        .as('partition'),
    ),
);

const releaseCompaction = prepared('storage_compaction_release', (db, p: { partition: string }) =>
  db.selectNoFrom((eb) => eb.fn<null>('storage_compaction_release', [eb.val(p.partition)]).as('released')),
);

const invalidIndexes = prepared('storage_invalid_indexes', (db, p: { partition: string }) =>
  db
    .selectFrom((eb) => eb.fn<{ name: string }>('storage_invalid_indexes', [eb.val(p.partition)]).as('i'))
    .select('i.name'),
);

const totalBytes = prepared('storage_partition_bytes', (db, p: { partition: string }) =>
  db.selectNoFrom((eb) =>
    eb.cast<string>(eb.fn('pg_total_relation_size', [sql<string>`${p.partition}::regclass`]), 'text').as('bytes'),
  ),
);

const rewrite = prepared('storage_rewrite_partition', (db, p: { table: PartitionedTable; partition: string }) =>
  db.selectNoFrom((eb) =>
    eb.cast<string>(eb.fn('storage_rewrite_partition', [eb.val(p.table), eb.val(p.partition)]), 'text').as('rows'),
  ),
);

const finishCompaction = prepared('storage_compaction_finish', (db, p: { partition: string; before: string }) =>
  db.selectNoFrom((eb) =>
    eb
      .cast<string>(
        eb.fn('storage_compaction_finish', [eb.val(p.partition), eb.cast(eb.val(p.before), 'bigint')]),
        'text',
      )
      .as('after'),
  ),
);

/** A statement with an identifier in it (DDL takes no parameters), compiled as it is sent. */
const ddl = (query: ReturnType<typeof sql>) => ({ compile: () => query.compile(builder) });

/**
 * Compacts one partition of `table` whose week ended before `endedBefore` and was not compacted yet (the most recent
 * first); null when there is none, or when the rewrite of a deliveries partition did not get its locks in time (its
 * claim is given back: the next pass tries again).
 *
 * - `webhook_deliveries`: its heap rewritten without the space the processing updates left (storage_rewrite_partition,
 *   one transaction: the week's writers wait for it, its readers only for the swap; every lock wait bounded by
 *   REWRITE_LOCK_TIMEOUT).
 * - both tables: REINDEX CONCURRENTLY. The partition stays readable and writable throughout (each index is built anew
 *   beside the old one, then swapped), at the cost of the index bytes twice while it runs. It cannot run in a
 *   transaction: a process that stops in the middle leaves invalid copies, which the next compaction of that partition
 *   drops first (its claim is taken over after COMPACTION_TAKEOVER).
 */
export async function compactEndedPartition(
  db: Db,
  table: PartitionedTable,
  endedBefore: Date,
): Promise<Compaction | null> {
  const partition = (await db.exec(claimCompaction, { table, endedBefore, takeover: COMPACTION_TAKEOVER })).rows[0]
    ?.partition;
  if (!partition) return null;
  const started = Date.now();
  const leftovers = (await db.exec(invalidIndexes, { partition })).rows.map((r) => r.name);
  for (const index of leftovers) await db.run(ddl(sql`DROP INDEX CONCURRENTLY IF EXISTS ${sql.id(index)}`));
  const before = (await db.exec(totalBytes, { partition })).rows[0]!.bytes;
  let rewrittenRows: number | null = null;
  if (table === 'webhook_deliveries') {
    try {
      rewrittenRows = await db.transaction(async (tx) => {
        await db.exec(lockTimeout, { timeout: REWRITE_LOCK_TIMEOUT }, tx);
        return Number((await db.exec(rewrite, { table, partition }, tx)).rows[0]!.rows);
      });
    } catch (err) {
      if ((err as { code?: unknown }).code !== '55P03') throw err; // lock_not_available
      await db.exec(releaseCompaction, { partition });
      return null;
    }
  }
  await db.run(ddl(sql`REINDEX TABLE CONCURRENTLY ${sql.id(partition)}`));
  const after = (await db.exec(finishCompaction, { partition, before })).rows[0]!.after;
  return {
    partition,
    bytesBefore: Number(before),
    bytesAfter: Number(after),
    seconds: (Date.now() - started) / 1000,
    rewrittenRows,
    leftovers,
  };
}
