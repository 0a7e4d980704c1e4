import { Injectable } from '@nestjs/common';
import type { Event as PrismaEvent } from '../generated/prisma/client.js';
import { EVENTS_DEDUPE_WINDOW_DAYS } from '../core/config/app-config.js';
import { skipTake } from '../core/http/pagination.js';
import { dropDetachedLeftovers, dropPartition, ensurePartitions, expiredPartitions, partitionsOf, type Partition } from '../core/prisma/partitions.js';
import { PrismaService } from '../core/prisma/prisma.service.js';
import { connectionOf, statement, type Tx } from '../core/prisma/sql.js';
import { feedRows, feedSql, sqlFilter, type FeedStatementRow, type SqlFilter } from '../core/prisma/sql-filter.js';
import type { EventDraft, EventKind } from './classify.js';
import type { FeedPosition } from './feed-cursor.js';

/** An event row as this repository reads it: 64-bit ids as JS numbers (exact up to 2^53; pool's int8 parser). */
export type Event = Omit<PrismaEvent, 'id' | 'deliveryId'> & { id: number; deliveryId: number };

export interface EventFilter {
  kind?: EventKind;
  status?: string;
  messageId?: string;
  recipient?: string;
  userId?: string;
  since?: Date;
  until?: Date;
}

const EVENT_COLUMNS = `id, delivery_id AS "deliveryId", waba_id AS "wabaId", phone_number_id AS "phoneNumberId", event_type AS "eventType",
  kind, title, status, recipient, user_id AS "userId", message_id AS "messageId", upstream_timestamp AS "upstreamTimestamp", error_code AS "errorCode",
  error_title AS "errorTitle", error_detail AS "errorDetail", raw, pricing, dedupe_key AS "dedupeKey", processed, processed_at AS "processedAt",
  attempts, created_at AS "createdAt"`;

/** An event as the worker's effects read it. */
export type StoredEvent = Pick<
  Event,
  'id' | 'deliveryId' | 'wabaId' | 'phoneNumberId' | 'eventType' | 'kind' | 'status' | 'recipient' | 'userId' | 'messageId' | 'upstreamTimestamp' | 'errorCode' | 'errorTitle' | 'errorDetail' | 'raw' | 'pricing' | 'createdAt'
>;

/** A draft to store: whether the same transaction applies it (`processed`), and the tries it already had. */
export type EventRow = EventDraft & { deliveryId: number; processed: boolean; attempts: number };

export interface InsertedEvent {
  id: number;
  dedupeKey: string;
  createdAt: Date;
}

/**
 * Dedupe across partitions, part 1: a transaction-level advisory lock per dedupe key, taken in one order (sorted
 * hashes), so that two transactions storing the same item (a redelivery processed by two workers, a retry racing the
 * original) run one after the other. A separate statement from the insert: under READ COMMITTED the insert's
 * snapshot is taken after the locks are held, so it sees what the other transaction committed.
 */
export const LOCK_DEDUPE_KEYS_SQL = `SELECT count(pg_advisory_xact_lock(h))::int AS locked
   FROM (SELECT DISTINCT hashtextextended(k, 0) AS h FROM unnest($1::text[]) AS k ORDER BY 1) AS keys`;
const lockDedupeKeys = statement('lock_dedupe_keys', LOCK_DEDUPE_KEYS_SQL);

/**
 * Part 2: one statement per chunk; an item is stored unless its key is stored in the last EVENTS_DEDUPE_WINDOW_DAYS (8; in
 * whichever weekly partitions those are: the window prunes the rest, the empty ones ahead included; a day ahead
 * covers other hosts' clocks), and once if it comes twice in the chunk.
 * That makes it once-only across retries, redeliveries and workers. created_at is $2 (the caller's clock; now()
 * when null): it decides the partition. RETURNING names the rows this statement inserted, not those stored before.
 * Exported for bench/status-floor.ts, which measures this very statement alone.
 */
export const INSERT_EVENTS_SQL = `INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, user_id, message_id,
                       upstream_timestamp, error_code, error_title, error_detail, raw, pricing, dedupe_key, processed, processed_at, attempts, created_at)
   SELECT DISTINCT ON (d."dedupeKey") d."deliveryId", d."wabaId", d."phoneNumberId", d."eventType", d.kind, d.title, d.status, d.recipient, d."userId", d."messageId",
          d."upstreamTimestamp", d."errorCode", d."errorTitle", d."errorDetail", d.raw, d.pricing, d."dedupeKey", d.processed,
          CASE WHEN d.processed THEN now() END, d.attempts, COALESCE($2::timestamptz, now())
     FROM jsonb_to_recordset($1::jsonb) AS d("deliveryId" bigint, "wabaId" text, "phoneNumberId" text, "eventType" text, kind text,
          title text, status text, recipient text, "userId" text, "messageId" text, "upstreamTimestamp" timestamptz, "errorCode" int,
          "errorTitle" text, "errorDetail" text, raw jsonb, pricing jsonb, "dedupeKey" text, processed boolean, attempts int)
    WHERE d."dedupeKey" NOT IN (
          SELECT s.dedupe_key FROM events s
           WHERE s.dedupe_key = ANY($3::text[])
             AND s.created_at >= COALESCE($2::timestamptz, now()) - interval '${EVENTS_DEDUPE_WINDOW_DAYS} days'
             AND s.created_at < COALESCE($2::timestamptz, now()) + interval '1 day')
    ORDER BY d."dedupeKey"
   RETURNING id, dedupe_key AS "dedupeKey", created_at AS "createdAt"`;
const insertEvents = statement('insert_events', INSERT_EVENTS_SQL);

const STORED_EVENT_COLUMNS = `id, delivery_id AS "deliveryId", waba_id AS "wabaId", phone_number_id AS "phoneNumberId", event_type AS "eventType",
  kind, status, recipient, user_id AS "userId", message_id AS "messageId", upstream_timestamp AS "upstreamTimestamp", error_code AS "errorCode",
  error_title AS "errorTitle", error_detail AS "errorDetail", raw, pricing, created_at AS "createdAt"`;

/** Served by the partial index over unprocessed events (delivery_id); created_at bounds it in time. */
const pendingEvents = statement(
  'pending_events',
  `SELECT ${STORED_EVENT_COLUMNS} FROM events
    WHERE delivery_id = ANY($1::bigint[]) AND NOT processed AND created_at >= $2
    ORDER BY id`,
);

/**
 * The claim of stored events (processed false → true): a concurrent or later job finds them taken. $2 (the oldest
 * created_at among them) keeps the lookup to the partitions that can hold them.
 */
const claimEvents = statement(
  'claim_events',
  `UPDATE events SET processed = true, processed_at = now() WHERE id = ANY($1::bigint[]) AND created_at >= $2 AND processed = false RETURNING id`,
);

const countWait = statement(
  'count_event_wait',
  `UPDATE events SET attempts = attempts + 1 WHERE id = ANY($1::bigint[]) AND created_at >= $2 AND processed = false`,
);

/** $3: no status of a message is stored before the message (its creation, less a margin): older partitions are skipped. */
const statusHistory = statement(
  'status_history',
  `SELECT status, upstream_timestamp AS "upstreamTimestamp", created_at AS "createdAt" FROM events
    WHERE message_id = $2 AND waba_id = $1 AND kind = 'status_update' AND created_at >= $3
    ORDER BY upstream_timestamp ASC NULLS LAST, id ASC`,
);

const findInAccounts = statement('find_event_in_accounts', `SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1 AND waba_id = ANY($2::text[])`);

const deliveriesWithWaitingStatuses = statement(
  'deliveries_with_waiting_statuses',
  `SELECT DISTINCT delivery_id AS "deliveryId" FROM events
    WHERE NOT processed AND kind = 'status_update' AND attempts < $1 AND created_at < $2 AND created_at > $3
    LIMIT $4`,
);

/** The filters as SQL on `events` ($1 is the business account), and a name per shape for prepared statements. */
function whereOf(wabaId: string, filter: EventFilter): SqlFilter {
  return sqlFilter({ sql: 'waba_id = $1', value: wabaId }, [
    ['kind', '=', filter.kind, 'k'],
    ['status', '=', filter.status, 's'],
    ['message_id', '=', filter.messageId, 'm'],
    ['recipient', '=', filter.recipient, 'r'],
    ['user_id', '=', filter.userId, 'i'],
    ['created_at', '>=', filter.since, 'f'],
    ['created_at', '<=', filter.until, 'u'],
  ]);
}

/** A page of the feed, and what a long poll needs to know about what is not in it yet. */
export interface FeedPage {
  rows: (Event & { xid: string })[];
  /** The snapshot's xmin: every transaction below it has ended, so the feed below it is final. */
  horizon: bigint;
  /** The smallest xid of the account's committed events not in the feed yet (at or above the horizon), if any. */
  beyond: bigint | undefined;
}

const horizonNow = statement('events_feed_horizon', `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon`);

/**
 * The one owner of `events` (and reader of `event_counts`, which triggers keep). Console reads take the
 * business account (wabaId) first: the caller has checked it is the tenant's. The worker's statements take
 * a Tx: storing events, claiming them and applying their effects commit together. SQL on node-postgres: 50
 * rows with their raw payloads through Prisma's client cost several milliseconds of CPU per request.
 */
@Injectable()
export class EventsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Newest first; served by the (waba_id[, kind|status|recipient|user_id], created_at desc, id desc) indexes. Page, count
   * and feed run on `partitionReads` (generic plans, see PrismaService).
   */
  async page(wabaId: string, filter: EventFilter, page: { page: number; limit: number }): Promise<{ rows: Event[]; total: number }> {
    const where = whereOf(wabaId, filter);
    const { skip, take } = skipTake(page);
    const n = where.values.length;
    const [{ rows }, total] = await Promise.all([
      this.prisma.partitionReads.query<Event>({
        name: `sql_events_page_${where.shape}`,
        text: `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        values: [...where.values, take, skip],
      }),
      this.count(wabaId, filter, where),
    ]);
    return { rows, total };
  }

  /**
   * Exact either way. Account, kind and status alone: the totals that triggers on `events` keep in
   * `event_counts` (a sum over a few rows, however many events). The selective filters (messageId, recipient,
   * userId, since/until) fall back to COUNT(*) on their indexes. `event_counts` keeps a NULL status as '', so an empty
   * status filter is counted the slow way too.
   */
  private async count(wabaId: string, filter: EventFilter, where: SqlFilter): Promise<number> {
    const maintained = filter.messageId === undefined && filter.recipient === undefined && filter.userId === undefined && !filter.since && !filter.until && filter.status !== '';
    const { rows } = maintained
      ? await this.prisma.partitionReads.query<{ n: string }>({
          name: `sql_event_counts_${where.shape}`,
          text: `SELECT COALESCE(sum(count), 0)::text AS n FROM event_counts WHERE ${where.sql}`,
          values: where.values,
        })
      : await this.prisma.partitionReads.query<{ n: string }>({
          name: `sql_events_count_${where.shape}`,
          text: `SELECT count(*)::text AS n FROM events WHERE ${where.sql}`,
          values: where.values,
        });
    return Number(rows[0]!.n);
  }

  /**
   * The feed after `after`, oldest first by (xid, id), limited to transactions below the horizon (the
   * statement snapshot's xmin): every row there is final, so a cursor never passes a row that could still
   * appear. One statement, one snapshot: horizon, rows and `beyond` agree. Served by (waba_id, xid, id).
   * `xid` stays an xid8 in SQL (node-postgres hands it over as a string): ordered as text it would break where
   * xids gain a digit (99999 < 100000 but '99999' > '100000').
   */
  async feed(wabaId: string, filter: EventFilter, after: FeedPosition, limit: number): Promise<FeedPage> {
    const where = whereOf(wabaId, filter);
    const { rows } = await this.prisma.partitionReads.query<FeedStatementRow>({
      name: `sql_events_feed_${where.shape}`,
      text: feedSql({ table: 'events', xidColumn: 'xid', columns: EVENT_COLUMNS, scope: 'waba_id = $1', where }),
      values: [...where.values, after.xid.toString(), after.id, limit],
    });
    return feedRows<Event & { xid: string }>(rows);
  }

  /** The current horizon of the feed (see `feed`): a long poll re-reads once it has passed a notified xid. */
  async feedHorizon(): Promise<bigint> {
    const { rows } = await this.prisma.pool.query<{ horizon: string }>(horizonNow([]));
    return BigInt(rows[0]!.horizon);
  }

  async findInAccounts(wabaIds: string[], id: number): Promise<Event | null> {
    if (wabaIds.length === 0) return null;
    const { rows } = await this.prisma.pool.query<Event>(findInAccounts([id, wabaIds]));
    return rows[0] ?? null;
  }

  /**
   * Stores the rows whose dedupe key is not stored yet (in the last EVENTS_DEDUPE_WINDOW_DAYS), in the caller's
   * transaction: the keys' advisory locks first (held to the commit), then one insert. `at` is the stored time
   * (created_at, which picks the partition): the database's clock unless given (tests cross a week boundary with
   * it). Returns the rows inserted, by dedupe key.
   */
  async insert(tx: Tx, rows: EventRow[], at?: Date): Promise<Map<string, InsertedEvent>> {
    if (rows.length === 0) return new Map();
    const connection = connectionOf(tx);
    const keys = rows.map((r) => r.dedupeKey);
    await connection.query(lockDedupeKeys([keys]));
    const { rows: inserted } = await connection.query<InsertedEvent>(insertEvents([JSON.stringify(rows), at ?? null, keys]));
    return new Map(inserted.map((r) => [r.dedupeKey, r]));
  }

  /** These deliveries' events not processed yet, oldest first; `since` bounds the scan (their arrival, less a margin). */
  async pendingOf(deliveryIds: number[], since: Date): Promise<StoredEvent[]> {
    const { rows } = await this.prisma.pool.query<StoredEvent>(pendingEvents([deliveryIds, since]));
    return rows;
  }

  /** processed false → true in the caller's transaction; returns the ids this call took. */
  async claim(tx: Tx, events: StoredRef[]): Promise<Set<number>> {
    if (events.length === 0) return new Set();
    const { rows } = await connectionOf(tx).query<{ id: number }>(claimEvents([events.map((e) => e.id), oldest(events)]));
    return new Set(rows.map((r) => r.id));
  }

  /** One more try counted on events that still have to wait. */
  async countWait(tx: Tx, events: StoredRef[]): Promise<void> {
    if (events.length > 0) await connectionOf(tx).query(countWait([events.map((e) => e.id), oldest(events)]));
  }

  /** Deliveries holding statuses still unprocessed, created in (createdAfter, createdBefore), tried fewer than maxAttempts times. */
  async deliveriesWithWaitingStatuses(q: { maxAttempts: number; createdBefore: Date; createdAfter: Date; limit: number }): Promise<number[]> {
    const { rows } = await this.prisma.pool.query<{ deliveryId: number }>(deliveriesWithWaitingStatuses([q.maxAttempts, q.createdBefore, q.createdAfter, q.limit]));
    return rows.map((r) => r.deliveryId);
  }

  /**
   * The status events stored for one message (by wamid) of the account, oldest first. `since`: when the message was
   * created (no status of it is stored before; a margin covers clocks), which skips the older partitions. `tx`: a
   * snapshot shared with the read of the message (SqlUnitOfWork.snapshot), so the two agree.
   */
  async statusHistory(wabaId: string, wamid: string, since?: Date, tx?: Tx): Promise<Pick<Event, 'status' | 'upstreamTimestamp' | 'createdAt'>[]> {
    const from = since ? new Date(since.getTime() - HISTORY_MARGIN_MS) : new Date(0);
    const query = statusHistory([wabaId, wamid, from]);
    const { rows } = await (tx ? connectionOf(tx) : this.prisma.pool).query<Pick<Event, 'status' | 'upstreamTimestamp' | 'createdAt'>>(query);
    return rows;
  }

  /** Creates the weekly partitions missing from `from` through `through`; returns how many it made. */
  ensurePartitions(from: Date, through: Date): Promise<number> {
    return ensurePartitions(this.prisma.pool, 'events', from, through);
  }

  partitions(): Promise<Partition[]> {
    return partitionsOf(this.prisma.pool, 'events');
  }

  /**
   * Drops the partitions wholly older than `cutoff` (retention), one transaction each: its weeks' counts in
   * `event_counts` go in the same transaction, so the totals match what is stored at every commit. Returns the
   * partitions dropped (one whose lock was not had in time is left to the next pass).
   */
  async dropPartitionsBefore(cutoff: Date): Promise<Partition[]> {
    const dropped: Partition[] = [];
    await dropDetachedLeftovers(this.prisma.pool, 'events');
    for (const p of expiredPartitions(await this.partitions(), cutoff)) {
      const done = await dropPartition(this.prisma.pool, 'events', p, (client) =>
        client.query('DELETE FROM event_counts WHERE bucket >= COALESCE($1, \'-infinity\'::timestamptz) AND bucket < $2', [p.lowerBound, p.upperBound]).then(() => undefined),
      );
      // A long reader holds the table: the next partitions would only wait for it too (and stall writes meanwhile).
      if (!done) break;
      dropped.push(p);
    }
    return dropped;
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
