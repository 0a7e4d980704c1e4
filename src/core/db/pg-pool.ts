import pg from 'pg';
import type { AppConfig } from '../config/app-config.js';

/** PostgreSQL's `int8` (bigint): the ids of the tables that grow without bound, and `count(*)`. */
const INT8_OID = 20;

/**
 * An `int8` (as PostgreSQL's text, or a bigint) as a JavaScript number. Ids stay JSON numbers in the API (exact up
 * to 2^53 - 1); a value beyond that throws rather than being silently rounded to another id.
 */
export function safeInteger(value: string | bigint): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n))
    throw new RangeError(
      `int8 value ${value} is beyond Number.MAX_SAFE_INTEGER (2^53 - 1): cannot be read as a number`,
    );
  return n;
}

/**
 * The pool reads `int8` as a number (node-postgres' default is a string): the generated types say `number` for every
 * BigInt of the schema.
 */
const poolTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? safeInteger
      : (pg.types.getTypeParser(oid, format) as (value: string) => unknown)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * A pool of the process. The pool and every connection get an 'error' listener for its whole life: pg-pool only
 * listens while a connection is idle, and a connection handed to a waiting caller in the same tick as PostgreSQL's
 * "terminating connection" (a restart, a failover) would otherwise emit an unhandled 'error' and crash the process
 * (node-postgres #2762). The query using it fails on its own and the pool drops the connection.
 */
export function createPool(config: AppConfig, extra: Pick<pg.PoolConfig, 'max' | 'options'> = {}): pg.Pool {
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
