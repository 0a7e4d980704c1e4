/** A WHERE clause built from the filters given, with its values and a name per shape (for prepared statements). */
export interface SqlFilter {
  sql: string;
  values: unknown[];
  /** One letter per filter present (`all` when none): statements of one shape share a prepared statement. */
  shape: string;
}

/**
 * `scope` ($1: the tenant condition, always first) AND each condition whose value is defined. Conditions are
 * `[column, operator, value, letter]`; values are parameters, never SQL text.
 */
export function sqlFilter(scope: { sql: string; value: unknown }, conditions: Array<[string, string, unknown, string]>): SqlFilter {
  const values: unknown[] = [scope.value];
  const parts = [scope.sql];
  let shape = '';
  for (const [column, op, value, letter] of conditions) {
    if (value === undefined) continue;
    values.push(value);
    parts.push(`${column} ${op} $${values.length}`);
    shape += letter;
  }
  return { sql: parts.join(' AND '), values, shape: shape || 'all' };
}

/**
 * The one statement of a feed over a table whose rows carry the writing transaction's id (xid8): the rows after
 * `(xid, id)` below the snapshot's xmin (the horizon), oldest first, and `beyond`, the smallest xid of the scope
 * at or above the horizon (what a long poll waits for). One statement, one snapshot: horizon, rows and beyond
 * agree. The rows come with `xid` (an xid8, read as a string); parameters: the filter's, then the position and
 * the limit. `table`, `xidColumn`, `columns` and `scope` are SQL text of the repository that owns the table.
 */
export function feedSql(q: { table: string; xidColumn: string; columns: string; scope: string; where: SqlFilter }): string {
  const n = q.where.values.length;
  // The horizon and `beyond` once per statement (a materialized CTE): as a scalar subquery of the select list it ran
  // once per row returned, across every partition each time (bench/history/2026-11-22-to-26.md, "Storage").
  return `WITH h AS MATERIALIZED (
            SELECT x.horizon,
                   (SELECT b.${q.xidColumn} FROM ${q.table} b WHERE b.${q.scope} AND b.${q.xidColumn} >= x.horizon ORDER BY b.${q.xidColumn} LIMIT 1) AS beyond
              FROM pg_snapshot_xmin(pg_current_snapshot()) AS x(horizon))
          SELECT h.horizon::text AS horizon, h.beyond::text AS beyond, r.*
            FROM h
            LEFT JOIN LATERAL (
              SELECT ${q.columns}, ${q.xidColumn} AS xid FROM ${q.table}
               WHERE ${q.where.sql} AND (${q.xidColumn}, id) > ($${n + 1}::xid8, $${n + 2}::bigint) AND ${q.xidColumn} < h.horizon
               ORDER BY ${q.xidColumn}, id LIMIT $${n + 3}) r ON true
           ORDER BY r.xid, r.id`;
}

/** A row of feedSql's statement: a row of the table (all null when the page is empty), the horizon and `beyond`. */
export type FeedStatementRow = Record<string, unknown> & { id: number | null; horizon: string; beyond: string | null };

/** A feed statement's rows split: the page (rows of the table, with `xid`), the horizon and `beyond`. */
export function feedRows<R>(rows: FeedStatementRow[]): { rows: R[]; horizon: bigint; beyond: bigint | undefined } {
  const first = rows[0]!;
  return {
    rows: rows.filter((r) => r.id !== null).map(({ horizon: _h, beyond: _b, ...r }) => r as unknown as R),
    horizon: BigInt(first.horizon),
    beyond: first.beyond === null ? undefined : BigInt(first.beyond),
  };
}
