import { Db, type Tx } from './db.js';
import { prepared } from './statement.js';

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
 * Takes one partition out of its table, in one short transaction: `before` (in the same transaction) deals with its
 * rows (counts, rows to keep), then DETACH: the catalogue changes, no scan of the rows, no DELETE. The detach needs
 * the parent's ACCESS EXCLUSIVE lock for a moment; it waits at most DROP_LOCK_TIMEOUT for it (a long reader holding
 * the parent), so the live partition is never held up for longer than that. The files go afterwards, in a
 * transaction of their own (DROP TABLE of the detached table: seconds for gigabytes of files, while nothing waits
 * on it). Returns false when the lock was not had in time (the next pass tries again).
 */
export async function dropPartition(
  db: Db,
  table: PartitionedTable,
  partition: Partition,
  before: (tx: Tx) => Promise<void>,
): Promise<boolean> {
  try {
    await db.transaction(async (tx) => {
      await db.exec(lockTimeout, { timeout: DROP_LOCK_TIMEOUT }, tx);
      await before(tx);
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
