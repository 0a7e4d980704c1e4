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
