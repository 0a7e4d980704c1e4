// A campaign runner's statements on `messages`: run by MessagesRepository (../messages.repository.ts), the table's
// one owner. Their SQL as PostgreSQL receives it: ./queries/campaigns.sql (`npm run db:sql` writes it).
import { columnMap } from '../../core/db/column-map.js';
import { now, typed, unnest } from '../../core/db/pg.js';
import { prepared } from '../../core/db/statement.js';
import { PENDING_SOURCE, type PendingColumns } from './send.js';
import { lockedInIdOrder } from './shared.js';

/** A campaign's pending messages: a send's source columns, then the campaign and what the statement gives. */
const CAMPAIGN_INSERT = columnMap('messages', {
  ...PENDING_SOURCE,
  campaign_id: 'campaignId',
  status: 'status',
  updated_at: 'updatedAt',
});

/** A campaign chunk's pending messages (as insertPendingBatch, with the campaign; no key pair). */
export const insertCampaignMessages = prepared(
  'insert_campaign_messages',
  (db, p: PendingColumns & { campaignId: number }) =>
    db
      .insertInto('messages')
      .columns(CAMPAIGN_INSERT.columns)
      .expression(
        db
          .selectFrom(CAMPAIGN_INSERT.unnest('u', p, 'ord'))
          .select((eb) =>
            CAMPAIGN_INSERT.select('u', {
              campaignId: typed(p.campaignId, 'bigint'),
              status: eb.val('pending'),
              updatedAt: now(),
            }),
          )
          .orderBy('u.ord'),
      )
      .returning('id'),
);

/** pending → failed for many messages of one account (only from pending, as markFailed); locked first, in id order. */
export const markFailedBatch = prepared(
  'mark_messages_failed',
  (
    db,
    p: {
      ids: number[];
      businessAccountId: string;
      at: Date;
      codes: (number | null)[];
      titles: string[];
      details: (string | null)[];
      categories: string[];
    },
  ) =>
    db
      .updateTable('messages as m')
      .from(
        unnest(
          'u',
          { id: 'bigint', code: 'int', title: 'text', detail: 'text', category: 'text' },
          { id: p.ids, code: p.codes, title: p.titles, detail: p.details, category: p.categories },
        ),
      )
      .set((eb) => ({
        status: 'failed',
        failed_at: p.at,
        error_code: eb.ref('u.code'),
        error_title: eb.ref('u.title'),
        error_detail: eb.ref('u.detail'),
        error_category: eb.ref('u.category'),
        updated_at: p.at,
      }))
      .where((eb) =>
        eb.and([
          lockedInIdOrder(eb, p.ids),
          eb('m.id', '=', eb.ref('u.id')),
          eb(
            eb.parens(
              eb.and([
                eb('m.status', '=', 'pending'),
                eb('m.business_account_id', '=', typed(p.businessAccountId, 'uuid')),
              ]),
            ),
            'is',
            true,
          ),
        ]),
      ),
  { planned: true },
);
