import { PrismaPg } from '@prisma/adapter-pg';
import type { Db } from '../../src/core/db/db.js';
import { safeInteger } from '../../src/core/db/pg-pool.js';
import { PrismaClient } from '../../src/generated/prisma/client.js';

/**
 * Prisma's client for the tests' assertions only: the e2e and repository tests read rows back with it to inspect what
 * the code under test wrote (the application itself runs on Kysely, src/core/db, and never loads this client). It
 * runs on `db`'s pool through the driver adapter; `db.close()` ends the pool, so there is nothing of its own to close.
 */
export type TestPrisma = PrismaClient;

export function testPrisma(db: Db): TestPrisma {
  return new PrismaClient({ adapter: new PrismaPg(db.pool) });
}

/**
 * A row of Prisma's client with its bigint id as a number, as the API and the repositories hand ids on (Prisma reads
 * BigInt columns as bigint; the pool reads int8 as a number).
 */
export const withNumberId = <R extends { id: bigint }>(row: R): Omit<R, 'id'> & { id: number } => ({
  ...row,
  id: safeInteger(row.id),
});
