import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type pg from 'pg';
import { withTimeout } from '../async/with-timeout.js';
import { AppConfig } from '../config/app-config.js';
import { TemporarilyUnavailable } from '../errors/domain-errors.js';
import type { Database } from './database.js';
import { createPool } from './pg-pool.js';
import { builder, type Prepared } from './statement.js';

declare const txBrand: unique symbol;

/**
 * A transaction in progress, as services see it: something the unit of work hands to repository methods, with
 * nothing to query on. Repositories run statements on it through Db (`db.on(tx)`, `db.exec(…, tx)`).
 */
export interface Tx {
  readonly [txBrand]: true;
}

/** What a Tx is inside: its connection, and Kysely on it (made on first use: the hot paths only run prepared statements). */
class Transaction {
  private kysely?: Kysely<Database>;

  constructor(readonly client: pg.ClientBase) {}

  get db(): Kysely<Database> {
    return (this.kysely ??= kyselyOn(this.client));
  }
}

const current = new AsyncLocalStorage<Transaction>();

/** node-postgres' words when no connection came within connectionTimeoutMillis: every one busy, or none could be opened. */
const NO_CONNECTION = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
]);

/** The answer to a statement that found no connection in time: the database is busy, come back shortly (503). */
export const DATABASE_BUSY = 'Service Unavailable: the database is busy, try again shortly';

/**
 * Issue 37, finding 2: a connection that did not come in time is the database being busy (or out of reach) for a
 * moment, which the caller is told as a 503 with Retry-After (TemporarilyUnavailable), never a 500.
 */
export function busyIfNoConnection(error: unknown): unknown {
  return error instanceof Error && NO_CONNECTION.has(error.message)
    ? new TemporarilyUnavailable(DATABASE_BUSY, 1, [
        { field: 'database', message: 'No database connection was free in time' },
      ])
    : error;
}

async function orBusy<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw busyIfNoConnection(error);
  }
}

/** A prepared statement run inside a unit of work without its Tx: a programming error, refused before it runs. */
export const OUTSIDE_WITHOUT_TX =
  'a prepared statement inside a unit of work needs its Tx (db.exec(statement, params, tx)), or Db.outside to run on its own';

/** The rows of a statement and how many rows it changed (inserted, updated, deleted). */
export interface Result<R> {
  rows: R[];
  rowCount: number;
}

/** Where the reads that tolerate lag go (ReplicaRouter, when DATABASE_READ_URL is set): a Db for `work`, or this one. */
export interface LagTolerantReads {
  read<T>(work: (db: Db) => Promise<T>): Promise<T>;
}

/** Where a statement runs outside a transaction: the pool, or the pool of the partitioned tables' reads. */
export type Reads = 'pool' | 'partitionReads';

/**
 * The data access of the process: the node-postgres pools, Kysely on them typed by the schema (database.ts, generated
 * from prisma/schema.prisma), and the transactions of the unit of work. For repositories only; services use
 * UnitOfWork. Kysely's `on(tx)` runs on the transaction given, else on the unit of work's in progress (a repository
 * call inside `UnitOfWork.run` joins it), else on the pool; prepared statements (`exec`, `run`) run on the transaction
 * given, else on the pool, and inside a unit of work only with its Tx (see `send`).
 */
@Injectable()
export class Db implements OnApplicationShutdown {
  /** The pool. */
  readonly pool: pg.Pool;
  /** Kysely to build a statement with, to run through `run` (it has no connection: `.execute()` is `on(tx)`'s). */
  readonly build = builder;
  private readonly kysely: Kysely<Database>;
  private readsPool?: pg.Pool;
  private readsKysely?: Kysely<Database>;
  private healthPool?: pg.Pool;
  private healthKysely?: Kysely<Database>;
  private closing?: Promise<void>;
  /** DATABASE_PREPARED_STATEMENTS=unnamed: statements are sent without a name (see send). */
  private readonly unnamed: boolean;
  private lagTolerantReads?: LagTolerantReads;

  constructor(private readonly config: AppConfig) {
    this.pool = createPool(config);
    this.unnamed = config.databasePreparedStatements === 'unnamed';
    this.kysely = kyselyOn(this.pool);
  }

  /** Db over pools made elsewhere (benches); `close` ends them. */
  static over(pool: pg.Pool, partitionReads: pg.Pool = pool): Db {
    const db = Object.create(Db.prototype) as Db;
    Object.assign(db, { build: builder, pool, kysely: kyselyOn(pool), readsPool: partitionReads, unnamed: false });
    return db;
  }

  /**
   * A second, smaller pool for the reads of the partitioned `events` table (page, filtered list, count, feed), whose
   * connections plan every named statement once, generically (`plan_cache_mode = force_generic_plan`). Left to
   * itself PostgreSQL keeps planning these statements for their values on every run (a generic plan's estimate counts
   * every partition): ≈ 1 ms of planning for 0.1–0.7 ms of execution. The generic plans read the same buffers (the
   * partitions are pruned at run time; the newest week is read first through an ordered append) at a quarter of the
   * backend CPU (bench/history/2026-11-26-storage-and-conversations-reruns.md). Not for statements written to be
   * planned for their values (`planned`): those stay on `pool`. Opened on first use (the worker never reads these),
   * half the size of `pool`.
   */
  get partitionReads(): pg.Pool {
    // Unnamed statements (behind a transaction pooler) are planned at every run anyway, and a pooler refuses the
    // `options` startup parameter: the reads pool then differs from `pool` by its size only.
    this.readsPool ??= createPool(this.config, {
      max: Math.max(2, Math.ceil(this.config.databasePoolSize / 2)),
      ...(this.unnamed ? {} : { options: '-c plan_cache_mode=force_generic_plan' }),
    });
    return this.readsPool;
  }

  /** The read replica's router (ReplicaRouter hands itself over when DATABASE_READ_URL is set). */
  routeLagTolerantReads(reads: LagTolerantReads): void {
    this.lagTolerantReads = reads;
  }

  /**
   * A read that may be served a little stale (lists, analytics: docs/operations-and-scaling.md, "Read replica"): `work`
   * runs on the read replica's Db when one is set up, answering and within DATABASE_READ_MAX_LAG_MS, else on this
   * one. Inside a unit of work it always runs here: what a transaction reads must see what it wrote.
   */
  lagTolerant<T>(work: (db: Db) => Promise<T>): Promise<T> {
    if (!this.lagTolerantReads || current.getStore()) return work(this);
    return this.lagTolerantReads.read(work);
  }

  /**
   * Kysely for a statement built per call (`.execute()`): on `tx`, else on the unit of work's transaction in progress,
   * else on the pool (`reads`: on `partitionReads` outside a transaction).
   */
  on(tx?: Tx, reads: Reads = 'pool'): Kysely<Database> {
    const t = transactionOf(tx);
    if (t) return t.db;
    if (reads === 'pool') return this.kysely;
    return (this.readsKysely ??= kyselyOn(this.partitionReads));
  }

  /** Runs a prepared statement (statement.ts) with `params`: on `tx`, else on the pool (or `reads`); see `send`. */
  async exec<P extends object, R>(
    statement: Prepared<P, R>,
    params: P,
    tx?: Tx,
    reads: Reads = 'pool',
  ): Promise<Result<R>> {
    return this.send<R>(statement.query(params), tx, reads);
  }

  /**
   * Runs a statement built per call, as a named prepared statement when `name` is given (`sql_<name>`: one name per
   * shape of the statement, e.g. per set of filters) or planned for its values when not.
   */
  async run<R>(query: Compilable<R>, options: { name?: string; tx?: Tx; reads?: Reads } = {}): Promise<Result<R>> {
    const { sql, parameters } = query.compile();
    const text = { text: sql, values: parameters as unknown[] };
    return this.send<R>(options.name ? { name: `sql_${options.name}`, ...text } : text, options.tx, options.reads);
  }

  /**
   * Prepared and per-shape statements run where they are told: on `tx`, else on the pool. They never join a unit of
   * work in progress on their own: the send path's group commits (GroupCommit) run one caller's statement for many
   * callers, and must never run inside whichever caller's transaction happened to start the batch. Inside a unit of
   * work, one without its Tx is refused (OUTSIDE_WITHOUT_TX) rather than run on the pool, outside the transaction the
   * caller believes it is in; work meant to run on its own from there says so with `Db.outside`.
   */
  private async send<R>(query: pg.QueryConfig, tx: Tx | undefined, reads: Reads = 'pool'): Promise<Result<R>> {
    if (!tx && current.getStore()) throw new Error(`${OUTSIDE_WITHOUT_TX} (${query.name ?? 'an unnamed statement'})`);
    const on = tx ? (tx as unknown as Transaction).client : reads === 'pool' ? this.pool : this.partitionReads;
    // DATABASE_PREPARED_STATEMENTS=unnamed (PgBouncer < 1.21 in transaction pooling): a named statement prepared on
    // one server connection would be missing on the next one the pooler hands out; the same text goes unnamed.
    if (query.name && this.unnamed) query = { ...query, name: undefined };
    const { rows, rowCount } = await orBusy(on.query<R & pg.QueryResultRow>(query));
    return { rows, rowCount: rowCount ?? 0 };
  }

  /**
   * BEGIN … COMMIT on one connection of the pool, `work` handed the Tx (and every repository call inside it joining
   * it). A `transaction` inside another joins the outer one. Any error rolls back by dropping the connection (the
   * server aborts its transaction), which is also right when the connection itself is what failed.
   */
  async transaction<T>(work: (tx: Tx) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    const outer = current.getStore();
    if (outer) return work(outer as unknown as Tx);
    const client = await orBusy(this.pool.connect());
    try {
      await client.query(begin);
      const t = new Transaction(client);
      const result = await current.run(t, () => work(t as unknown as Tx));
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (err) {
      client.release(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
  }

  /**
   * A read-only REPEATABLE READ transaction: every statement of `work` reads the same snapshot (taken by its first
   * statement). Inside a transaction it joins that one.
   */
  snapshot<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.transaction(work, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  /**
   * Runs `work` outside the unit of work in progress, if any: its statements take their own connections and its
   * `UnitOfWork.run` its own transaction, as another process's would (tests that interleave two transactions).
   */
  static outside<T>(work: () => T): T {
    return current.exit(work);
  }

  /**
   * Readiness: one round trip to PostgreSQL, bounded in time (like RedisService.ping), on a pool of its own (one
   * connection, opened on first use): a pool busy with tenants' statements is no reason to be taken out of service.
   */
  async ping(timeoutMs = 2000): Promise<void> {
    if (!this.healthKysely) {
      this.healthPool = this.config ? createPool(this.config, { max: 1 }) : this.pool;
      this.healthKysely = kyselyOn(this.healthPool);
    }
    await withTimeout(
      this.healthKysely.selectNoFrom((eb) => eb.lit(1).as('one')).execute(),
      timeoutMs,
      'PostgreSQL ping timed out',
    );
  }

  /** Ends the pools (once; later calls do nothing). */
  close(): Promise<void> {
    // A pool someone else ended (pool.end() directly) is not ended twice: pg throws on a second end().
    const end = (pool: pg.Pool) => ((pool as pg.Pool & { ending?: boolean }).ending ? Promise.resolve() : pool.end());
    const own = (pool?: pg.Pool) => (pool && pool !== this.pool ? end(pool) : undefined);
    this.closing ??= Promise.all([end(this.pool), own(this.readsPool), own(this.healthPool)]).then(() => undefined);
    return this.closing;
  }

  /**
   * The pools end last, once every provider's onModuleDestroy is done (the receiver's last batch, the workers' last
   * jobs are still using them until then).
   */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}

/** The transaction a Tx stands for, or the unit of work's in progress. */
function transactionOf(tx: Tx | undefined): Transaction | undefined {
  return (tx as unknown as Transaction | undefined) ?? current.getStore();
}

/** A Tx on a connection whose transaction the caller began itself (benches that drive one connection by hand). */
export function txOn(client: pg.ClientBase): Tx {
  return new Transaction(client) as unknown as Tx;
}

/** A connection of node-postgres as Kysely's: runs the compiled text as it is, on the pool or on one connection. */
class PgConnection implements DatabaseConnection {
  constructor(private readonly on: pg.Pool | pg.ClientBase) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await orBusy(this.on.query<R & pg.QueryResultRow>(query.sql, query.parameters as unknown[]));
    const changed = ['INSERT', 'UPDATE', 'DELETE', 'MERGE'].includes(result.command);
    return { rows: result.rows, ...(changed ? { numAffectedRows: BigInt(result.rowCount ?? 0) } : {}) };
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported: page the query');
  }
}

/**
 * Kysely's driver over a pool (each statement on a connection of the pool, as pool.query does) or over the one
 * connection of a transaction. Transactions are the unit of work's (Db.transaction), not Kysely's.
 */
class PgDriver implements Driver {
  private readonly connection: PgConnection;

  constructor(on: pg.Pool | pg.ClientBase) {
    this.connection = new PgConnection(on);
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(this.connection);
  }

  beginTransaction(): Promise<void> {
    return notHere();
  }

  commitTransaction(): Promise<void> {
    return notHere();
  }

  rollbackTransaction(): Promise<void> {
    return notHere();
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {}
}

/** Kysely's own transactions are refused: transactions are the unit of work's. */
function notHere(): Promise<void> {
  return Promise.reject(new Error('transactions are the unit of work’s: UnitOfWork.run'));
}

function kyselyOn(on: pg.Pool | pg.ClientBase): Kysely<Database> {
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new PgDriver(on),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}
