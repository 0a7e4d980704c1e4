import { Injectable } from '@nestjs/common';
import { Db, type Tx } from '../core/db/db.js';
import { unnest } from '../core/db/pg.js';
import { prepared } from '../core/db/statement.js';
import { changeColumns, distinctChanges, type UserIdChange } from '../accounts/users/user-id-change.js';
import { GenerateSql, Sample } from '../core/db/generate-sql.js';

export interface InboundContact {
  phoneNumberId: string;
  recipient: string;
  wabaId: string;
  at: Date;
}

/** GREATEST: a late redelivery of an older message never shortens the window. */
const openWindows = prepared(
  'open_conversation_windows',
  (db, p: { phoneNumberIds: string[]; recipients: string[]; wabaIds: string[]; ats: Date[] }) =>
    db
      .insertInto('conversation_windows')
      .columns(['phone_number_id', 'recipient', 'waba_id', 'last_inbound_at'])
      .expression(
        db
          .selectFrom(
            unnest(
              'w',
              { p: 'text', r: 'text', b: 'text', t: 'timestamptz' },
              { p: p.phoneNumberIds, r: p.recipients, b: p.wabaIds, t: p.ats },
            ),
          )
          .select(['w.p', 'w.r', 'w.b', 'w.t']),
      )
      .onConflict((oc) =>
        oc.columns(['phone_number_id', 'recipient']).doUpdateSet((eb) => ({
          last_inbound_at: eb.fn<Date>('greatest', [
            'conversation_windows.last_inbound_at',
            'excluded.last_inbound_at',
          ]),
          waba_id: eb.ref('excluded.waba_id'),
        })),
      ),
);

/** Each window of a previous address, on every number of the account, also opened for the next (the later time wins). */
const followUsers = prepared(
  'conversation_windows_follow_users',
  (db, p: { waba: string[]; old: string[]; nu: string[] }) =>
    db
      .insertInto('conversation_windows')
      .columns(['phone_number_id', 'recipient', 'waba_id', 'last_inbound_at'])
      .expression(
        db
          .selectFrom(unnest('u', { waba: 'text', old: 'text', nu: 'text' }, p))
          .innerJoin('conversation_windows as w', (j) =>
            j.onRef('w.waba_id', '=', 'u.waba').onRef('w.recipient', '=', 'u.old'),
          )
          .select((eb) => ['w.phone_number_id', 'u.nu', 'w.waba_id', eb.fn.max('w.last_inbound_at').as('at')])
          .$narrowType<{ nu: string }>()
          .groupBy(['w.phone_number_id', 'u.nu', 'w.waba_id'])
          .orderBy('w.phone_number_id')
          .orderBy('u.nu'),
      )
      .onConflict((oc) =>
        oc.columns(['phone_number_id', 'recipient']).doUpdateSet((eb) => ({
          last_inbound_at: eb.fn<Date>('greatest', [
            'conversation_windows.last_inbound_at',
            'excluded.last_inbound_at',
          ]),
        })),
      ),
);

const lastInbound = prepared(
  'conversation_window_last_inbound',
  (db, p: { phoneNumberId: string; recipient: string }) =>
    db
      .selectFrom('conversation_windows')
      .select('last_inbound_at as lastInboundAt')
      .where('phone_number_id', '=', p.phoneNumberId)
      .where('recipient', '=', p.recipient),
);

/**
 * The one owner of `conversation_windows`: the 24 h customer service window, the last inbound message per
 * (business number, customer). Written by the worker (inbound messages), read by the send path.
 */
@Injectable()
export class ConversationWindowsRepository {
  constructor(private readonly db: Db) {}

  /** When the customer last wrote to this number; null when never. */
  async lastInboundAt(phoneNumberId: string, recipient: string): Promise<Date | null> {
    const { rows } = await this.db.exec(lastInbound, { phoneNumberId, recipient });
    return rows[0]?.lastInboundAt ?? null;
  }

  /** The windows of each previous address follow the user to its next one (Meta's user id and number changes). */
  async followUsers(tx: Tx, changes: UserIdChange[]): Promise<void> {
    const distinct = distinctChanges(changes);
    if (distinct.length > 0) await this.db.exec(followUsers, changeColumns(distinct), tx);
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
    await this.db.exec(
      openWindows,
      {
        phoneNumberIds: rows.map((r) => r.phoneNumberId),
        recipients: rows.map((r) => r.recipient),
        wabaIds: rows.map((r) => r.wabaId),
        ats: rows.map((r) => r.at),
      },
      tx,
    );
  }

  /** The contact's windows on the account's numbers. */
  @GenerateSql({ params: [Sample.WABA_ID, [Sample.PHONE]] })
  async ofContact(
    wabaId: string,
    addresses: string[],
  ): Promise<{ phoneNumberId: string; recipient: string; lastInboundAt: Date }[]> {
    return this.db
      .on()
      .selectFrom('conversation_windows')
      .select(['phone_number_id as phoneNumberId', 'recipient', 'last_inbound_at as lastInboundAt'])
      .where('waba_id', '=', wabaId)
      .where((eb) => eb('recipient', '=', eb.fn.any(eb.val(addresses))))
      .execute();
  }

  /** Deletes the contact's windows on the account's numbers (the next inbound message opens one again); returns how many. */
  @GenerateSql({ params: [Sample.TX, Sample.WABA_ID, [Sample.PHONE]] })
  async eraseContact(tx: Tx, wabaId: string, addresses: string[]): Promise<number> {
    const { numDeletedRows } = await this.db
      .on(tx)
      .deleteFrom('conversation_windows')
      .where('waba_id', '=', wabaId)
      .where((eb) => eb('recipient', '=', eb.fn.any(eb.val(addresses))))
      .executeTakeFirstOrThrow();
    return Number(numDeletedRows);
  }
}
