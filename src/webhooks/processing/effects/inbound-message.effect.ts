import { Injectable } from '@nestjs/common';
import type { Tx } from '../../../core/prisma/sql.js';
import { ConversationWindowsRepository } from '../../../messages/conversation-windows.repository.js';
import { readyAll, type EffectItem, type EventEffect, type PreparedEffect } from './event-effect.js';

/** A customer's message opens (or renews) the 24 h customer service window of (business number, customer). */
@Injectable()
export class InboundMessageEffect implements EventEffect {
  constructor(private readonly windows: ConversationWindowsRepository) {}

  appliesTo(item: EffectItem): boolean {
    return item.kind === 'inbound_message' && item.phoneNumberId !== null && item.recipient !== null;
  }

  prepare<T extends EffectItem>(tx: Tx, _items: T[]): Promise<PreparedEffect<T>> {
    return Promise.resolve(
      readyAll((owned) =>
        this.windows.openOrRenew(
          tx,
          owned.map((e) => ({ phoneNumberId: e.phoneNumberId!, recipient: e.recipient!, wabaId: e.wabaId, at: e.upstreamTimestamp ?? e.createdAt ?? new Date() })),
        ),
      ),
    );
  }
}
