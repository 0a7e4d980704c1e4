// The console's lists and the feed of `events`: run by EventsRepository (../events.repository.ts), the table's one
// owner. Their SQL as PostgreSQL receives it: ./queries/reads.sql (`npm run db:sql` writes it).
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../../core/db/database.js';
import { feedStatement } from '../../core/db/feed.js';
import { filterOf, when, type Filter } from '../../core/db/filter.js';
import { typed } from '../../core/db/pg.js';
import { preparedByShape } from '../../core/db/statement.js';
import type { EventKind } from '../classify.js';
import { ofAccount, ofMessage } from './index-keys.js';
import { eventColumns } from './event-columns.js';
import { encodeKind, encodeStatus } from './lean-encoding.js';

/** List and feed filters; the business account (wabaId) is always the first condition. */
export interface EventFilter {
  kind?: EventKind;
  status?: string;
  messageId?: string;
  recipient?: string;
  userId?: string;
  since?: Date;
  until?: Date;
}

/** A filter of the events lists, with the account it is read for. */
export type Scoped = EventFilter & { wabaId: string };

type Eb = ExpressionBuilder<Database, 'events'>;

/**
 * The kinds and statuses with an index of their own (migration 20261204050000_lean_list_indexes): all but status
 * updates (kind 2) and sent, delivered and read (1-3), the bulk of an account's events, which are read from its
 * newest-first index, filtered. Each predicate word for word as its index's: a generic plan uses a partial index only
 * when the statement names the predicate itself.
 */
const USUAL_KIND = encodeKind('status_update');
const USUAL_STATUSES = ['sent', 'delivered', 'read'].map((status) => encodeStatus(status)[0]!);
const rareKind = (eb: Eb) => eb('kind', '<>', eb.lit(USUAL_KIND));
const rareStatus = (eb: Eb) =>
  eb(
    'status',
    'not in',
    USUAL_STATUSES.map((code) => eb.lit(code)),
  );
const isRareKind = (kind: EventKind | undefined) => kind !== undefined && encodeKind(kind) !== USUAL_KIND;
const isRareStatus = (status: string | undefined) =>
  status !== undefined && !USUAL_STATUSES.includes(encodeStatus(status)[0]!);

/**
 * Whether a filter of kind or status (or both) has only usual values, read from the account's newest-first index
 * (a rare one has an index of its own).
 */
export const readsTheAccountsList = (filter: EventFilter) =>
  (filter.kind !== undefined || filter.status !== undefined) &&
  !isRareKind(filter.kind) &&
  !isRareStatus(filter.status);

/** Whether a filter has an index of its own (a rare kind or status, a user id, a recipient, a message). */
const hasItsOwnIndex = (given: EventFilter) =>
  isRareKind(given.kind) ||
  isRareStatus(given.status) ||
  given.userId !== undefined ||
  given.recipient !== undefined ||
  given.messageId !== undefined;

/**
 * The filters on `events` (the business account first): values from `p`, which filters are present from `given`.
 * The account by its key (the per-account indexes: `ofAccount`) for the feed and for a page or total without a filter
 * of its own; by its id alone otherwise, so that the plan takes the filter's own index (with the key, a generic plan
 * read the account's newest rows filtered: 103 ms for `kind=inbound_message` at 10 M against 1 ms).
 */
function whereOf(p: Required<Scoped>, given: Scoped, feed = false): Filter<'events'> {
  const [kind, status] = [isRareKind(given.kind), isRareStatus(given.status)];
  return filterOf<'events'>(
    feed || !hasItsOwnIndex(given) ? () => ofAccount(p.wabaId) : (eb) => eb('waba_id', '=', p.wabaId),
    [
      // Codes (./event-columns.ts): a status outside the known list is code 0 with its text in status_other.
      when(kind ? 'K' : 'k', given.kind, (eb) => {
        const code = eb('kind', '=', eb.fn<number>('events_kind_code', [typed(p.kind, 'text')]));
        return kind ? eb.and([code, rareKind(eb)]) : code;
      }),
      when(status ? 'S' : 's', given.status, (eb) => {
        const code = eb.fn<number>('events_status_code', [typed(p.status, 'text')]);
        const named = [eb('status', '=', code), eb.or([eb(code, '<>', 0), eb('status_other', '=', p.status)])];
        return eb.and(status ? [...named, rareStatus(eb)] : named);
      }),
      when('m', given.messageId, () => ofMessage(p.messageId)),
      when('r', given.recipient, (eb) => eb('recipient', '=', p.recipient)),
      when('i', given.userId, (eb) => eb('user_id', '=', p.userId)),
      when('f', given.since, (eb) => eb('created_at', '>=', p.since)),
      when('u', given.until, (eb) => eb('created_at', '<=', p.until)),
    ],
  );
}
const shapeOf = (given: Scoped) => whereOf(given as Required<Scoped>, given).shape;

export type EventsPageParams = Scoped & { take: number; skip: number };

/**
 * Newest first; served by the (waba_id, kind|status|user_id, created_at desc, id desc) indexes (kind and status: the
 * rare ones), the one on (recipient), or the account's (its key, created_at) read backwards, the rows of one
 * created_at (one transaction's) sorted by id (the usual kinds and statuses: filtered). The builders
 * and eventsPageOf are exported for bench/data-access-cost.ts, which times them.
 */
export const buildEventsPage = (db: Kysely<Database>, p: Required<EventsPageParams>, given: EventsPageParams) =>
  db
    .selectFrom('events')
    .select(eventColumns)
    .where(whereOf(p, given).where)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(p.take)
    .offset(p.skip);
export const eventsPageOf = preparedByShape('events_page', shapeOf, buildEventsPage);

/**
 * Whether `event_counts` holds a filter's total: account, kind and status alone (a NULL status is kept there as '', so
 * an empty status filter is counted the slow way).
 */
const countedByTriggers = (filter: EventFilter) =>
  filter.messageId === undefined &&
  filter.recipient === undefined &&
  filter.userId === undefined &&
  !filter.since &&
  !filter.until &&
  filter.status !== '';

/** The totals that triggers keep in `event_counts` (account, kind and status only). */
export const maintainedCountOf = preparedByShape('event_counts', shapeOf, (db, p: Required<Scoped>, given) =>
  db
    .selectFrom('event_counts')
    .select((eb) => eb.cast<string>(eb.fn.coalesce(eb.fn.sum<string>('count'), eb.lit(0)), 'text').as('n'))
    .where((eb) =>
      filterOf<'event_counts'>(
        (eb) => eb('waba_id', '=', p.wabaId),
        [
          when('k', given.kind, (eb) => eb('kind', '=', p.kind)),
          when('s', given.status, (eb) => eb('status', '=', p.status)),
        ],
      ).where(eb),
    ),
);

export const countOf = preparedByShape('events_count', shapeOf, (db, p: Required<Scoped>, given) =>
  db
    .selectFrom('events')
    .select((eb) => eb.cast<string>(eb.fn.countAll(), 'text').as('n'))
    .where(whereOf(p, given).where),
);

/** A filter's total: from `event_counts` when the triggers keep it, else COUNT(*) on the filter's indexes. */
export const totalOf = (filter: Scoped) => (countedByTriggers(filter) ? maintainedCountOf(filter) : countOf(filter));

/**
 * Whether a page reads its total first: a filter of usual kinds or statuses only (no index of their own: the page reads
 * the account's events until it has its rows) whose total `event_counts` keeps; none there, no read of the page.
 */
export const readsTotalFirst = (filter: EventFilter) => readsTheAccountsList(filter) && countedByTriggers(filter);

export type EventsFeedParams = Scoped & { afterXid: string; afterId: number; limit: number };

/**
 * The feed after (afterXid, afterId), oldest first by (xid, id), below the horizon (see EventsRepository.feed), for
 * one filter's shape (src/core/db/feed.ts).
 */
export const buildEventsFeed = (db: Kysely<Database>, p: Required<EventsFeedParams>, given: EventsFeedParams) =>
  feedStatement(db, {
    beyond: (eb, horizon) =>
      eb
        .selectFrom('events as b')
        .select('b.xid')
        .where(ofAccount(p.wabaId, 'b'))
        .where('b.xid', '>=', horizon)
        .orderBy('b.xid')
        .limit(1)
        .as('beyond'),
    page: (eb, horizon) =>
      eb
        .selectFrom('events')
        .select((eb) => [...eventColumns(eb), 'xid'])
        .where(whereOf(p, given, true).where)
        .where((eb) =>
          eb(eb.refTuple('xid', 'id'), '>', eb.tuple(typed(p.afterXid, 'xid8'), typed(p.afterId, 'bigint'))),
        )
        .where('xid', '<', horizon)
        .orderBy('xid')
        .orderBy('id')
        .limit(p.limit)
        .as('r'),
  });
export const feedOf = preparedByShape('events_feed', shapeOf, buildEventsFeed);
