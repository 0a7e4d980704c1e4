import { Inject, Injectable } from '@nestjs/common';
import { BlockedUsersRepository } from '../../../accounts/users/blocked-users.repository.js';
import { MarketingPreferencesRepository } from '../../../accounts/users/marketing-preferences.repository.js';
import type { UserIdChange } from '../../../accounts/users/user-id-change.js';
import type { Tx } from '../../../core/db/db.js';
import { isRecord } from '../../../events/classify.js';
import {
  ConversationWindowsRepository,
  type InboundContact,
} from '../../../messages/conversation-windows.repository.js';
import { inboundMessageOf } from '../../../messages/inbound-message.js';
import { MessagesRepository } from '../../../messages/messages.repository.js';
import type { BlockedUserMoves, InboundMessages, InboundWindows, PreferenceMoves } from '../processing.ports.js';
import { readyAll, type EffectItem, type EventEffect, type PreparedEffect } from './event-effect.js';

/**
 * A customer's message is stored as an inbound message of its business account (once per wamid), and opens (or
 * renews) the 24 h customer service window of (business number, customer) for each way the customer can be
 * addressed: the phone number (`from`) and the business-scoped user id (`user_id`), so a reply may go to either
 * (`to` or `userId`). A user with a username may come with the user id only. One on Meta's `standby` field (Meta
 * Business Agent held the conversation) is the same, marked handledBy meta_business_agent.
 *
 * Meta's system messages `user_changed_user_id` and `user_changed_number` (with the previous ids) move what the
 * service keeps per user to the new address: the open windows, a marketing stop, blocks, and the messages' user
 * id; after the message's own window is opened, in the same transaction.
 */
@Injectable()
export class InboundMessageEffect implements EventEffect {
  constructor(
    @Inject(ConversationWindowsRepository) private readonly windows: InboundWindows,
    @Inject(MessagesRepository) private readonly messages: InboundMessages,
    @Inject(MarketingPreferencesRepository) private readonly preferences: PreferenceMoves,
    @Inject(BlockedUsersRepository) private readonly blocked: BlockedUserMoves,
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
        const changes = owned.flatMap(userIdChangesOf);
        if (changes.length === 0) return;
        await this.windows.followUsers(tx, changes);
        await this.preferences.followUsers(tx, changes);
        await this.blocked.followUsers(tx, changes);
        await this.messages.followUsers(tx, changes);
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

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * The address changes a system message announces. `user_changed_user_id`: `system.previous_user_id` (and
 * `previous_parent_user_id`) → `system.user_id`. `user_changed_number`: the sender's old number (`from`, or
 * `system.customer`) → `system.wa_id`, and `system.previous_user_id` → `system.user_id` (a number change regenerates
 * the user id). Anything else, or a system message missing the new address, changes nothing.
 */
export function userIdChangesOf(e: Pick<EffectItem, 'wabaId' | 'recipient' | 'raw'>): UserIdChange[] {
  const raw = isRecord(e.raw) ? e.raw : {};
  if (raw.type !== 'system' || !isRecord(raw.system)) return [];
  const s = raw.system;
  const pairs: [string | null, string | null][] = [];
  const nextUserId = text(s.user_id) ?? text(s.new_user_id);
  if (s.type === 'user_changed_user_id' || s.type === 'user_changed_number') {
    pairs.push([text(s.previous_user_id), nextUserId], [text(s.previous_parent_user_id), text(s.parent_user_id)]);
  }
  if (s.type === 'user_changed_number') {
    const previousNumber = text(s.customer) ?? text(raw.from) ?? e.recipient;
    pairs.push([previousNumber, text(s.wa_id) ?? text(s.new_wa_id)]);
  }
  return pairs
    .filter((p): p is [string, string] => p[0] !== null && p[1] !== null && p[0] !== p[1])
    .map(([previous, next]) => ({ wabaId: e.wabaId, previous, next }));
}
