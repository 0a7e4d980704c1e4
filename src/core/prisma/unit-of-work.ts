import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service.js';
import { inTx, type Tx } from './sql.js';

/**
 * One transaction for a unit of work that spans several repositories (e.g. a chunk of webhook events and
 * the messages they move). The work receives an opaque Tx to pass to repository methods; a thrown error
 * rolls everything back.
 */
@Injectable()
export class UnitOfWork {
  constructor(private readonly prisma: PrismaService) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return inTx(this.prisma.pool, work);
  }
}
