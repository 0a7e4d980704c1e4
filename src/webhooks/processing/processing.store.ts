import { Injectable } from '@nestjs/common';
import type pg from 'pg';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { statement } from '../../core/prisma/sql.js';
import type { EventDraft } from './classify.js';
import type { StoredEvent } from './effects/event-effect.js';

/** Events are written after their delivery; the margin absorbs clock differences between API and worker hosts. */
const CLOCK_MARGIN_MS = 10 * 60 * 1000;

export interface InsertedEvent {
  id: number;
  dedupeKey: string;
  createdAt: Date;
}

export interface StoredDelivery {
  id: number;
  status: string;
  rawBody: Buffer;
  receivedAt: Date;
  eventCount: number | null;
}

const findDelivery = statement(
  'find_delivery',
  `SELECT id, status, raw_body AS "rawBody", received_at AS "receivedAt", event_count AS "eventCount"
     FROM webhook_deliveries WHERE id = $1`,
);

/**
 * One statement per chunk; the unique dedupe_key makes it once-only across retries, redeliveries and workers.
 * `processed` is true for events whose effect the same transaction applies; RETURNING names the rows this
 * statement inserted (not those stored before).
 */
const insertEvents = statement(
  'insert_events',
  `INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                       upstream_timestamp, error_code, error_title, error_detail, raw, dedupe_key, processed, processed_at, attempts)
   SELECT $1, d."wabaId", d."phoneNumberId", d."eventType", d.kind, d.title, d.status, d.recipient, d."messageId",
          d."upstreamTimestamp", d."errorCode", d."errorTitle", d."errorDetail", d.raw, d."dedupeKey", d.processed,
          CASE WHEN d.processed THEN now() END, d.attempts
     FROM jsonb_to_recordset($2::jsonb) AS d("wabaId" text, "phoneNumberId" text, "eventType" text, kind text, title text,
          status text, recipient text, "messageId" text, "upstreamTimestamp" timestamptz, "errorCode" int, "errorTitle" text,
          "errorDetail" text, raw jsonb, "dedupeKey" text, processed boolean, attempts int)
   ON CONFLICT (dedupe_key) DO NOTHING
   RETURNING id, dedupe_key AS "dedupeKey", created_at AS "createdAt"`,
);

const STORED_EVENT_COLUMNS = `id, waba_id AS "wabaId", phone_number_id AS "phoneNumberId", event_type AS "eventType", kind, status,
  recipient, message_id AS "messageId", upstream_timestamp AS "upstreamTimestamp", error_code AS "errorCode",
  error_title AS "errorTitle", error_detail AS "errorDetail", raw, created_at AS "createdAt"`;

/** Served by the delivery_id index; created_at bounds it to the delivery's partition of time. */
const pendingEvents = statement(
  'pending_events',
  `SELECT ${STORED_EVENT_COLUMNS} FROM events
    WHERE delivery_id = $1 AND processed = false AND created_at >= $2
    ORDER BY id`,
);

/** The claim of stored events (processed false → true): a concurrent or later job finds them taken. */
export const claimEvents = statement(
  'claim_events',
  `UPDATE events SET processed = true, processed_at = now() WHERE id = ANY($1::int[]) AND processed = false RETURNING id`,
);

const markProcessed = statement(
  'mark_delivery_processed',
  `UPDATE webhook_deliveries
      SET status = 'processed', processed_at = now(), event_count = $2, last_error = NULL, attempts = attempts + 1
    WHERE id = $1 AND status <> 'processed'`,
);

/**
 * The worker's reads and writes of deliveries and events, in SQL on node-postgres: this is the hot path of
 * webhook processing (a handful of statements per delivery), where Prisma's per-query cost dominated.
 */
@Injectable()
export class ProcessingStore {
  constructor(private readonly prisma: PrismaService) {}

  async findDelivery(deliveryId: number): Promise<StoredDelivery | null> {
    const { rows } = await this.prisma.pool.query<StoredDelivery>(findDelivery([deliveryId]));
    return rows[0] ?? null;
  }

  /**
   * Stores the drafts not stored yet, in the caller's transaction. `applied` are the drafts whose effect the
   * caller applies in that transaction (stored as processed), `waiting` those it tried and must try again.
   * Inserted in dedupe-key order, so that two deliveries carrying the same items never wait on each other in
   * a cycle. Returns the rows inserted, by dedupe key.
   */
  async insertEvents(
    client: pg.PoolClient,
    deliveryId: number,
    drafts: EventDraft[],
    marks: { applied: (d: EventDraft) => boolean; waiting: (d: EventDraft) => boolean },
  ): Promise<Map<string, InsertedEvent>> {
    const rows = drafts
      .map((d) => ({ ...d, processed: marks.applied(d), attempts: marks.waiting(d) ? 1 : 0 }))
      .sort((a, b) => (a.dedupeKey < b.dedupeKey ? -1 : a.dedupeKey > b.dedupeKey ? 1 : 0));
    const inserted = await client.query<InsertedEvent>(insertEvents([deliveryId, JSON.stringify(rows)]));
    return new Map(inserted.rows.map((r) => [r.dedupeKey, r]));
  }

  /** This delivery's events not processed yet, oldest first. */
  async pendingEvents(deliveryId: number, receivedAt: Date): Promise<StoredEvent[]> {
    const since = new Date(receivedAt.getTime() - CLOCK_MARGIN_MS);
    const { rows } = await this.prisma.pool.query<StoredEvent>(pendingEvents([deliveryId, since]));
    return rows;
  }

  /** Marks events that have nothing to apply as processed; returns how many this call marked. */
  async claimWithoutEffect(eventIds: number[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const { rowCount } = await this.prisma.pool.query(claimEvents([eventIds]));
    return rowCount ?? 0;
  }

  async markProcessed(deliveryId: number, eventCount: number): Promise<void> {
    await this.prisma.pool.query(markProcessed([deliveryId, eventCount]));
  }
}
