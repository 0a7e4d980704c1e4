// A campaign runner's statements on `messages`: run by MessagesRepository (../messages.repository.ts), the table's
// one owner. Their SQL as PostgreSQL receives it: ./queries/campaigns.sql (`npm run db:sql` writes it).
import { now, typed, unnest } from '../../core/db/pg.js';
import { prepared } from '../../core/db/statement.js';
import { PENDING_COLUMNS, PENDING_VALUES, pendingRows, type PendingColumns } from './send.js';

/** A campaign chunk's pending messages (as insertPendingBatch, with the campaign; no key pair). */
export const insertCampaignMessages = prepared(
  'insert_campaign_messages',
  (db, p: PendingColumns & { campaignId: number }) =>
    db
      .insertInto('messages')
      .columns([...PENDING_COLUMNS, 'campaign_id', 'status', 'updated_at'])
      .expression(
        db
          .selectFrom(pendingRows(p))
          .select((eb) => [
            ...PENDING_VALUES,
            typed(p.campaignId, 'bigint').as('campaignId'),
            eb.val('pending').as('status'),
            now().as('updatedAt'),
          ])
          .orderBy('u.ord'),
      )
      .returning('id'),
);

/** pending → failed for many messages of one account (only from pending, as markFailed). */
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
