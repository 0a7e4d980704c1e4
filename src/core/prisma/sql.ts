import type pg from 'pg';

/**
 * A named statement: node-postgres prepares it once per connection, PostgreSQL then skips parsing and
 * (once it settles on a generic plan) planning. Names are `sql_<name>`, apart from Prisma's `bm_<hash>`.
 */
export function statement(name: string, text: string): (values: unknown[]) => pg.QueryConfig {
  return (values) => ({ name: `sql_${name}`, text, values });
}

/**
 * A statement planned for its values each time it runs (unnamed: no prepared, generic plan). For set-based
 * statements whose best plan depends on the size of their arrays and of the table: a generic plan made while a
 * table was new and small (before its first ANALYZE) would read the whole table on every run.
 */
export function planned(text: string): (values: unknown[]) => pg.QueryConfig {
  return (values) => ({ text, values });
}

/**
 * BEGIN … COMMIT on one connection of the pool. Any error rolls back by dropping the connection (the
 * server aborts its transaction), which is also right when the connection itself is what failed.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (err) {
    client.release(err instanceof Error ? err : new Error(String(err)));
    throw err;
  }
}

// The one transaction type (Db's) and, for the repositories still on node-postgres, its connection.
export { connectionOf, type Tx } from '../db/db.js';
