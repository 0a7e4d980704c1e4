import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
} from 'kysely';
import type { Database } from './database.js';

/** Kysely that only builds and compiles (no connection): the statements' text and parameters. */
export const builder = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** A parameter of a prepared statement while it is built: compiled to `$n`, bound to `params[key]` at each run. */
class Param {
  constructor(readonly key: string) {}
}

const placeholders = new Proxy({}, { get: (_, key) => (typeof key === 'string' ? new Param(key) : undefined) });

export interface PreparedOptions {
  /**
   * Planned for its values at every run (an unnamed statement: no cached generic plan). For set-based statements
   * whose best plan depends on the size of their arrays and of the table: a generic plan made while a table was new
   * and small (before its first ANALYZE) would read the whole table on every run.
   */
  planned?: boolean;
}

/** Every statement defined with prepared()/preparedByShape(), with the file that defines it (scripts/sql-snapshots.ts). */
export interface DefinedStatement {
  name: string;
  /** The defining module's path, from the stack at definition (module load: once per statement). */
  file: string;
  /** The SQL text (a shaped statement: the shape of no optional parameter given). */
  text(): string;
}
export const definedStatements: DefinedStatement[] = [];

function definingFile(): string {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  const own = frames.find((f) => !f.includes('/core/db/statement.'));
  return own?.match(/(?:file:\/\/)?(\/[^:)]+):\d+:\d+/)?.[1] ?? 'unknown';
}

/**
 * A statement of a hot path, built with Kysely (checked by the compiler against the schema) and compiled once, on
 * its first run; each run sends only its name and values (node-postgres prepares a named statement once per
 * connection; PostgreSQL then skips parsing, and planning once it settles on a generic plan). `build` gets `p`,
 * whose fields stand for the run's values (`p.ids` becomes `$n`, bound to `params.ids`): use each as one value
 * (`= any(p.ids)`, not `in p.ids`), and build the same statement whatever the values (no `if` on them).
 */
export class Prepared<P extends object, R> {
  private compiled?: { text: string; slots: Array<{ key: string } | { value: unknown }> };

  constructor(
    readonly name: string,
    private readonly build: (db: Kysely<Database>, p: P) => Compilable<R>,
    readonly options: PreparedOptions = {},
  ) {}

  /** The statement's text (compiled on first use). */
  get text(): string {
    return this.compile().text;
  }

  /** The text and the values of a run, as node-postgres takes them. */
  query(params: P): { name?: string; text: string; values: unknown[] } {
    const { text, slots } = this.compile();
    const values = slots.map((s) => ('key' in s ? (params as Record<string, unknown>)[s.key] : s.value));
    return this.options.planned ? { text, values } : { name: `sql_${this.name}`, text, values };
  }

  private compile() {
    if (!this.compiled) {
      const { sql, parameters } = this.build(builder, placeholders as P).compile();
      this.compiled = { text: sql, slots: parameters.map((v) => (v instanceof Param ? { key: v.key } : { value: v })) };
    }
    return this.compiled;
  }
}

/** A hot-path statement: see Prepared. `name` is unique in the application (`sql_<name>` on the connection). */
export function prepared<P extends object, R>(
  name: string,
  build: (db: Kysely<Database>, p: P) => Compilable<R>,
  options?: PreparedOptions,
): Prepared<P, R> {
  const statement = new Prepared(name, build, options);
  definedStatements.push({ name, file: definingFile(), text: () => statement.text });
  return statement;
}

/**
 * A statement whose shape depends on which of its parameters are given (a list's optional filters): one prepared
 * statement per shape (`<name>_<shape>`), each built and compiled on its first run. `build` gets `p` (placeholders, as
 * in Prepared) for the values and `given` (the first run's parameters of that shape) to decide what the statement
 * holds; `shape(given)` must name everything `build` decides from `given`.
 */
export function preparedByShape<P extends object, R>(
  name: string,
  shape: (given: P) => string,
  build: (db: Kysely<Database>, p: Required<P>, given: P) => Compilable<R>,
  options?: PreparedOptions,
): (given: P) => Prepared<P, R> {
  const byShape = new Map<string, Prepared<P, R>>();
  const base = {} as P;
  definedStatements.push({
    name: `${name}_<shape> (the shape with no optional parameter given)`,
    file: definingFile(),
    text: () => new Prepared<P, R>(name, (db, p) => build(db, p as Required<P>, base), options).text,
  });
  return (given) => {
    const s = shape(given);
    let statement = byShape.get(s);
    if (!statement)
      byShape.set(
        s,
        (statement = new Prepared<P, R>(`${name}_${s}`, (db, p) => build(db, p as Required<P>, given), options)),
      );
    return statement;
  };
}

/** The row type of a prepared statement's results. */
export type RowOf<S> =
  S extends Prepared<infer _P, infer R> ? R : S extends (given: never) => Prepared<infer _Q, infer T> ? T : never;
