// What the statements of the `messages` table share.
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Database } from '../../core/db/database.js';
import { typed } from '../../core/db/pg.js';

export type Eb = ExpressionBuilder<Database, 'messages'>;

/**
 * The tenant check of the statements that find a message by id for its business account. Written so that no index
 * can serve it: only the primary key may find the row. As a plain `business_account_id = $2`, a prepared statement's
 * generic plan, made while `messages` had no statistics yet (a fresh database, before autovacuum's first ANALYZE),
 * used the (business_account_id, to, created_at) index instead and read every message of the account on each send:
 * measured 13.7 M index tuples read for 4,600 sends in a bench run.
 */
export const sameAccount = (eb: Eb, businessAccountId: string): Expression<SqlBool> =>
  eb(eb.parens('business_account_id', '=', typed(businessAccountId, 'uuid')), 'is', true);

/**
 * `m.id = ANY(ARRAY(SELECT … WHERE id = ANY(ids) ORDER BY id FOR UPDATE))`: a batch UPDATE of these messages that
 * locks them all first, in id order, as the worker's status chunks lock theirs (lock_messages_for_statuses). Passing
 * the ids sorted is not enough (the callers did until 2026-12-04): a plan that hash-joins a scan of `messages` (a
 * small table, as in the test suites) visits them in the heap's order, and two batches that lock in different orders
 * deadlock (seen in the campaign fault suite: a batch of sent marks against three status chunks, one second of
 * `deadlock_timeout` each). The sub-select runs once, before the first row is updated (an InitPlan); its array then
 * finds the rows by primary key.
 */
export const lockedInIdOrder = (
  eb: ExpressionBuilder<Database & { m: Database['messages'] }, 'm'>,
  ids: number[],
): Expression<SqlBool> =>
  eb(
    'm.id',
    '=',
    eb.fn.any(
      eb.fn<number[]>('array', [
        eb
          .selectFrom('messages as l')
          .select('l.id')
          .where('l.id', '=', eb.fn.any(typed(ids, 'bigint[]')))
          .orderBy('l.id')
          .forUpdate(),
      ]),
    ),
  );
