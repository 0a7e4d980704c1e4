// A Db that runs nothing: every statement a repository method sends (Kysely on `on(tx)`, `exec`, `run`) is compiled
// and recorded, in order, and answered with the rows given to `answer` (none by default; as many rows changed). `transaction`/`snapshot` hand the work a Tx
// that stands for nothing. scripts/sql-snapshots.ts calls each @GenerateSql sample on it.
import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { Database } from '../../src/core/db/database.js';
import type { Db, Result, Tx } from '../../src/core/db/db.js';
import { builder, type Prepared } from '../../src/core/db/statement.js';

/** One statement as PostgreSQL would receive it: its text, and the name of a named prepared statement. */
export interface Recorded {
  text: string;
  name?: string;
}

class RecordingConnection implements DatabaseConnection {
  constructor(private readonly record: (text: string) => unknown[]) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const rows = this.record(query.sql) as R[];
    return Promise.resolve({ rows, numAffectedRows: BigInt(rows.length) });
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported');
  }
}

class RecordingDriver implements Driver {
  constructor(private readonly connection: RecordingConnection) {}
  async init(): Promise<void> {}
  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(this.connection);
  }
  async beginTransaction(): Promise<void> {}
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/** The parts of Db a repository uses, recording instead of running; `asDb` hands it to a repository's constructor. */
export class RecordingDb {
  readonly build = builder;
  private recorded: Recorded[] = [];
  private rows: readonly unknown[] = [];
  private readonly kysely: Kysely<Database>;

  constructor() {
    const connection = new RecordingConnection((text) => {
      this.recorded.push({ text });
      return this.rows.map((r) => ({ ...(r as object) }));
    });
    this.kysely = new Kysely<Database>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new RecordingDriver(connection),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
  }

  /** Reads that tolerate lag are recorded like any other (there is no replica here). */
  lagTolerant<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return work(this.asDb);
  }

  get asDb(): Db {
    return this as unknown as Db;
  }

  /** The rows every statement is answered with from now on (copies: a method may change what it reads). */
  answer(rows: readonly Record<string, unknown>[]): void {
    this.rows = rows;
  }

  /** The statements recorded since the last call. */
  take(): Recorded[] {
    const taken = this.recorded;
    this.recorded = [];
    return taken;
  }

  on(): Kysely<Database> {
    return this.kysely;
  }

  exec<P extends object, R>(statement: Prepared<P, R>, params: P): Promise<Result<R>> {
    const { name, text } = statement.query(params);
    return this.respond<R>(text, name);
  }

  run<R>(query: Compilable<R>, options: { name?: string } = {}): Promise<Result<R>> {
    return this.respond<R>(query.compile().sql, options.name && `sql_${options.name}`);
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return work({} as Tx);
  }

  snapshot<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return work({} as Tx);
  }

  private respond<R>(text: string, name?: string): Promise<Result<R>> {
    this.recorded.push(name ? { text, name } : { text });
    const rows = this.rows.map((r) => ({ ...(r as object) }) as R);
    return Promise.resolve({ rows, rowCount: rows.length });
  }
}
