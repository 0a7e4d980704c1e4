import { createHash } from 'node:crypto';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import type pg from 'pg';
import { PrismaClient } from '../../generated/prisma/client.js';
import { Db } from '../db/db.js';
import { safeInteger } from '../db/pg-pool.js';

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

export { safeInteger } from '../db/pg-pool.js';

/**
 * A row of Prisma's client with its bigint id as a number, as repositories hand rows on: a bigint cannot go into
 * JSON (a response, a log line, a queue job), and the API answers ids as numbers.
 */
export const withNumberId = <R extends { id: bigint }>(row: R): Omit<R, 'id'> & { id: number } => ({
  ...row,
  id: safeInteger(row.id),
});

/**
 * The one Prisma client of a process, on Db's pool through the driver adapter (no native engine), for the
 * repositories not yet moved to Kysely (src/core/db). The pools are Db's.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(readonly db: Db) {
    super({
      // Db ends the pool itself (close): Prisma's adapter would only end it if Prisma's own client had connected,
      // and a process that reached PostgreSQL through the pool alone would keep its idle connections.
      adapter: new PrismaPg(db.pool, { statementNameGenerator: statementName }),
    });
  }

  /** Db's pool (see Db). */
  get pool(): pg.Pool {
    return this.db.pool;
  }

  /** Db's pool of the partitioned tables' reads (see Db.partitionReads). */
  get partitionReads(): pg.Pool {
    return this.db.partitionReads;
  }

  /** Readiness: one round trip to PostgreSQL, bounded in time (like RedisService.ping). */
  ping(timeoutMs = 2000): Promise<void> {
    return this.db.ping(timeoutMs);
  }

  /** Disconnects Prisma's client and ends the pools (once; later calls do nothing). */
  async close(): Promise<void> {
    await this.$disconnect();
    await this.db.close();
  }

  /** Prisma's client only: Db ends the pools once every other provider is done with them (onApplicationShutdown). */
  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}
