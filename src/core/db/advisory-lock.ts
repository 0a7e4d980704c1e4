import type { Kysely } from 'kysely';
import type { Database } from './database.js';

/**
 * Takes PostgreSQL's transaction-scoped advisory lock of `key` (hashed to a lock number): held until the transaction
 * ends, so call it on a unit of work's transaction. Two units that count something before they add to it (the
 * keys of an account, the pending invitations of an organization) take the same key and run one after the other.
 */
export async function lockForTransaction(db: Kysely<Database>, key: string): Promise<void> {
  await db
    .selectNoFrom((eb) =>
      eb.fn<unknown>('pg_advisory_xact_lock', [eb.fn<number>('hashtext', [eb.val(key)])]).as('locked'),
    )
    .execute();
}
