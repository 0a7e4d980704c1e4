import { Injectable } from '@nestjs/common';
import { PrismaService } from '../core/prisma/prisma.service.js';
import { connectionOf, statement, type Tx } from '../core/prisma/sql.js';

export interface InboundContact {
  phoneNumberId: string;
  recipient: string;
  wabaId: string;
  at: Date;
}

/** GREATEST: a late redelivery of an older message never shortens the window. */
const openWindows = statement(
  'open_conversation_windows',
  `INSERT INTO conversation_windows (phone_number_id, recipient, waba_id, last_inbound_at)
   SELECT w.p, w.r, w.b, w.t FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS w(p, r, b, t)
   ON CONFLICT (phone_number_id, recipient) DO UPDATE
     SET last_inbound_at = GREATEST(conversation_windows.last_inbound_at, EXCLUDED.last_inbound_at), waba_id = EXCLUDED.waba_id`,
);

const lastInbound = statement(
  'conversation_window_last_inbound',
  `SELECT last_inbound_at AS "lastInboundAt" FROM conversation_windows WHERE phone_number_id = $1 AND recipient = $2`,
);

/**
 * The one owner of `conversation_windows`: the 24 h customer service window, the last inbound message per
 * (business number, customer). Written by the worker (inbound messages), read by the send path.
 */
@Injectable()
export class ConversationWindowsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** When the customer last wrote to this number; null when never. */
  async lastInboundAt(phoneNumberId: string, recipient: string): Promise<Date | null> {
    const { rows } = await this.prisma.pool.query<{ lastInboundAt: Date }>(lastInbound([phoneNumberId, recipient]));
    return rows[0]?.lastInboundAt ?? null;
  }

  /** Opens or renews the windows of these inbound messages, in the caller's transaction; one statement. */
  async openOrRenew(tx: Tx, contacts: InboundContact[]): Promise<void> {
    // One row per window (the latest message), in key order: a statement may not touch a row twice, and
    // concurrent chunks then lock windows in the same order.
    const latest = new Map<string, InboundContact>();
    for (const c of contacts) {
      const key = `${c.phoneNumberId}\u0000${c.recipient}`;
      const seen = latest.get(key);
      if (!seen || c.at > seen.at) latest.set(key, c);
    }
    if (latest.size === 0) return;
    const rows = [...latest.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
    await connectionOf(tx).query(openWindows([rows.map((r) => r.phoneNumberId), rows.map((r) => r.recipient), rows.map((r) => r.wabaId), rows.map((r) => r.at)]));
  }
}
