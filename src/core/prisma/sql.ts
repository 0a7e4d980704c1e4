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
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
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

declare const txBrand: unique symbol;

/**
 * A transaction in progress, as services see it: something to hand from a unit of work to repository
 * methods, with nothing to query on. Only repositories open it (`connectionOf`).
 */
export interface Tx {
  readonly [txBrand]: true;
}

/** For repositories: the connection a Tx stands for. */
export function connectionOf(tx: Tx): pg.PoolClient {
  return tx as unknown as pg.PoolClient;
}

/** BEGIN … COMMIT with the work handed an opaque Tx (see inTransaction for the rollback rules). */
export function inTx<T>(pool: pg.Pool, work: (tx: Tx) => Promise<T>): Promise<T> {
  return inTransaction(pool, (client) => work(client as unknown as Tx));
}

/**
 * A read-only REPEATABLE READ transaction: every statement of `work` reads the same snapshot (taken by its first
 * statement), so reads of several tables (a message and its status history, a page and its count) agree.
 */
export function inSnapshot<T>(pool: pg.Pool, work: (tx: Tx) => Promise<T>): Promise<T> {
  return inTransaction(pool, (client) => work(client as unknown as Tx), 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
}
