import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { Prisma } from '../../generated/prisma/client.js';
import { PrismaService } from './prisma.service.js';

const current = new AsyncLocalStorage<Prisma.TransactionClient>();

/**
 * For services: several repository calls as one transaction (a change and its audit entry commit together),
 * without a transaction handle in sight. Inside `run`, every repository statement uses the same transaction;
 * a nested `run` joins it. Anything thrown rolls the whole unit back.
 */
@Injectable()
export class UnitOfWork {
  constructor(private readonly prisma: PrismaService) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    if (current.getStore()) return work();
    return this.prisma.$transaction((tx) => current.run(tx, work));
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
