import { inWindow, type ReadWindow } from '../../auth/read-window.js';
import { Injectable } from '@nestjs/common';
import { NotFound } from '../../core/errors/domain-errors.js';
import { isRowId } from '../../core/rows/row-id.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { EventsRepository } from '../../events/events.repository.js';
import { InboundMediaLinks } from '../inbound-media/inbound-media-links.js';
import { toMessageDetailView, type MessageDetailView, type StatusHistoryItem } from '../message.view.js';
import { MessagesRepository } from '../messages.repository.js';

export const MESSAGE_NOT_FOUND = 'Message not found';

/** One message with its status history: its acceptance, then every status webhook stored for it, oldest first. */
@Injectable()
export class MessageDetails {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly events: EventsRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly links: InboundMediaLinks,
  ) {}

  /**
   * The account's message `id` (404 otherwise) and its history, read in one snapshot: a status is stored in the
   * transaction that applies it, so the message's status and the history listed always agree.
   */
  async get(
    account: { businessAccountId: string; wabaId: string; window?: ReadWindow },
    id: number,
  ): Promise<MessageDetailView> {
    if (!isRowId(id)) throw new NotFound(MESSAGE_NOT_FOUND);
    const found = await this.unitOfWork.snapshot(async (tx) => {
      const message = await this.messages.findOne(account.businessAccountId, id, tx);
      // No status of a message is stored before the message itself: the partitions older than it are skipped.
      const statuses =
        message?.upstreamMessageId && message.direction === 'outbound'
          ? await this.events.statusHistory(account.wabaId, message.upstreamMessageId, message.createdAt, tx)
          : [];
      return message && { message, statuses };
    });
    if (!found || !inWindow(found.message.createdAt, account.window)) throw new NotFound(MESSAGE_NOT_FOUND);
    const { message, statuses } = found;
    const history = [
      ...acceptance(message.acceptedAt),
      ...statuses
        .filter((e) => inWindow(e.createdAt, account.window))
        .map((e) => ({
          status: e.status ?? 'unknown',
          timestamp: e.upstreamTimestamp?.toISOString() ?? null,
          receivedAt: e.createdAt.toISOString(),
          source: 'webhook' as const,
        })),
    ];
    return toMessageDetailView(message, history, this.links.forMessage(message));
  }
}

function acceptance(at: Date | null): StatusHistoryItem[] {
  return at ? [{ status: 'accepted', timestamp: at.toISOString(), receivedAt: at.toISOString(), source: 'send' }] : [];
}
