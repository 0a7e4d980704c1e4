import type { Tx } from './db.js';

/**
 * `@GenerateSql` marks a repository method that builds its SQL per call (Kysely on `db.on(tx)`, `db.run(query)`): the
 * SQL snapshot script (scripts/sql-snapshots.ts, `npm run db:sql`) calls it with each sample's arguments on a Db that
 * records every statement instead of running it, and writes them to `queries/<module>.sql` beside the repository, as
 * Immich's @GenerateSql does. It only records (class, method, samples) when the class is defined: the method itself is
 * left as it is. The samples are typed against the method's parameters (a wrong one fails `npm run typecheck`, as
 * "Unable to resolve signature of method decorator"). Give one sample per shape worth reading: a list with optional
 * filters gets one with none and one with every filter.
 */

/**
 * One call of the method: its arguments (`params`), a label when the method has several samples, and the rows every
 * statement of the call is answered with (`rows`, default none: a branch that only runs on rows read first, such as a
 * sync's removals, needs them).
 */
export interface SqlSample<A extends unknown[]> {
  name?: string;
  params: [...A];
  rows?: readonly Record<string, unknown>[];
}

/** A sample as the method takes it: `const` inference reads arrays and objects as readonly, the methods take them as they are. */
type Writable<T> = T extends Date | Uint8Array
  ? T
  : T extends object
    ? { -readonly [K in keyof T]: Writable<T[K]> }
    : T;

/** A repository class's marked methods, in the order they are defined. */
export interface GeneratedSqlMethod {
  method: string;
  samples: SqlSample<unknown[]>[];
}

/** Every class with a marked method (scripts/sql-snapshots.ts reads it after importing the repositories). */
export const generatedSql = new Map<abstract new (...args: never[]) => unknown, GeneratedSqlMethod[]>();

/**
 * Marks a method for the SQL snapshots, with the samples to call it with (none given: one call without arguments).
 * The values only have to be well typed: every value reaches PostgreSQL as a parameter (`$n`), so the SQL depends on
 * which arguments are given and on the length of arrays, not on the values (see Sample).
 */
export function GenerateSql<const S extends SqlSample<unknown[]>[]>(...samples: S) {
  return (
    target: object,
    method: string,
    _descriptor: { value?: (...args: Writable<S[number]['params']>) => Promise<unknown> },
  ): void => {
    if (typeof method !== 'string') throw new Error('@GenerateSql is a legacy decorator: experimentalDecorators');
    const cls = target.constructor as abstract new (...args: never[]) => unknown;
    const methods = generatedSql.get(cls) ?? [];
    methods.push({ method, samples: samples.length ? samples : [{ params: [] }] });
    generatedSql.set(cls, methods);
  };
}

const DATE = new Date('2026-01-01T00:00:00.000Z');

/** Sample values (Immich's DummyValue): fixed, so a snapshot never changes with the day it is written. */
export const Sample = {
  /** A unit of work's transaction (the recording Db ignores it: every statement is recorded alike). */
  TX: {} as Tx,
  UUID: '00000000-0000-4000-a000-000000000000',
  UUID2: '00000000-0000-4000-a000-000000000001',
  STRING: 'sample',
  EMAIL: 'operator@example.com',
  WABA_ID: '100000000000001',
  PHONE: '15550000001',
  NUMBER: 1,
  DATE,
  PAGE: { page: 1, limit: 20 },
  /** A row a batch's read found (`rows`): the id and the times its write is then bounded by. */
  FOUND: [{ id: 1, createdAt: DATE, receivedAt: DATE }],
} as const;
