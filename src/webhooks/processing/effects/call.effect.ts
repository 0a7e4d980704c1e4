import { Inject, Injectable } from '@nestjs/common';
import type { Tx } from '../../../core/db/db.js';
import { isRecord } from '../../../events/classify.js';
import { ConversationWindowsRepository } from '../../../messages/conversation-windows.repository.js';
import type { InboundWindows } from '../processing.ports.js';
import { readyAll, type EffectItem, type EventEffect, type PreparedEffect } from './event-effect.js';
import { windowsOf } from './inbound-message.effect.js';

/**
 * Call events (`calls` field) are stored as events of kind call. A user-initiated call opens or renews the 24 h
 * customer service window like an inbound message (Meta's send page, 2026-05-21): for the caller's number and user
 * id, at the call event's time. Business-initiated calls and call statuses change nothing.
 */
@Injectable()
export class CallEffect implements EventEffect {
  constructor(@Inject(ConversationWindowsRepository) private readonly windows: InboundWindows) {}

  appliesTo(item: EffectItem): boolean {
    return item.kind === 'call';
  }

  prepare<T extends EffectItem>(tx: Tx, _items: T[]): Promise<PreparedEffect<T>> {
    return Promise.resolve(
      readyAll(async (owned) => {
        await this.windows.openOrRenew(tx, owned.filter(opensWindow).flatMap(windowsOf));
      }),
    );
  }
}

/** A call event of a user-initiated call on a known number (connect or terminate: the later one renews). */
export function opensWindow(item: Pick<EffectItem, 'kind' | 'phoneNumberId' | 'raw'>): boolean {
  return (
    item.kind === 'call' &&
    item.phoneNumberId !== null &&
    isRecord(item.raw) &&
    item.raw.direction === 'USER_INITIATED' &&
    typeof item.raw.event === 'string'
  );
}
