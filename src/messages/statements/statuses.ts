// Status webhooks' statements on `messages` (the worker, in its transaction): run by MessagesRepository
// (../messages.repository.ts), the table's one owner. Their SQL: ./queries/statuses.sql (`npm run db:sql` writes it).
import { now, jsonRecords, typed, unnest } from '../../core/db/pg.js';
import { prepared } from '../../core/db/statement.js';

export const followUsers = prepared('messages_follow_users', (db, p: { waba: string[]; old: string[]; nu: string[] }) =>
  db
    .updateTable('messages as m')
    .from([unnest('u', { waba: 'text', old: 'text', nu: 'text' }, p), 'business_accounts as b'])
    .set((eb) => ({ user_id: eb.ref('u.nu') }))
    .whereRef('b.waba_id', '=', 'u.waba')
    .whereRef('m.business_account_id', '=', 'b.id')
    .whereRef('m.user_id', '=', 'u.old'),
);

/**
 * Planned for its values each time: the worker's batches run on a table that may have grown from nothing since its
 * last ANALYZE, and a generic plan made while it was small scans all of it for every chunk (measured: a third of
 * PostgreSQL's CPU in a batch bench). The two ways of finding a message are two index scans whose ids (one array,
 * computed first) are then found by primary key: no ANY over text re-evaluated per row, and no join the planner could
 * turn into a scan of the table.
 */
export const lockForStatuses = prepared(
  'lock_messages_for_statuses',
  (db, p: { wamids: string[]; callbackMessageIds: number[] }) =>
    db
      .selectFrom('messages as m')
      .innerJoin('business_accounts as b', 'b.id', 'm.business_account_id')
      .select([
        'm.id',
        'b.waba_id as wabaId',
        'm.upstream_message_id as upstreamMessageId',
        'm.status',
        'm.error_category as errorCategory',
        'm.error_code as errorCode',
        'm.error_title as errorTitle',
        'm.error_detail as errorDetail',
        'm.sent_at as sentAt',
        'm.delivered_at as deliveredAt',
        'm.read_at as readAt',
        'm.failed_at as failedAt',
        'm.pricing_model as pricingModel',
        'm.pricing_category as pricingCategory',
        'm.pricing_type as pricingType',
        'm.pricing_billable as pricingBillable',
      ])
      .where((eb) =>
        eb(
          'm.id',
          '=',
          eb.fn.any(
            eb.fn<number[]>('array', [
              eb
                .selectFrom('messages as x')
                .select('x.id')
                .where((eb) => eb('x.upstream_message_id', '=', eb.fn.any(typed(p.wamids, 'text[]'))))
                .unionAll((eb) =>
                  eb
                    .selectFrom('messages as x')
                    .select('x.id')
                    .where((eb) =>
                      eb.and([
                        eb('x.id', '=', eb.fn.any(typed(p.callbackMessageIds, 'bigint[]'))),
                        eb('x.upstream_message_id', 'is', null),
                      ]),
                    ),
                ),
            ]),
          ),
        ),
      )
      .orderBy('m.id')
      .forUpdate('m'),
  { planned: true },
);

/** Planned for its values each time, as lockForStatuses. */
export const writeStatuses = prepared(
  'write_message_statuses',
  (db, p: { rows: string; ids: number[] }) =>
    db
      .updateTable('messages as m')
      .from(
        jsonRecords(
          'v',
          {
            id: 'bigint',
            status: 'text',
            errorCategory: 'text',
            errorCode: 'int',
            errorTitle: 'text',
            errorDetail: 'text',
            sentAt: 'timestamptz',
            deliveredAt: 'timestamptz',
            readAt: 'timestamptz',
            failedAt: 'timestamptz',
            upstreamMessageId: 'text',
            pricingModel: 'text',
            pricingCategory: 'text',
            pricingType: 'text',
            pricingBillable: 'boolean',
          },
          p.rows,
        ),
      )
      .set((eb) => ({
        status: eb.ref('v.status').$notNull(),
        error_category: eb.ref('v.errorCategory'),
        error_code: eb.ref('v.errorCode'),
        error_title: eb.ref('v.errorTitle'),
        error_detail: eb.ref('v.errorDetail'),
        sent_at: eb.ref('v.sentAt'),
        delivered_at: eb.ref('v.deliveredAt'),
        read_at: eb.ref('v.readAt'),
        failed_at: eb.ref('v.failedAt'),
        upstream_message_id: eb.ref('v.upstreamMessageId'),
        pricing_model: eb.ref('v.pricingModel'),
        pricing_category: eb.ref('v.pricingCategory'),
        pricing_type: eb.ref('v.pricingType'),
        pricing_billable: eb.ref('v.pricingBillable'),
        updated_at: now(),
      }))
      .where((eb) => eb.and([eb('m.id', '=', eb.ref('v.id')), eb('m.id', '=', eb.fn.any(typed(p.ids, 'bigint[]')))])),
  { planned: true },
);

/** What the status rules (messages/message-status.ts) need to know of a message. */
export interface LockedMessage {
  id: number;
  status: string;
  errorCategory: string | null;
  sentAt: Date | null;
  deliveredAt: Date | null;
  readAt: Date | null;
  failedAt: Date | null;
}

/** A message as a status chunk locks and writes it back: every column statuses change. */
export interface StatusCandidate extends LockedMessage {
  wabaId: string;
  upstreamMessageId: string | null;
  errorCode: number | null;
  errorTitle: string | null;
  errorDetail: string | null;
  pricingModel: string | null;
  pricingCategory: string | null;
  pricingType: string | null;
  pricingBillable: boolean | null;
}
