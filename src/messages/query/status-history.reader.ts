import { Injectable } from '@nestjs/common';
import type { Message } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import type { StatusHistoryItem } from '../message.view.js';

/**
 * A message's status history: its acceptance, then the status events stored for it. The events read belongs
 * to the `events` table's owner (src/webhooks/events/events.repository.ts); it moves there once the webhook
 * rewrite lands, and this class then only assembles the history.
 */
@Injectable()
export class StatusHistoryReader {
  constructor(private readonly prisma: PrismaService) {}

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
