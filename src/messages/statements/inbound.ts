// Customers' messages, stored by the worker in its transaction: run by MessagesRepository (../messages.repository.ts),
// the table's one owner. Their SQL as PostgreSQL receives it: ./queries/inbound.sql (`npm run db:sql` writes it).
import { columnMap } from '../../core/db/column-map.js';
import { now } from '../../core/db/pg.js';
import { prepared } from '../../core/db/statement.js';

/**
 * An inbound message's columns, once (core/db/column-map.ts): each with its field in the JSON rows
 * (InboundMessageRow) and its type, or the key of the value the statement gives (the account from the join).
 */
export const INBOUND_INSERT = columnMap('messages', {
  business_account_id: 'accountId',
  phone_number_id: ['phoneNumberId', 'text'],
  direction: 'direction',
  from: ['from', 'text'],
  user_id: ['userId', 'text'],
  handled_by: ['handledBy', 'text'],
  type: ['type', 'text'],
  content: ['content', 'jsonb'],
  status: 'status',
  upstream_message_id: ['wamid', 'text'],
  updated_at: 'updatedAt',
});

/**
 * Customers' messages, each in the business account that owns the receiving WABA (an event of an account not
 * connected here stores no message). Once per wamid (unique): redeliveries and retried chunks insert nothing.
 */
export const insertInbound = prepared(
  'insert_inbound_messages',
  (db, p: { rows: string }) =>
    db
      .insertInto('messages')
      .columns(INBOUND_INSERT.columns)
      .expression(
        db
          .selectFrom(INBOUND_INSERT.records('d', p.rows, { wabaId: 'text' }))
          .innerJoin('business_accounts as b', 'b.waba_id', 'd.wabaId')
          .select((eb) =>
            INBOUND_INSERT.select('d', {
              accountId: 'b.id',
              direction: eb.val('inbound'),
              status: eb.val('received'),
              updatedAt: now(),
            }),
          ),
      )
      .onConflict((oc) => oc.column('upstream_message_id').doNothing()),
  { planned: true },
);

/** A customer's message as the worker stores it (content in the shapes of outbound content). */
export interface InboundMessageRow {
  wabaId: string;
  phoneNumberId: string;
  from: string | null;
  userId: string | null;
  /** meta_business_agent when it arrived on `standby`; null when the business app held the conversation. */
  handledBy: string | null;
  type: string;
  content: unknown;
  wamid: string | null;
}
