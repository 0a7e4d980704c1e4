import type { AliasableExpression, AliasedExpression, AliasedRawBuilder, InsertObject } from 'kysely';
import type { Database } from './database.js';
import { jsonRecords, typed, unnest, type PgType, type PgTypes } from './pg.js';

/**
 * One write shape of a table, declared once: the columns a multi-row insert fills, in order, each with where its
 * value comes from. `column: [key, type]`: the source rows' column `key` (a jsonRecords record field, an unnest
 * array, a typed parameter) of PostgreSQL type `type`; `column: 'key'`: a value each statement gives (`now()`, a
 * constant), selected as `key`. From it: the insert's column list (`columns`, checked against the table), the
 * source's types (`records`, `unnest`), the select list in the same order (`select`, `values`), a VALUES row (`row`)
 * and the JSON rows (`json`). Adding a column to such an insert is one line here; the compiler then asks the rows
 * and the statements for its value. Every statement's text stays its own: an unchanged SQL snapshot proves it.
 */
export type ColumnSpec<T extends keyof Database> = { readonly [C in keyof Database[T] & string]?: Entry };
type Entry = readonly [key: string, type: PgType] | string;

/** The source columns' keys (the columns with a type). */
export type SourceKey<S> = {
  [C in keyof S]: S[C] extends readonly [infer K extends string, PgType] ? K : never;
}[keyof S];
/** The keys of the values each statement gives. */
export type GivenKey<S> = { [C in keyof S]: S[C] extends string ? S[C] : never }[keyof S];
/** The values a VALUES row gives, by key (parameters). */
type GivenValues<S> = { [K in GivenKey<S>]: unknown };
type Types<S> = {
  [C in keyof S as S[C] extends readonly [infer K extends string, PgType] ? K : never]: S[C] extends readonly [
    string,
    infer P extends PgType,
  ]
    ? P
    : never;
};
type TypeOf<S, K> = { [C in keyof S]: S[C] extends readonly [K, infer P extends PgType] ? P : never }[keyof S];

/** The source rows as jsonRecords reads them (one object per row, JSON), keyed by source key. */
export type SourceRow<S> = { [K in SourceKey<S>]: unknown };
/** The source rows as unnest reads them: one array per source key. */
export type SourceArrays<S> = { [K in SourceKey<S>]: Array<PgTypes[TypeOf<S, K>] | null> };
/** A source row as the statement reads it (jsonRecords' and unnest's row type). */
type SourceValues<S> = { [K in SourceKey<S>]: PgTypes[TypeOf<S, K>] | null };
/** The values a statement gives: an expression (selected `as key`) or another source's column (`'b.id'`, as is). */
type Given<S> = { [K in GivenKey<S>]: AliasableExpression<unknown> | `${string}.${string}` };
/** Extra source columns a statement reads but does not insert (a join's key), before the inserted ones. */
type Extra = Record<string, PgType>;

export interface ColumnMap<T extends keyof Database, S extends ColumnSpec<T>> {
  readonly table: T;
  readonly spec: S;
  /** The insert's columns, in order: `.columns(map.columns)`. */
  readonly columns: ReadonlyArray<keyof S & keyof Database[T] & string>;
  /** The source columns' PostgreSQL types, by key, in order (jsonRecords' and unnest's `columns`). */
  readonly types: Types<S>;
  /** `jsonb_to_recordset($json::jsonb) AS alias(key type, …)`: the source as JSON rows (see SourceRow). */
  records<A extends string, E extends Extra = Record<never, PgType>>(
    alias: A,
    json: unknown,
    extra?: E,
  ): ReturnType<typeof jsonRecords<A, E & Types<S>>>;
  /** `unnest($k::type[], …) [WITH ORDINALITY] AS alias(key, …[, ord])`: the source as one array per key. */
  unnest<A extends string>(alias: A, arrays: SourceRow<S>): AliasedRawBuilder<SourceValues<S>, A>;
  unnest<A extends string, O extends string>(
    alias: A,
    arrays: SourceRow<S>,
    ordinality: O,
  ): AliasedRawBuilder<SourceValues<S> & { [K in O]: number }, A>;
  /** The insert's select list from the source `alias`, in `columns`' order: `alias.key`, or the given value `as key`. */
  select<A extends string, const G extends Given<S>>(
    alias: A,
    given: G,
  ): Array<`${A}.${SourceKey<S>}` | Extract<G[keyof G], string> | AliasedExpression<unknown, GivenKey<S>>>;
  /** The select list of one row of parameters: `$n::type as key`, or the given value `as key`, in `columns`' order. */
  values(params: SourceRow<S>, given: Given<S>): Array<AliasedExpression<unknown, SourceKey<S> | GivenKey<S>>>;
  /** The source columns' keys, in order. */
  readonly keys: ReadonlyArray<SourceKey<S>>;
  /** One row of a multi-row VALUES insert, `{ column: value }`: each source key's value (a parameter), or the given one. */
  row(value: (key: SourceKey<S>) => unknown, given: GivenValues<S>): InsertObject<Database, T>;
  /** The rows as the JSON `records` reads (each needs every source key: the compiler says which one is missing). */
  json(rows: ReadonlyArray<SourceRow<S>>): string;
}

/** A table's write shape (see ColumnSpec): `columnMap('events', { delivery_id: ['deliveryId', 'bigint'], … })`. */
export function columnMap<T extends keyof Database, const S extends ColumnSpec<T>>(
  table: T,
  spec: S & { readonly [C in Exclude<keyof S, keyof Database[T]>]: never },
): ColumnMap<T, S> {
  const entries = Object.entries<Entry>(spec);
  const types = Object.fromEntries(entries.flatMap(([, e]) => (typeof e === 'string' ? [] : [[e[0], e[1]]])));
  const list = <I>(source: (key: string, type: PgType) => I, given: Record<string, Given<S>[GivenKey<S>]>) =>
    entries.map(([, e]) => {
      if (typeof e !== 'string') return source(e[0], e[1]);
      const value = given[e]!;
      return typeof value === 'string' ? value : value.as(e);
    }) as never;
  return {
    table,
    spec,
    columns: entries.map(([c]) => c) as never,
    types: types as Types<S>,
    records: (alias, json, extra) => jsonRecords(alias, { ...extra, ...types } as never, json),
    unnest: ((alias: string, arrays: Record<string, unknown>, ordinality?: string) =>
      ordinality === undefined ? unnest(alias, types, arrays) : unnest(alias, types, arrays, ordinality)) as never,
    select: (alias, given) => list((key) => `${alias}.${key}`, given),
    values: (params, given) =>
      list((key, type) => typed((params as Record<string, unknown>)[key], type).as(key), given),
    keys: Object.keys(types) as never,
    row: (value, given) =>
      Object.fromEntries(
        entries.map(([c, e]) => [
          c,
          typeof e === 'string' ? (given as Record<string, unknown>)[e] : value(e[0] as never),
        ]),
      ) as InsertObject<Database, T>,
    json: (rows) => JSON.stringify(rows),
  };
}
