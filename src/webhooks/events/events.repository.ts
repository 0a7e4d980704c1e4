import { Injectable } from '@nestjs/common';
import type { Event, Prisma } from '../../generated/prisma/client.js';
import { skipTake } from '../../core/http/pagination.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import type { EventKind } from '../processing/classify.js';

export interface EventFilter {
  kind?: EventKind;
  status?: string;
  messageId?: string;
  recipient?: string;
  since?: Date;
  until?: Date;
}

/** Event reads. Each takes the business account (wabaId) first: the caller has checked it is the tenant's. */
@Injectable()
export class EventsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Newest first; served by the (waba_id[, kind|status|recipient], created_at desc, id desc) indexes. */
  async page(wabaId: string, filter: EventFilter, page: { page: number; limit: number }): Promise<{ rows: Event[]; total: number }> {
    const where: Prisma.EventWhereInput = {
      wabaId,
      kind: filter.kind,
      status: filter.status,
      messageId: filter.messageId,
      recipient: filter.recipient,
      ...(filter.since || filter.until ? { createdAt: { gte: filter.since, lte: filter.until } } : {}),
    };
    const [rows, total] = await Promise.all([
      this.prisma.event.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...skipTake(page) }),
      this.count(wabaId, filter, where),
    ]);
    return { rows, total };
  }

  /**
   * Exact either way. Account, kind and status alone: the totals that triggers on `events` keep in
   * `event_counts` (a sum over a few rows, however many events). The selective filters (messageId, recipient,
   * since/until) fall back to COUNT(*) on their indexes. `event_counts` keeps a NULL status as '', so an empty
   * status filter is counted the slow way too.
   */
  private async count(wabaId: string, filter: EventFilter, where: Prisma.EventWhereInput): Promise<number> {
    const maintained = filter.messageId === undefined && filter.recipient === undefined && !filter.since && !filter.until && filter.status !== '';
    if (!maintained) return this.prisma.event.count({ where });
    const { _sum } = await this.prisma.eventCount.aggregate({ where: { wabaId, kind: filter.kind, status: filter.status }, _sum: { count: true } });
    return Number(_sum.count ?? 0);
  }

  findInAccounts(wabaIds: string[], id: number): Promise<Event | null> {
    if (wabaIds.length === 0) return Promise.resolve(null);
    return this.prisma.event.findFirst({ where: { id, wabaId: { in: wabaIds } } });
  }
}
