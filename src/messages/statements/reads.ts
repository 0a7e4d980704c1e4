// Reads and feeds of `messages`: run by MessagesRepository (../messages.repository.ts), the table's one owner.
// Their SQL as PostgreSQL receives it: ./queries/reads.sql (`npm run db:sql` writes it).
import { columns } from '../../core/db/database.js';
import { feedStatement } from '../../core/db/feed.js';
import { filterOf, when, type Filter } from '../../core/db/filter.js';
import { typed } from '../../core/db/pg.js';
import { prepared, preparedByShape, type RowOf } from '../../core/db/statement.js';
import { sameAccount } from './shared.js';

export const findOne = prepared('find_message', (db, p: { id: number; businessAccountId: string }) =>
  db
    .selectFrom('messages')
    .select(columns.messages)
    .where((eb) => eb.and([eb('id', '=', p.id), sameAccount(eb, p.businessAccountId)])),
);

/**
 * A stored message as the application sees it: the id a number (what the API answers; exact up to 2^53 - 1): the
 * pool reads int8 as a number.
 */
export type StoredMessage = RowOf<typeof findOne>;

/** List and feed filters; the business account is always the first condition. */
export interface MessageFilter {
  direction?: string;
  status?: string;
  to?: string;
  userId?: string;
  phoneNumberId?: string;
  templateName?: string;
  type?: string;
  campaignId?: number;
  since?: Date;
  until?: Date;
}

/** A filter of the messages lists, with the account it is read for. */
export type Scoped = MessageFilter & { businessAccountId: string };

/** The filters on `messages` (the business account first): values from `p`, which filters are present from `given`. */
export function whereOf(p: Required<Scoped>, given: Scoped): Filter<'messages'> {
  return filterOf<'messages'>(
    (eb) => eb('business_account_id', '=', typed(p.businessAccountId, 'uuid')),
    [
      when('d', given.direction, (eb) => eb('direction', '=', p.direction)),
      when('s', given.status, (eb) => eb('status', '=', p.status)),
      when('r', given.to, (eb) => eb('to', '=', p.to)),
      when('i', given.userId, (eb) => eb('user_id', '=', p.userId)),
      when('p', given.phoneNumberId, (eb) => eb('phone_number_id', '=', p.phoneNumberId)),
      when('n', given.templateName, (eb) => eb('template_name', '=', p.templateName)),
      when('t', given.type, (eb) => eb('type', '=', p.type)),
      when('c', given.campaignId, (eb) => eb('campaign_id', '=', p.campaignId)),
      when('f', given.since, (eb) => eb('created_at', '>=', p.since)),
      when('u', given.until, (eb) => eb('created_at', '<', p.until)),
    ],
  );
}
export const shapeOf = (given: Scoped) => whereOf(given as Required<Scoped>, given).shape;

export const pageOf = preparedByShape(
  'messages_page',
  shapeOf,
  (db, p: Required<Scoped & { take: number; skip: number }>, given) =>
    db
      .selectFrom('messages')
      .select(columns.messages)
      .where(whereOf(p, given).where)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(p.take)
      .offset(p.skip),
);

export const countOf = preparedByShape(
  'messages_count',
  shapeOf,
  (db, p: Required<Scoped & { countTake: number }>, given) =>
    db
      .selectFrom(
        db.selectFrom('messages').select('id').where(whereOf(p, given).where).limit(p.countTake).as('counted'),
      )
      .select((eb) => eb.cast<string>(eb.fn.countAll(), 'text').as('n')),
);

/** The messages feed (see MessagesRepository.feed): as the events feed, on changed_xid. */
export const feedOf = preparedByShape(
  'messages_feed',
  shapeOf,
  (db, p: Required<Scoped & { afterXid: string; afterId: number; limit: number }>, given) =>
    feedStatement(db, {
      beyond: (eb, horizon) =>
        eb
          .selectFrom('messages as b')
          .select('b.changed_xid')
          .where('b.business_account_id', '=', typed(p.businessAccountId, 'uuid'))
          .where('b.changed_xid', '>=', horizon)
          .orderBy('b.changed_xid')
          .limit(1)
          .as('beyond'),
      page: (eb, horizon) =>
        eb
          .selectFrom('messages')
          .select([...columns.messages, 'changed_xid as xid'])
          .where(whereOf(p, given).where)
          .where((eb) =>
            eb(eb.refTuple('changed_xid', 'id'), '>', eb.tuple(typed(p.afterXid, 'xid8'), typed(p.afterId, 'bigint'))),
          )
          .where('changed_xid', '<', horizon)
          .orderBy('changed_xid')
          .orderBy('id')
          .limit(p.limit)
          .as('r'),
    }),
);

/** A page of the messages feed; `beyond`: the smallest changed_xid of the account not in the feed yet, if any. */
export interface MessagesFeedPage {
  rows: (StoredMessage & { xid: string })[];
  beyond: bigint | undefined;
}
