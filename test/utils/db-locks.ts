import type pg from 'pg';

/**
 * How many of this database's statements matching `queryLike` (an ILIKE pattern) wait on a lock, as pg_stat_activity
 * says: for tests that hold a table lock and wait until the app's statements queue behind it. Ask on a connection
 * outside the locking transaction: inside it pg_stat_activity is a frozen snapshot.
 */
export async function statementsWaitingOnLock(observer: pg.Client, queryLike: string): Promise<number> {
  const { rows } = await observer.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE $1`,
    [queryLike],
  );
  return rows[0]!.n;
}
