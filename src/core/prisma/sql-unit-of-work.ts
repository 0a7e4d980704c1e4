import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service.js';
import { inSnapshot, inTx, type Tx } from './sql.js';

/**
 * One transaction on node-postgres for a unit of work of the hot paths that spans several SQL repositories
 * (a chunk of webhook events and the messages, windows and templates they change). The work receives an
 * opaque Tx to pass to those repositories' methods; a thrown error rolls everything back. (UnitOfWork is the
 * same for Prisma-based repositories; one transaction never spans both engines.)
 */
@Injectable()
export class SqlUnitOfWork {
  constructor(private readonly prisma: PrismaService) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return inTx(this.prisma.pool, work);
  }

  /** Reads of several repositories in one snapshot (read-only REPEATABLE READ): they see the same commits. */
  snapshot<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return inSnapshot(this.prisma.pool, work);
  }
}
