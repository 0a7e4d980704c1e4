import { Injectable } from '@nestjs/common';
import type { Tx } from '../../../core/prisma/sql.js';
import { ConversationWindowsRepository } from '../../../messages/conversation-windows.repository.js';
import { inboundMessageOf } from '../../../messages/inbound-message.js';
import { MessagesRepository } from '../../../messages/messages.repository.js';
import { readyAll, type EffectItem, type EventEffect, type PreparedEffect } from './event-effect.js';

/**
 * A customer's message is stored as an inbound message of its business account (once per wamid), and opens (or
 * renews) the 24 h customer service window of (business number, customer phone). A sender known only by its
 * business-scoped user id opens no window (sends address phone numbers).
 */
@Injectable()
export class InboundMessageEffect implements EventEffect {
  constructor(
    private readonly windows: ConversationWindowsRepository,
    private readonly messages: MessagesRepository,
  ) {}

  appliesTo(item: EffectItem): boolean {
    return item.kind === 'inbound_message' && item.phoneNumberId !== null;
  }

  prepare<T extends EffectItem>(tx: Tx, _items: T[]): Promise<PreparedEffect<T>> {
    return Promise.resolve(
      readyAll(async (owned) => {
        await this.messages.insertInbound(tx, owned.flatMap((e) => inboundMessageOf(e) ?? []));
        await this.windows.openOrRenew(
          tx,
          owned
            .filter((e) => e.recipient !== null)
            .map((e) => ({ phoneNumberId: e.phoneNumberId!, recipient: e.recipient!, wabaId: e.wabaId, at: e.upstreamTimestamp ?? e.createdAt ?? new Date() })),
        );
      }),
    );
  }
}
