import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { Prisma } from '../../generated/prisma/client.js';
import { PrismaService } from './prisma.service.js';

const current = new AsyncLocalStorage<Prisma.TransactionClient>();

/**
 * Prisma's defaults (2 s to get a connection, 5 s for the whole transaction) turned a busy moment into a 500 (a signup,
 * a template sync of hundreds of rows on a loaded host): the work is bounded by the statements' own timeouts, so these
 * only catch a transaction that is truly stuck.
 */
const TRANSACTION_LIMITS = { maxWait: 10_000, timeout: 30_000 };

/**
 * The unit of work of the repositories still on Prisma's client (until they move to Kysely, src/core/db; then
 * src/core/db/unit-of-work.ts is the only one). For services: several repository calls as one transaction (a change and its audit entry commit together),
 * without a transaction handle in sight. Inside `run`, every repository statement uses the same transaction;
 * a nested `run` joins it. Anything thrown rolls the whole unit back.
 */
@Injectable()
export class UnitOfWork {
  constructor(private readonly prisma: PrismaService) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    if (current.getStore()) return work();
    return this.prisma.$transaction((tx) => current.run(tx, work), TRANSACTION_LIMITS);
  }
}

/** For repositories only: the client of the unit of work in progress, or the shared one outside any. */
export function clientOf(prisma: PrismaService): Prisma.TransactionClient {
  return current.getStore() ?? prisma;
}

/** A statement refused by a unique index (Prisma P2002): repositories turn it into a "taken" result. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}
