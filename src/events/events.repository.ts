import { Injectable } from '@nestjs/common';
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Database } from '../core/db/database.js';
import { Db, type Tx } from '../core/db/db.js';
import { feedRows } from '../core/db/feed.js';
import {
  dropDetachedLeftovers,
  dropPartition,
  compactEndedPartition,
  type Compaction,
  ensurePartitions,
  expiredPartitions,
  FreshPartitions,
  partitionsOf,
  type Partition,
} from '../core/db/partitions.js';
import { snapshotHorizon, typed, withoutMessageContent } from '../core/db/pg.js';
import { prepared, type RowOf } from '../core/db/statement.js';
import { skipTake } from '../core/rows/page.js';
import type { EventDraft } from './classify.js';
import { dedupeHash, dedupeLockId } from './dedupe-key.js';
import { dedupeUuids, ofMessage, ofMessages } from './statements/index-keys.js';
import { EVENT_INSERT, insertEvents, lockDedupeKeys } from './statements/insert.js';
import { eventColumns, kindCode, readEvent, storedEventColumns, type ReadEvent } from './statements/event-columns.js';
import { encodeEventType, encodeKind, encodeStatus, leanItem, leanTitle } from './statements/lean-encoding.js';
import type { FeedPosition } from './feed-cursor.js';
import { eventsPageOf, feedOf, readsTotalFirst, totalOf, type EventFilter, type Scoped } from './statements/reads.js';

export {
  buildEventsFeed,
  buildEventsPage,
  eventsPageOf,
  type EventFilter,
  type EventsFeedParams,
  type EventsPageParams,
} from './statements/reads.js';
import { GenerateSql, Sample } from '../core/db/generate-sql.js';

/** A draft to store: whether the same transaction applies it (`processed`), and the tries it already had. */
export type EventRow = EventDraft & { deliveryId: number; processed: boolean; attempts: number };

/** Served by the partial index over unprocessed events (delivery_id) (its predicate is `NOT processed`); created_at bounds it in time. */
const pendingEvents = prepared('pending_events', (db, p: { deliveryIds: number[]; since: Date }) =>
  db
    .selectFrom('events')
    .select(storedEventColumns)
    .where((eb) =>
      eb.and([
        eb('delivery_id', '=', eb.fn.any(typed(p.deliveryIds, 'bigint[]'))),
        eb.not(eb.ref('processed')),
        eb('created_at', '>=', p.since),
      ]),
    )
    .orderBy('id'),
);

/**
 * The claim of stored events (processed false → true): a concurrent or later job finds them taken. `oldest` (the
 * oldest created_at among them) keeps the lookup to the partitions that can hold them.
 */
const claimEvents = prepared('claim_events', (db, p: { ids: number[]; oldest: Date }) =>
  db
    .updateTable('events')
    .set({ processed: true })
    .where((eb) =>
      eb.and([
        eb('id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))),
        eb('created_at', '>=', p.oldest),
        eb.not(eb.ref('processed')),
      ]),
    )
    .returning('id'),
);

const countWait = prepared('count_event_wait', (db, p: { ids: number[]; oldest: Date }) =>
  db
    .updateTable('events')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where((eb) =>
      eb.and([
        eb('id', '=', eb.fn.any(typed(p.ids, 'bigint[]'))),
        eb('created_at', '>=', p.oldest),
        eb.not(eb.ref('processed')),
      ]),
    ),
);

/** `since`: no status of a message is stored before the message (its creation, less a margin): older partitions are skipped. */
const statusHistory = prepared('status_history', (db, p: { wabaId: string; wamid: string; since: Date }) =>
  db
    .selectFrom('events')
    .select((eb) => [
      eb.fn<string | null>('events_status_name', ['status', 'status_other']).as('status'),
      'upstream_timestamp as upstreamTimestamp',
      'created_at as createdAt',
    ])
    .where(ofMessage(p.wamid))
    .where('waba_id', '=', p.wabaId)
    .where((eb) => eb('kind', '=', kindCode(eb, 'status_update')))
    .where('created_at', '>=', p.since)
    .orderBy('upstream_timestamp', (o) => o.asc().nullsLast())
    .orderBy('id', 'asc'),
);

const findInAccounts = prepared('find_event_in_accounts', (db, p: { id: number; wabaIds: string[] }) =>
  db
    .selectFrom('events')
    .select(eventColumns)
    .where('id', '=', p.id)
    .where((eb) => eb('waba_id', '=', eb.fn.any(typed(p.wabaIds, 'text[]')))),
);

/** An event row as read here (its raw item put back whole: readEvent); 64-bit ids as JS numbers (exact to 2^53). */
export type Event = ReadEvent<RowOf<typeof findInAccounts>>;

/** An event as the worker's effects read it. */
export type StoredEvent = ReadEvent<RowOf<typeof pendingEvents>>;

export interface InsertedEvent {
  id: number;
  dedupeKey: string;
  createdAt: Date;
}

const deliveriesWithWaitingStatuses = prepared(
  'deliveries_with_waiting_statuses',
  (db, p: { maxAttempts: number; createdBefore: Date; createdAfter: Date; limit: number }) =>
    db
      .selectFrom('events')
      .select('delivery_id as deliveryId')
      .distinct()
      .where((eb) =>
        eb.and([
          eb.not(eb.ref('processed')),
          eb('kind', '=', kindCode(eb, 'status_update')),
          eb('attempts', '<', p.maxAttempts),
          eb('created_at', '<', p.createdBefore),
          eb('created_at', '>', p.createdAfter),
        ]),
      )
      .limit(p.limit),
);

const horizonNow = prepared('events_feed_horizon', (db) =>
  db.selectFrom(snapshotHorizon('x')).select((eb) => eb.cast<string>('x.horizon', 'text').as('horizon')),
);

/** When a partition is dropped: its weeks' counts go with it. */
const deleteCounts = prepared('retention_delete_event_counts', (db, p: { from: Date | null; to: Date }) =>
  db
    .deleteFrom('event_counts')
    .where('bucket', '>=', (eb) => eb.fn.coalesce(typed(p.from, 'timestamptz'), typed('-infinity', 'timestamptz')))
    .where('bucket', '<', p.to),
);

/** A page of the feed, and what a long poll needs to know about what is not in it yet. */
export interface FeedPage {
  rows: (Event & { xid: string })[];
  /** The snapshot's xmin: every transaction below it has ended, so the feed below it is final. */
  horizon: bigint;
  /** The smallest xid of the account's committed events not in the feed yet (at or above the horizon), if any. */
  beyond: bigint | undefined;
}

/**
 * The one owner of `events` (and reader of `event_counts`, which triggers keep). Console reads take the
 * business account (wabaId) first: the caller has checked it is the tenant's. The worker's statements take
 * a Tx: storing events, claiming them and applying their effects commit together.
 */
@Injectable()
export class EventsRepository {
  /** The week's partition analyzed once it has rows (core/db/partitions.ts): the dedupe probe's plan needs it. */
  private readonly fresh: FreshPartitions;

  constructor(private readonly db: Db) {
    this.fresh = new FreshPartitions(db);
  }

  /**
   * Newest first; served by the account's (key, created_at) index or a filter's own (statements/reads.ts). Page, count
   * and feed run on `partitionReads` (generic plans, see Db).
   */
  async page(
    wabaId: string,
    filter: EventFilter,
    page: { page: number; limit: number },
  ): Promise<{ rows: Event[]; total: number }> {
    const params = { ...filter, wabaId, ...skipTake(page) };
    const scoped = { ...filter, wabaId };
    // Lag-tolerant (the read replica when there is one); the feed is not (see `feed`).
    return this.db.lagTolerant(async (db) => {
      const read = () => db.exec(eventsPageOf(params), params, undefined, 'partitionReads');
      // A usual kind or status has no index of its own: the page reads the account's events until it has its rows. Its
      // total first then (event_counts, a few rows), and no read at all when none is there or the page is past them.
      const total = readsTotalFirst(filter) ? await this.count(db, scoped) : undefined;
      if (total !== undefined && total <= params.skip) return { rows: [], total };
      const [{ rows }, n] = await Promise.all([read(), total ?? this.count(db, scoped)]);
      return { rows: rows.map(readEvent), total: n };
    });
  }

  /**
   * Exact either way. Account, kind and status alone: the totals that triggers on `events` keep in
   * `event_counts` (a sum over a few rows, however many events). The selective filters (messageId, recipient,
   * userId, since/until) fall back to COUNT(*) on their indexes. `event_counts` keeps a NULL status as '', so an empty
   * status filter is counted the slow way too.
   */
  private async count(db: Db, filter: Scoped): Promise<number> {
    const { rows } = await db.exec(totalOf(filter), filter, undefined, 'partitionReads');
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * The feed after `after`, oldest first by (xid, id), limited to transactions below the horizon (the
   * statement snapshot's xmin): every row there is final, so a cursor never passes a row that could still
   * appear. One statement, one snapshot: horizon, rows and `beyond` agree. Served by (the account's key, xid)
   * (./statements/index-keys.ts).
   * `xid` stays an xid8 in SQL (node-postgres hands it over as a string): ordered as text it would break where
   * xids gain a digit (99999 < 100000 but '99999' > '100000'). The horizon and `beyond` once per statement (a
   * materialized CTE): as a scalar subquery of the select list it ran once per row returned, across every partition
   * each time (bench/history/2026-11-22-to-26.md, "Storage"). Always on the primary, never the read replica: long
   * polls are woken by the primary's NOTIFY and re-read at once, which a lagging standby would answer with nothing
   * yet (docs/operations-and-scaling.md, "Read replica").
   */
  async feed(wabaId: string, filter: EventFilter, after: FeedPosition, limit: number): Promise<FeedPage> {
    const params = { ...filter, wabaId, afterXid: after.xid.toString(), afterId: after.id, limit };
    const { rows } = await this.db.exec(feedOf(params), params, undefined, 'partitionReads');
    const page = feedRows<RowOf<typeof findInAccounts> & { xid: string }>(rows);
    return { ...page, rows: page.rows.map(readEvent) };
  }

  /** The current horizon of the feed (see `feed`): a long poll re-reads once it has passed a notified xid. */
  async feedHorizon(): Promise<bigint> {
    const { rows } = await this.db.exec(horizonNow, {});
    return BigInt(rows[0]?.horizon ?? 0);
  }

  async findInAccounts(wabaIds: string[], id: number): Promise<Event | null> {
    if (wabaIds.length === 0) return null;
    const { rows } = await this.db.exec(findInAccounts, { id, wabaIds });
    return rows[0] ? readEvent(rows[0]) : null;
  }

  /**
   * Stores the rows whose dedupe key is not stored yet (in the last EVENTS_DEDUPE_WINDOW_DAYS), in the caller's
   * transaction: the keys' advisory locks first (held to the commit), then one insert. `at` is the stored time
   * (created_at, which picks the partition): the database's clock unless given (tests cross a week boundary with
   * it). Returns the rows inserted, by dedupe key.
   */
  async insert(tx: Tx, rows: EventRow[], at?: Date): Promise<Map<string, InsertedEvent>> {
    if (rows.length === 0) return new Map();
    const keys = rows.map((r) => dedupeHash(r.dedupeKey));
    const byHash = new Map<string, string>();
    // Exactly the insert's columns (a draft's raw item and pricing are not sent twice): the lean encodings, the stored key.
    const source = rows.map((r, i) => {
      const hex = keys[i]!.toString('hex');
      byHash.set(hex, r.dedupeKey);
      const [eventTypeCode, eventTypeOther] = encodeEventType(r.eventType);
      const [statusCode, statusOther] = encodeStatus(r.status);
      return {
        deliveryId: r.deliveryId,
        wabaId: r.wabaId,
        phoneNumberId: r.phoneNumberId,
        eventTypeCode,
        eventTypeOther,
        kindCode: encodeKind(r.kind),
        leanTitle: leanTitle(r),
        statusCode,
        statusOther,
        recipient: r.recipient,
        userId: r.userId,
        messageId: r.messageId,
        upstreamTimestamp: r.upstreamTimestamp,
        errorCode: r.errorCode,
        errorTitle: r.errorTitle,
        errorDetail: r.errorDetail,
        ...leanItem(r),
        dedupeHash: `\\x${hex}`,
        processed: r.processed,
        attempts: r.attempts,
      };
    });
    await this.db.exec(lockDedupeKeys, { keys: keys.map(dedupeLockId) }, tx);
    const { rows: inserted } = await this.db.exec(
      insertEvents,
      { rows: EVENT_INSERT.json(source), at: at ?? null, keys: dedupeUuids(keys) },
      tx,
    );
    this.fresh.stored(inserted[0]?.partition);
    return new Map(
      inserted.map((r) => {
        const dedupeKey = byHash.get(r.dedupeKey.toString('hex'))!;
        return [dedupeKey, { id: r.id, dedupeKey, createdAt: r.createdAt }];
      }),
    );
  }

  /** These deliveries' events not processed yet, oldest first; `since` bounds the scan (their arrival, less a margin). */
  async pendingOf(deliveryIds: number[], since: Date): Promise<StoredEvent[]> {
    const { rows } = await this.db.exec(pendingEvents, { deliveryIds, since });
    return rows.map(readEvent);
  }

  /** processed false → true in the caller's transaction; returns the ids this call took. */
  async claim(tx: Tx, events: StoredRef[]): Promise<Set<number>> {
    if (events.length === 0) return new Set();
    const { rows } = await this.db.exec(claimEvents, { ids: events.map((e) => e.id), oldest: oldest(events) }, tx);
    return new Set(rows.map((r) => r.id));
  }

  /** One more try counted on events that still have to wait. */
  async countWait(tx: Tx, events: StoredRef[]): Promise<void> {
    if (events.length > 0) await this.db.exec(countWait, { ids: events.map((e) => e.id), oldest: oldest(events) }, tx);
  }

  /** Deliveries holding statuses still unprocessed, created in (createdAfter, createdBefore), tried fewer than maxAttempts times. */
  async deliveriesWithWaitingStatuses(q: {
    maxAttempts: number;
    createdBefore: Date;
    createdAfter: Date;
    limit: number;
  }): Promise<number[]> {
    const { rows } = await this.db.exec(deliveriesWithWaitingStatuses, q);
    return rows.map((r) => r.deliveryId);
  }

  /**
   * The status events stored for one message (by wamid) of the account, oldest first. `since`: when the message was
   * created (no status of it is stored before; a margin covers clocks), which skips the older partitions. `tx`: a
   * snapshot shared with the read of the message (UnitOfWork.snapshot), so the two agree.
   */
  async statusHistory(
    wabaId: string,
    wamid: string,
    since?: Date,
    tx?: Tx,
  ): Promise<Pick<Event, 'status' | 'upstreamTimestamp' | 'createdAt'>[]> {
    const from = since ? new Date(since.getTime() - HISTORY_MARGIN_MS) : new Date(0);
    const { rows } = await this.db.exec(statusHistory, { wabaId, wamid, since: from }, tx);
    return rows;
  }

  /** Creates the weekly partitions missing from `from` through `through`; returns how many it made. */
  ensurePartitions(from: Date, through: Date): Promise<number> {
    return ensurePartitions(this.db, 'events', from, through);
  }

  /** Compacts one partition whose week ended before `endedBefore` (core/db/partitions.ts); null: none due. */
  compactEndedPartition(endedBefore: Date): Promise<Compaction | null> {
    return compactEndedPartition(this.db, 'events', endedBefore);
  }

  partitions(): Promise<Partition[]> {
    return partitionsOf(this.db, 'events');
  }

  /**
   * Drops the partitions wholly older than `cutoff` (retention), one transaction each: its weeks' counts in
   * `event_counts` go in the same transaction, so the totals match what is stored at every commit. Returns the
   * partitions dropped (one whose lock was not had in time is left to the next pass).
   */
  async dropPartitionsBefore(cutoff: Date): Promise<Partition[]> {
    const dropped: Partition[] = [];
    await dropDetachedLeftovers(this.db, 'events');
    for (const p of expiredPartitions(await this.partitions(), cutoff)) {
      const done = await dropPartition(this.db, 'events', p, async (tx) => {
        await this.db.exec(deleteCounts, { from: p.lowerBound, to: p.upperBound }, tx);
      });
      // A long reader holds the table: the next partitions would only wait for it too (and stall writes meanwhile).
      if (!done) break;
      dropped.push(p);
    }
    return dropped;
  }

  // ---- One contact's events (src/contacts: export, erasure) ------------------------------------

  /**
   * The account's events of the contact (its address as recipient or user id, or a status of one of `wamids`),
   * oldest first after `after` (id), inside the reader's window.
   */
  @GenerateSql(
    {
      name: 'no window',
      params: [Sample.WABA_ID, { addresses: [Sample.PHONE], wamids: [Sample.STRING] }, { afterId: 0, limit: 100 }],
    },
    {
      name: 'a window',
      params: [
        Sample.WABA_ID,
        { addresses: [Sample.PHONE], wamids: [Sample.STRING] },
        { afterId: 0, limit: 100, since: Sample.DATE, until: Sample.DATE },
      ],
    },
  )
  async pageOfContact(
    wabaId: string,
    contact: { addresses: string[]; wamids: string[] },
    q: { afterId: number; limit: number; since?: Date; until?: Date },
  ): Promise<Event[]> {
    let rows = this.db
      .on(undefined, 'partitionReads')
      .selectFrom('events')
      .select(eventColumns)
      .where('waba_id', '=', wabaId)
      .where('id', '>', q.afterId)
      .where((eb) => this.ofContact(eb, contact));
    if (q.since) rows = rows.where('created_at', '>=', q.since);
    if (q.until) rows = rows.where('created_at', '<=', q.until);
    return (await rows.orderBy('id').limit(q.limit).execute()).map(readEvent);
  }

  /**
   * Deletes up to `limit` of the contact's events of the account, every partition, in the caller's transaction
   * (event_counts follow by trigger). Returns how many; fewer than `limit`: none left.
   */
  @GenerateSql({
    params: [Sample.TX, Sample.WABA_ID, { addresses: [Sample.PHONE], wamids: [Sample.STRING] }, 500],
    rows: Sample.FOUND,
  })
  async eraseContactBatch(
    tx: Tx,
    wabaId: string,
    contact: { addresses: string[]; wamids: string[] },
    limit: number,
  ): Promise<number> {
    const db = this.db.on(tx);
    const found = await db
      .selectFrom('events')
      .select(['id', 'created_at as createdAt'])
      .where('waba_id', '=', wabaId)
      .where((eb) => this.ofContact(eb, contact))
      .limit(limit)
      .execute();
    if (found.length === 0) return 0;
    const { numDeletedRows } = await db
      .deleteFrom('events')
      .where('waba_id', '=', wabaId)
      .where((eb) => eb('id', '=', eb.fn.any(eb.val(found.map((e) => e.id)))))
      .where('created_at', '>=', oldest(found))
      .where('created_at', '<=', new Date(Math.max(...found.map((e) => e.createdAt.getTime()))))
      .executeTakeFirstOrThrow();
    return Number(numDeletedRows);
  }

  /**
   * Content retention (src/retention): up to `limit` message events (inbound, and other senders' echoes) of these
   * accounts created in [since, before) still holding their content lose it: `raw` keeps the ids, addresses, type,
   * timestamp and metadata only (and says `contentScrubbed`), the title loses its detail (a caption, a file name, a
   * reply). Returns how many; fewer than `limit` means none is left in the range.
   */
  @GenerateSql({ params: [Sample.TX, [Sample.WABA_ID], { since: null, before: Sample.DATE }, 500], rows: Sample.FOUND })
  async scrubContentBatch(
    tx: Tx,
    wabaIds: string[],
    range: { since: Date | null; before: Date },
    limit: number,
  ): Promise<number> {
    const db = this.db.on(tx);
    const found = await db
      .selectFrom('events')
      .select(['id', 'created_at as createdAt'])
      .where('waba_id', '=', (eb) => eb.fn.any(eb.val(wabaIds)))
      .where('created_at', '<', range.before)
      .where('created_at', '>=', range.since ?? new Date(0))
      .where((eb) => eb('kind', 'in', [kindCode(eb, 'inbound_message'), kindCode(eb, 'agent_message')]))
      .where((eb) => eb.not(eb('raw', '?', 'contentScrubbed')))
      .limit(limit)
      .execute();
    if (found.length === 0) return 0;
    await db
      .updateTable('events')
      .set((eb) => ({
        raw: withoutMessageContent('raw'),
        title: eb.fn<string>('split_part', ['title', eb.val(': '), eb.val(1)]),
      }))
      .where('id', '=', (eb) => eb.fn.any(eb.val(found.map((e) => e.id))))
      .where('created_at', '>=', oldest(found))
      .where('created_at', '<', range.before)
      .execute();
    return found.length;
  }

  private ofContact(
    eb: ExpressionBuilder<Database, 'events'>,
    contact: { addresses: string[]; wamids: string[] },
  ): Expression<SqlBool> {
    return eb.or([
      eb('recipient', '=', eb.fn.any(eb.val(contact.addresses))),
      eb('user_id', '=', eb.fn.any(eb.val(contact.addresses))),
      ...(contact.wamids.length > 0 ? [ofMessages(contact.wamids)] : []),
    ]);
  }
}

/** A stored event as claim and countWait need it: the id, and created_at for the partition. */
export type StoredRef = Pick<StoredEvent, 'id' | 'createdAt'>;

/**
 * Statuses of a message may be stored a little before its created_at by another host's clock. A day: generous for
 * clocks, and the bound only has to skip whole weeks.
 */
const HISTORY_MARGIN_MS = 24 * 3600_000;

function oldest(events: StoredRef[]): Date {
  return new Date(Math.min(...events.map((e) => e.createdAt.getTime())));
}
