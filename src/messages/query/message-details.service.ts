import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../../core/http/api-error.js';
import { isRowId } from '../../core/http/row-id.js';
import { EventsRepository } from '../../webhooks/events/events.repository.js';
import { toMessageDetailView, type MessageDetailView, type StatusHistoryItem } from '../message.view.js';
import { MessagesRepository } from '../messages.repository.js';

export const MESSAGE_NOT_FOUND = 'Message not found';

/** One message with its status history: its acceptance, then every status webhook stored for it, oldest first. */
@Injectable()
export class MessageDetails {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly events: EventsRepository,
  ) {}

  /** The account's message `id` (404 otherwise), consistent with its history. */
  async get(account: { businessAccountId: string; wabaId: string }, id: number): Promise<MessageDetailView> {
    const first = isRowId(id) ? await this.messages.findOne(account.businessAccountId, id) : null;
    if (!first) throw new NotFoundError(MESSAGE_NOT_FOUND);
    if (!first.upstreamMessageId) return toMessageDetailView(first, acceptance(first.acceptedAt));
    // No status of a message is stored before the message itself: the partitions older than it are skipped.
    const statuses = await this.events.statusHistory(account.wabaId, first.upstreamMessageId, first.createdAt);
    // A status is stored in the transaction that applies it: read after its history, the message reflects
    // every status listed (read only before, a status committed in between would be listed but not applied).
    const message = statuses.length > 0 ? ((await this.messages.findOne(account.businessAccountId, id)) ?? first) : first;
    const history = [
      ...acceptance(message.acceptedAt),
      ...statuses.map((e) => ({ status: e.status ?? 'unknown', timestamp: e.upstreamTimestamp?.toISOString() ?? null, receivedAt: e.createdAt.toISOString(), source: 'webhook' as const })),
    ];
    return toMessageDetailView(message, history);
  }
}

function acceptance(at: Date | null): StatusHistoryItem[] {
  return at ? [{ status: 'accepted', timestamp: at.toISOString(), receivedAt: at.toISOString(), source: 'send' }] : [];
}
