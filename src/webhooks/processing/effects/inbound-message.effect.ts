import { Injectable } from '@nestjs/common';
import type { EffectOutcome, EventEffect, StoredEvent, Tx } from './event-effect.js';

/** A customer's message opens (or renews) the 24 h customer service window of (business number, customer). */
@Injectable()
export class InboundMessageEffect implements EventEffect {
  appliesTo(event: StoredEvent): boolean {
    return event.kind === 'inbound_message' && event.phoneNumberId !== null && event.recipient !== null;
  }

  async apply(tx: Tx, event: StoredEvent): Promise<EffectOutcome> {
    const at = event.upstreamTimestamp ?? event.createdAt;
    // GREATEST: a late redelivery of an older message never shortens the window.
    await tx.$executeRaw`
      INSERT INTO conversation_windows (phone_number_id, recipient, waba_id, last_inbound_at)
      VALUES (${event.phoneNumberId}, ${event.recipient}, ${event.wabaId}, ${at})
      ON CONFLICT (phone_number_id, recipient) DO UPDATE
        SET last_inbound_at = GREATEST(conversation_windows.last_inbound_at, EXCLUDED.last_inbound_at),
            waba_id = EXCLUDED.waba_id`;
    return 'applied';
  }
}
