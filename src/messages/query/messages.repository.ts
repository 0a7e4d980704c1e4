import { Injectable } from '@nestjs/common';
import type { Message, Prisma } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { skipTake } from '../../core/http/pagination.js';
import type { ListMessagesQuery } from '../dto/list-messages.query.js';
import type { StatusHistoryItem } from '../message.view.js';

/** Message reads. The business account is always the first argument: the key's scope. */
@Injectable()
export class MessagesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async list(businessAccountId: string, query: ListMessagesQuery): Promise<{ rows: Message[]; total: number }> {
    const where: Prisma.MessageWhereInput = {
      businessAccountId,
      status: query.status,
      to: query.to,
      phoneNumberId: query.phoneNumberId,
      templateName: query.templateName,
      type: query.type,
      createdAt: query.since || query.until ? { gte: query.since ? new Date(query.since) : undefined, lt: query.until ? new Date(query.until) : undefined } : undefined,
    };
    const [rows, total] = await Promise.all([
      this.prisma.message.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...skipTake(query) }),
      this.prisma.message.count({ where }),
    ]);
    return { rows, total };
  }

  findOne(businessAccountId: string, id: number): Promise<Message | null> {
    return this.prisma.message.findFirst({ where: { id, businessAccountId } });
  }

  /** The acceptance by the upstream platform, then every status webhook for the message, oldest first. */
  async statusHistory(wabaId: string, message: Message): Promise<StatusHistoryItem[]> {
    const history: StatusHistoryItem[] = [];
    if (message.acceptedAt) {
      history.push({ status: 'accepted', timestamp: message.acceptedAt.toISOString(), receivedAt: message.acceptedAt.toISOString(), source: 'send' });
    }
    if (!message.upstreamMessageId) return history;
    const events = await this.prisma.event.findMany({
      where: { wabaId, messageId: message.upstreamMessageId, kind: 'status_update' },
      orderBy: [{ upstreamTimestamp: 'asc' }, { id: 'asc' }],
      select: { status: true, upstreamTimestamp: true, createdAt: true },
    });
    for (const e of events) {
      history.push({ status: e.status ?? 'unknown', timestamp: e.upstreamTimestamp?.toISOString() ?? null, receivedAt: e.createdAt.toISOString(), source: 'webhook' });
    }
    return history;
  }
}
