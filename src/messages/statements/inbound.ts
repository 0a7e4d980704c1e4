// Customers' messages, stored by the worker in its transaction: run by MessagesRepository (../messages.repository.ts),
// the table's one owner. Their SQL as PostgreSQL receives it: ./queries/inbound.sql (`npm run db:sql` writes it).
import { jsonRecords, now } from '../../core/db/pg.js';
import { prepared } from '../../core/db/statement.js';

/**
 * Customers' messages, each in the business account that owns the receiving WABA (an event of an account not
 * connected here stores no message). Once per wamid (unique): redeliveries and retried chunks insert nothing.
 */
export const insertInbound = prepared(
  'insert_inbound_messages',
  (db, p: { rows: string }) =>
    db
      .insertInto('messages')
      .columns([
        'business_account_id',
        'phone_number_id',
        'direction',
        'from',
        'user_id',
        'handled_by',
        'type',
        'content',
        'status',
        'upstream_message_id',
        'updated_at',
      ])
      .expression(
        db
          .selectFrom(
            jsonRecords(
              'd',
              {
                wabaId: 'text',
                phoneNumberId: 'text',
                from: 'text',
                userId: 'text',
                handledBy: 'text',
                type: 'text',
                content: 'jsonb',
                wamid: 'text',
              },
              p.rows,
            ),
          )
          .innerJoin('business_accounts as b', 'b.waba_id', 'd.wabaId')
          .select((eb) => [
            'b.id',
            'd.phoneNumberId',
            eb.val('inbound').as('direction'),
            'd.from',
            'd.userId',
            'd.handledBy',
            'd.type',
            'd.content',
            eb.val('received').as('status'),
            'd.wamid',
            now().as('updatedAt'),
          ]),
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
