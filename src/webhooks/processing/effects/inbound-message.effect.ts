import { Inject, Injectable } from '@nestjs/common';
import type { Tx } from '../../../core/db/db.js';
import {
  ConversationWindowsRepository,
  type InboundContact,
} from '../../../messages/conversation-windows.repository.js';
import { inboundMessageOf } from '../../../messages/inbound-message.js';
import { MessagesRepository } from '../../../messages/messages.repository.js';
import type { InboundMessages, InboundWindows } from '../processing.ports.js';
import { readyAll, type EffectItem, type EventEffect, type PreparedEffect } from './event-effect.js';

/**
 * A customer's message is stored as an inbound message of its business account (once per wamid), and opens (or
 * renews) the 24 h customer service window of (business number, customer) for each way the customer can be
 * addressed: the phone number (`from`) and the business-scoped user id (`user_id`), so a reply may go to either
 * (`to` or `userId`). A user with a username may come with the user id only.
 */
@Injectable()
export class InboundMessageEffect implements EventEffect {
  constructor(
    @Inject(ConversationWindowsRepository) private readonly windows: InboundWindows,
    @Inject(MessagesRepository) private readonly messages: InboundMessages,
  ) {}

  appliesTo(item: EffectItem): boolean {
    return item.kind === 'inbound_message' && item.phoneNumberId !== null;
  }

  prepare<T extends EffectItem>(tx: Tx, _items: T[]): Promise<PreparedEffect<T>> {
    return Promise.resolve(
      readyAll(async (owned) => {
        await this.messages.insertInbound(
          tx,
          owned.flatMap((e) => inboundMessageOf(e) ?? []),
        );
        await this.windows.openOrRenew(tx, owned.flatMap(windowsOf));
      }),
    );
  }
}

/** The windows an inbound message opens: one per address of its sender. */
export function windowsOf(
  e: Pick<EffectItem, 'phoneNumberId' | 'recipient' | 'userId' | 'wabaId' | 'upstreamTimestamp' | 'createdAt'>,
): InboundContact[] {
  const at = e.upstreamTimestamp ?? e.createdAt ?? new Date();
  return [e.recipient, e.userId]
    .filter((r): r is string => r !== null)
    .map((recipient) => ({ phoneNumberId: e.phoneNumberId!, recipient, wabaId: e.wabaId, at }));
}
