import type pg from 'pg';
import { inTransaction } from './sql.js';

/**
 * Weekly range partitions (Monday 00:00 UTC) of the tables that grow with traffic: `events` (by created_at) and
 * `webhook_deliveries` (by received_at). The SQL functions they use are in migration storage_bigint_partitions;
 * docs/storage.md says why weekly. The repository that owns a table is the only caller for that table.
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

/** Creates the missing weekly partitions from the week of `from` through `through`; returns how many it made. */
export async function ensurePartitions(db: pg.Pool | pg.PoolClient, table: PartitionedTable, from: Date, through: Date): Promise<number> {
  const { rows } = await db.query<{ made: number }>({
    name: 'sql_storage_ensure_partitions',
    text: 'SELECT storage_ensure_partitions($1, $2, $3) AS made',
    values: [table, from, through],
  });
  return rows[0]!.made;
}

/** The partitions of `table`, oldest first. */
export async function partitionsOf(db: pg.Pool | pg.PoolClient, table: PartitionedTable): Promise<Partition[]> {
  const { rows } = await db.query<Partition>({
    name: 'sql_storage_partitions',
    text: 'SELECT name, lower_bound AS "lowerBound", upper_bound AS "upperBound" FROM storage_partitions($1)',
    values: [table],
  });
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
export async function dropPartition(pool: pg.Pool, table: PartitionedTable, partition: Partition, before: (client: pg.PoolClient) => Promise<void>): Promise<boolean> {
  try {
    await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
      await before(client);
      await client.query(`ALTER TABLE ${quoteIdent(table)} DETACH PARTITION ${quoteIdent(partition.name)}`);
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === '55P03') return false; // lock_not_available
    throw err;
  }
  await pool.query(`DROP TABLE IF EXISTS ${quoteIdent(partition.name)}`);
  return true;
}

/**
 * Tables of `table`'s partition names that are no longer attached: a drop whose DROP TABLE did not happen (the process
 * stopped between the detach and the drop). The next pass drops them.
 */
export async function dropDetachedLeftovers(pool: pg.Pool, table: PartitionedTable): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>({
    name: 'sql_storage_detached_leftovers',
    text: `SELECT c.relname::text AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind = 'r' AND NOT c.relispartition AND c.relname ~ ('^' || $1 || '_(p[0-9]{8}|history)$')`,
    values: [table],
  });
  for (const { name } of rows) await pool.query(`DROP TABLE IF EXISTS ${quoteIdent(name)}`);
  return rows.map((r) => r.name);
}

/** The partitions wholly before `cutoff` (every row in them is older): the ones a retention may drop. */
export function expiredPartitions(partitions: Partition[], cutoff: Date): Partition[] {
  return partitions.filter((p) => p.upperBound.getTime() <= cutoff.getTime());
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
