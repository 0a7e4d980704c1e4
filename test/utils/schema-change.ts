import pg from 'pg';

/** Deadlock detected, lock not available (lock_timeout): another session held what the statement needed. */
const RETRYABLE = new Set(['40P01', '55P03']);

/**
 * A schema change (CREATE/DROP TRIGGER) on a table the rest of the suite keeps writing to: the API's receiver, the
 * worker and the other test files insert into the same partitioned tables at any moment, so the statement takes its
 * locks under a short lock_timeout and is tried again when it met a deadlock or a busy lock, until it goes through
 * (within a generous ceiling) instead of failing the test by timing. Any other error is thrown at once.
 */
export async function schemaChange(db: pg.Pool | pg.Client, statement: string, timeoutMs = 120_000): Promise<void> {
  const client = db instanceof pg.Pool ? await db.connect() : db;
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await client.query(`BEGIN; SET LOCAL lock_timeout = '2s'; ${statement}; COMMIT`);
        return;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        const code = (err as { code?: string }).code ?? '';
        if (!RETRYABLE.has(code) || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 400));
      }
    }
  } finally {
    if (client !== db) (client as pg.PoolClient).release();
  }
}
