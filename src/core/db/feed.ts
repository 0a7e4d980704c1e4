import type { AliasedSelectQueryBuilder, Expression, ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from './database.js';
import { snapshotHorizon } from './pg.js';

/** The snapshot's horizon, as the feed statements' `x` row. */
type HorizonRow = { x: { horizon: string } };
/** The materialized `h` row every feed statement reads: the horizon and `beyond`. */
type FeedHead = { h: { horizon: string; beyond: string | null } };

/** What a feed statement of one table gives the skeleton: both parts are Kysely builders on that table. */
export interface FeedParts<O extends { id: number; xid: string }> {
  /**
   * The smallest xid of the account's rows at or above the horizon (`horizon`): a scalar subquery (one row at most), as `beyond`.
   * `beyond` tells a long poll that a transaction above the horizon has already committed rows of this account.
   */
  beyond: (
    eb: ExpressionBuilder<Database & HorizonRow, 'x'>,
    horizon: Expression<string>,
  ) => AliasedSelectQueryBuilder<Record<string, string>, 'beyond'>;
  /** The page: the account's filtered rows after the cursor and below `horizon`, oldest first, limited, as `r`. */
  page: (
    eb: ExpressionBuilder<Database & FeedHead, 'h'>,
    horizon: Expression<string>,
  ) => AliasedSelectQueryBuilder<O, 'r'>;
}

/**
 * A feed statement (events by `xid`, messages by `changed_xid`): the snapshot's horizon and `beyond` once per
 * statement, in a materialized CTE (as a scalar subquery of the select list they ran once per row returned, across
 * every partition each time: bench/history/2026-11-22-to-26.md, "Storage"), the page LEFT JOINed to it, so the
 * statement returns one row even when the page is empty. feedRows splits what it returns.
 */
export function feedStatement<O extends { id: number; xid: string }>(db: Kysely<Database>, parts: FeedParts<O>) {
  return db
    .with(
      (cte) => cte('h').materialized(),
      (db) => db.selectFrom(snapshotHorizon('x')).select((eb) => ['x.horizon', parts.beyond(eb, eb.ref('x.horizon'))]),
    )
    .selectFrom('h')
    .leftJoinLateral(
      (eb) => parts.page(eb, eb.ref('h.horizon')),
      (join) => join.onTrue(),
    )
    .select((eb) => [
      eb.cast<string>('h.horizon', 'text').as('horizon'),
      eb.cast<string | null>('h.beyond', 'text').as('beyond'),
    ])
    .selectAll('r')
    .orderBy('r.xid')
    .orderBy('r.id');
}

/** A row of a feed statement: a row of the table (all null when the page is empty), the horizon and `beyond`. */
export type FeedStatementRow = Record<string, unknown> & { id: number | null; horizon: string; beyond: string | null };

/**
 * A feed statement's rows split: the page (rows of the table, with `xid`), the horizon and `beyond`. The statement
 * (the repository's) selects the snapshot's horizon and the smallest xid at or above it (`beyond`) once, in a
 * materialized CTE, and LEFT JOINs the page to it: one row even when the page is empty.
 */
export function feedRows<R>(rows: FeedStatementRow[]): { rows: R[]; horizon: bigint; beyond: bigint | undefined } {
  const first = rows[0];
  if (!first) throw new Error('a feed statement returns at least one row (its horizon)');
  return {
    rows: rows.filter((r) => r.id !== null).map(({ horizon: _h, beyond: _b, ...r }) => r as unknown as R),
    horizon: BigInt(first.horizon),
    beyond: first.beyond === null ? undefined : BigInt(first.beyond),
  };
}
