import { sql, type AliasedRawBuilder, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { JsonValue } from './database.js';

/**
 * PostgreSQL constructs Kysely has no builder for, typed: the set-returning functions our set-based statements read
 * arrays and JSON rows through. The only SQL text of the data access outside the .sql files; each is a function of
 * column names and types, never of values (values are parameters).
 */

/** The PostgreSQL types of parameters and record columns used here, and what node-postgres reads them as. */
export interface PgTypes {
  uuid: string;
  text: string;
  int: number;
  bigint: number;
  boolean: boolean;
  timestamptz: Date;
  jsonb: JsonValue;
  bytea: Buffer;
  /** A transaction id (64-bit, never wraps): read as its text. */
  xid8: string;
  /** A row's list (`waba_ids`): a jsonRecords column or a VALUES cell, never an unnest array (it would flatten). */
  'text[]': string[];
}
export type PgType = keyof PgTypes;

type Row<C extends Record<string, PgType>> = { [K in keyof C]: PgTypes[C[K]] | null };

/**
 * `unnest($1::t1[], $2::t2[], …) [WITH ORDINALITY] AS alias(c1, c2, …[, ord])`: one row per index of the arrays, a
 * column per array. `columns` gives each column's type and `arrays` its values (a parameter each).
 */
export function unnest<A extends string, C extends Record<string, PgType>>(
  alias: A,
  columns: C,
  arrays: { [K in keyof C]: unknown },
): AliasedRawBuilder<Row<C>, A>;
export function unnest<A extends string, C extends Record<string, PgType>, O extends string>(
  alias: A,
  columns: C,
  arrays: { [K in keyof C]: unknown },
  ordinality: O,
): AliasedRawBuilder<Row<C> & { [K in O]: number }, A>;
export function unnest(
  alias: string,
  columns: Record<string, PgType>,
  arrays: Record<string, unknown>,
  ordinality?: string,
): AliasedRawBuilder<unknown, string> {
  const names = Object.keys(columns);
  const args = sql.join(names.map((c) => sql`${arrays[c]}::${sql.raw(columns[c]!)}[]`));
  const outColumns = sql.join([...names, ...(ordinality ? [ordinality] : [])].map((c) => sql.id(c)));
  return sql`unnest(${args})${ordinality ? sql` WITH ORDINALITY` : sql``}`.as(sql`${sql.id(alias)}(${outColumns})`);
}

/** `jsonb_to_recordset($1::jsonb) AS alias(c1 t1, …)`: the objects of a JSON array (one parameter) as rows. */
export function jsonRecords<A extends string, C extends Record<string, PgType>>(
  alias: A,
  columns: C,
  json: unknown,
): AliasedRawBuilder<Row<C>, A> {
  const definitions = sql.join(Object.entries(columns).map(([c, type]) => sql`${sql.id(c)} ${sql.raw(type)}`));
  return sql<Row<C>>`jsonb_to_recordset(${json}::jsonb)`.as<A>(sql`${sql.id(alias)}(${definitions})`);
}

/** `$n::type`: a parameter of a known type where PostgreSQL cannot infer it (in a select list, a function's argument). */
export function typed<T extends PgType>(value: unknown, type: T): RawBuilder<PgTypes[T]>;
export function typed<T extends PgType>(value: unknown, type: `${T}[]`): RawBuilder<Array<PgTypes[T]>>;
export function typed(value: unknown, type: string): RawBuilder<unknown> {
  return sql`${value}::${sql.raw(type)}`;
}

/**
 * `pg_snapshot_xmin(pg_current_snapshot()) AS alias(horizon)`: the oldest transaction still running when the statement
 * took its snapshot. Every transaction below it has ended: a feed ordered by xid is final below it.
 */
export function snapshotHorizon<A extends string>(alias: A): AliasedRawBuilder<{ horizon: string }, A> {
  return sql<{ horizon: string }>`pg_snapshot_xmin(pg_current_snapshot())`.as<A>(sql`${sql.id(alias)}(horizon)`);
}

type Span = `${number} ${'day' | 'days' | 'hour' | 'hours'}`;

/** `at - '<span>'::interval`: a constant span (not a parameter: the plan is the same for every run). */
export function minus(at: Expression<Date | null>, span: Span): RawBuilder<Date> {
  return sql<Date>`${at} - ${sql.lit(span)}::interval`;
}

/** `at + '<span>'::interval` (see minus). */
export function plus(at: Expression<Date | null>, span: Span): RawBuilder<Date> {
  return sql<Date>`${at} + ${sql.lit(span)}::interval`;
}

/** `now()`: the transaction's start time (stable within a statement: partitions are pruned with it at run time). */
export function now(): RawBuilder<Date> {
  return sql<Date>`now()`;
}

/** The UTC day or hour a timestamptz column falls in, as that day's or hour's first instant (a timestamptz). */
export function utcBucket(unit: 'day' | 'hour', column: string): RawBuilder<Date> {
  return sql<Date>`timezone('UTC', date_trunc(${sql.lit(unit)}, timezone('UTC', ${sql.ref(column)})))`;
}

/** Every UTC day or hour from the one of `since` to `until` (inclusive), as utcBucket gives them: one row each. */
export function utcBuckets(unit: 'day' | 'hour', since: Date, until: Date): RawBuilder<Date> {
  const utc = (at: Date) => sql`timezone('UTC', ${at}::timestamptz)`;
  return sql<Date>`timezone('UTC', generate_series(date_trunc(${sql.lit(unit)}, ${utc(since)}), ${utc(until)}, ${sql.lit(`1 ${unit}`)}::interval))`;
}

/**
 * `column = value` through an index on `hashtextextended(column, 0)` (a 64-bit hash of a text, 8 bytes an entry):
 * the hashes compared (what such an index is searched by: a statement uses an index on an expression only when it
 * names the same expression), then the texts (two values whose hashes collide read each other's rows, dropped here).
 * `value`: a value or a prepared statement's parameter.
 */
export function equalsByHash(column: string, value: unknown): RawBuilder<SqlBool> {
  const ref = sql.ref(column);
  return sql<SqlBool>`(hashtextextended(${ref}, 0) = hashtextextended(${value}::text, 0) AND ${ref} = ${value})`;
}

/** `column = ANY(values)` through the same index: the values' hashes as one array (computed once), then the texts. */
export function inByHash(column: string, values: string[]): RawBuilder<SqlBool> {
  const ref = sql.ref(column);
  const hashes = sql`ARRAY(SELECT hashtextextended(v, 0) FROM unnest(${values}::text[]) v)`;
  return sql<SqlBool>`(hashtextextended(${ref}, 0) = ANY (${hashes}) AND ${ref} = ANY (${values}::text[]))`;
}

/** A 16-byte bytea column as a uuid (fixed width: a B-tree of them holds 24-byte entries, of the bytea 32). */
export function bytesAsUuid(column: string): RawBuilder<string> {
  return sql<string>`encode(${sql.ref(column)}, 'hex')::uuid`;
}

/** The partition a row of a partitioned table is stored in: its `tableoid` (for RETURNING), as a number. */
export function partitionOid(): RawBuilder<number> {
  return sql<number>`tableoid::int8`;
}

/** `position($needle in column) > 0`: whether a bytea column holds these bytes anywhere (a raw webhook body, say). */
export function bytesContain(column: string, needle: Buffer): RawBuilder<boolean> {
  return sql<boolean>`(position(${needle}::bytea in ${sql.ref(column)}) > 0)`;
}

/**
 * A stored message item's `raw` JSON without what the message said (content retention, src/retention): its ids,
 * addresses, type, timestamp and metadata stay, and `contentScrubbed: true` says the rest was removed.
 */
export function withoutMessageContent(column: string): RawBuilder<string> {
  const keep = ['id', 'from', 'to', 'from_user_id', 'to_user_id', 'type', 'timestamp', 'metadata'];
  const pairs = keep.map((key) => sql`${sql.lit(key)}, ${sql.ref(column)}->${sql.lit(key)}`);
  return sql<string>`jsonb_strip_nulls(jsonb_build_object(${sql.join(pairs)}, 'contentScrubbed', true))`;
}
