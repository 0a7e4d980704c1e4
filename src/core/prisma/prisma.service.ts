import { createHash } from 'node:crypto';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../../generated/prisma/client.js';
import { AppConfig } from '../config/app-config.js';
import { withTimeout } from '../async/with-timeout.js';

/** Queries with more parameters than this (multi-row inserts of varying size) stay unnamed: not worth caching. */
const MAX_NAMED_PARAMS = 64;

/**
 * Named prepared statements: node-postgres prepares each named statement once per connection and PostgreSQL
 * then skips parsing (and, once it settles on a generic plan, planning) on every later execution; unnamed
 * ones are parsed and planned every time, which was most of PostgreSQL's CPU per query. The name is a hash
 * of the SQL text, so the set of names is bounded by the application's query shapes.
 */
function statementName(query: { sql: string; args: unknown[] }): string {
  if (query.args.length > MAX_NAMED_PARAMS) return undefined as unknown as string; // unnamed
  return `bm_${createHash('sha1').update(query.sql).digest('base64url')}`;
}

/** PostgreSQL's `int8` (bigint): the ids of the tables that grow without bound, and `count(*)`. */
const INT8_OID = 20;

/**
 * An `int8` (as PostgreSQL's text, or a bigint from Prisma's client) as a JavaScript number. Ids stay JSON numbers
 * in the API (exact up to 2^53 - 1); a value beyond that throws rather than being silently rounded to another id.
 */
export function safeInteger(value: string | bigint): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${value} is beyond Number.MAX_SAFE_INTEGER (2^53 - 1): cannot be read as a number`);
  return n;
}

/**
 * A row of Prisma's client with its bigint id as a number, as repositories hand rows on: a bigint cannot go into
 * JSON (a response, a log line, a queue job), and the API answers ids as numbers.
 */
export const withNumberId = <R extends { id: bigint }>(row: R): Omit<R, 'id'> & { id: number } => ({ ...row, id: safeInteger(row.id) });

/**
 * Our SQL on the pool reads `int8` as a number (node-postgres' default is a string). Prisma's adapter is not
 * affected: it passes its own type parsers with every query (PgQueryable.performIO in @prisma/adapter-pg), so
 * Prisma's client keeps returning BigInt fields as bigint.
 */
const poolTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? safeInteger : (pg.types.getTypeParser(oid, format) as (value: string) => unknown)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * The pool behind Prisma. The pool and every connection get an 'error' listener for its whole life: pg-pool only listens
 * while a connection is idle, and a connection handed to a waiting caller in the same tick as PostgreSQL's
 * "terminating connection" (a restart, a failover) would otherwise emit an unhandled 'error' and crash the
 * process (node-postgres #2762). The query using it fails on its own and the pool drops the connection.
 */
function createPool(config: AppConfig, extra: Pick<pg.PoolConfig, 'max' | 'options'> = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max: config.databasePoolSize,
    ...extra,
    // Fail fast when PostgreSQL is down, so that callers (readiness, the webhook receiver) can answer 503.
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30000,
    types: poolTypes,
  });
  pool.on('connect', (client) => client.on('error', () => undefined));
  // An idle connection that dies (a restart, pg_terminate_backend) is reported on the pool; without a listener
  // that would crash the process. The pool has already dropped it; the next query opens a new one.
  pool.on('error', () => undefined);
  return pool;
}

/** The one Prisma client of a process, on node-postgres through the driver adapter (no native engine). */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  /**
   * The same pool, for the few hot paths written in SQL (see sql.ts): a query through Prisma's client costs
   * ≈ 0.6 ms of CPU here, the same query on node-postgres ≈ 0.15 ms.
   */
  readonly pool: pg.Pool;

  private readsPool?: pg.Pool;

  constructor(private readonly config: AppConfig) {
    const pool = createPool(config);
    super({
      // The service ends the pool itself (close): Prisma's adapter would only end it if Prisma's own client had
      // connected, and a process that reached PostgreSQL through the pool alone would keep its idle connections.
      adapter: new PrismaPg(pool, { statementNameGenerator: statementName }),
    });
    this.pool = pool;
  }

  /**
   * A second, smaller pool for the reads of the partitioned `events` table (page, filtered list, count, feed), whose
   * connections plan every named statement once, generically (`plan_cache_mode = force_generic_plan`). Left to
   * itself PostgreSQL keeps planning these statements for their values on every run (a generic plan's estimate counts
   * every partition): ≈ 1 ms of planning for 0.1–0.7 ms of execution. The generic plans read the same buffers (the
   * partitions are pruned at run time; the newest week is read first through an ordered append) at a quarter of the
   * backend CPU (bench/history/2026-11-26-storage-and-conversations-reruns.md). Not for statements written to be
   * planned for their values (`planned` in sql.ts): those stay on `pool`. Opened on first use (the worker never
   * reads these), half the size of `pool`.
   */
  get partitionReads(): pg.Pool {
    this.readsPool ??= createPool(this.config, {
      max: Math.max(2, Math.ceil(this.config.databasePoolSize / 2)),
      options: '-c plan_cache_mode=force_generic_plan',
    });
    return this.readsPool;
  }

  /** Readiness: one round trip to PostgreSQL, bounded in time (like RedisService.ping). */
  async ping(timeoutMs = 2000): Promise<void> {
    await withTimeout(this.pool.query('SELECT 1'), timeoutMs, 'PostgreSQL ping timed out');
  }

  /** Disconnects Prisma's client and ends the pool (once; later calls do nothing). */
  async close(): Promise<void> {
    await this.$disconnect();
    if (!this.pool.ended) await this.pool.end();
    if (this.readsPool && !this.readsPool.ended) await this.readsPool.end();
  }

  async onModuleDestroy(): Promise<void> {
    await this.close();
  }
}
