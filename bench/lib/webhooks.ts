// Signed status webhooks in Meta's format, pre-generated (distinct wamids/timestamps, so that every item is a
// distinct event), the messages they refer to (so that every status applies and the worker can finish), the
// polling that tells when everything is processed, and the exact counts afterwards.
import type { RequestSpec } from 'autocannon';
import { signedDelivery, type SignedDelivery } from '../../simulator/payloads/signature.js';
import {
  phoneOf,
  statusItem,
  statusesWebhook,
  type StatusItem,
  type WebhookPhone,
} from '../../simulator/payloads/webhooks.js';
import type pg from 'pg';

export const STATUSES = ['sent', 'delivered', 'read'] as const;
/** The first message id the statuses' callback data name (StatusPlan.item). */
const CALLBACK_ID_BASE = 900_000_000_000;

/** A signed POST, pre-generated. */
export type Delivery = SignedDelivery;

/** The bench tenant's number as its webhooks name it. */
export const benchPhone = (phoneNumberId: string): WebhookPhone => phoneOf(phoneNumberId, '15550001111');

/** The envelope Meta posts for field `messages` (the simulator's own builder), with these statuses. */
export function statusPayload(wabaId: string, phoneNumberId: string, statuses: StatusItem[]): Buffer {
  return Buffer.from(JSON.stringify(statusesWebhook(wabaId, benchPhone(phoneNumberId), statuses)));
}

/**
 * One phase of statuses: `messages` messages, each getting sent → delivered → read; event j concerns message
 * j % messages with status ⌊j / messages⌋, so that concurrent deliveries touch different messages and the
 * three statuses of one message are far apart in the stream (as with real traffic).
 */
export class StatusPlan {
  readonly messages: number;
  readonly baseTs = Math.floor(Date.now() / 1000) - 3600;

  constructor(
    readonly tag: string,
    readonly events: number,
  ) {
    this.messages = Math.ceil(events / STATUSES.length);
  }

  wamid(i: number): string {
    return `wamid.${this.tag}.${i}`;
  }

  item(j: number): StatusItem {
    const msg = j % this.messages;
    const s = Math.floor(j / this.messages);
    const status = STATUSES[s]!;
    const pricing = status !== 'read' ? { pricing: { billable: true, pricing_model: 'PMP', category: 'utility' } } : {};
    // As every status of a message sent through the service: the send's callback data (`bm:<message id>`, an id no
    // message of the bench has, so that the statuses go to their messages by wamid, as statuses after the first do).
    const callback = { biz_opaque_callback_data: `bm:${CALLBACK_ID_BASE + msg}` };
    return statusItem(this.wamid(msg), status, this.baseTs + s, `4477${String(msg).padStart(8, '0')}`, {
      ...pricing,
      ...callback,
    });
  }

  /** Pre-generated deliveries of `perDelivery` statuses each. */
  deliveries(wabaId: string, phoneNumberId: string, perDelivery: number, secret: string): Delivery[] {
    const out: Delivery[] = [];
    for (let j = 0; j < this.events; j += perDelivery) {
      const items: StatusItem[] = [];
      for (let k = j; k < Math.min(j + perDelivery, this.events); k++) items.push(this.item(k));
      out.push(signedDelivery(statusesWebhook(wabaId, benchPhone(phoneNumberId), items), secret));
    }
    return out;
  }

  /** How many messages end in each status once every event is applied. */
  expectedMessageStatuses(): Record<string, number> {
    const out: Record<string, number> = {};
    for (let msg = 0; msg < this.messages; msg++) {
      let last = -1;
      for (let s = 0; s < STATUSES.length; s++) if (s * this.messages + msg < this.events) last = s;
      const status = STATUSES[last]!;
      out[status] = (out[status] ?? 0) + 1;
    }
    return out;
  }

  /** The messages the statuses refer to, as our send path leaves them: status sent, wamid stored. */
  async seedMessages(db: pg.Pool, businessAccountId: string, phoneNumberId: string): Promise<void> {
    await db.query(
      `INSERT INTO messages (business_account_id, phone_number_id, "to", type, template_name, template_language, content,
                             status, upstream_message_id, sent_at, created_at, updated_at)
       SELECT $1::uuid, $2, '4477' || lpad(i::text, 8, '0'), 'template', 'hello_world', 'en_US', '{"components":[]}'::jsonb,
              'sent', $3 || i, now(), now(), now()
         FROM generate_series(0, $4::int - 1) AS i`,
      [businessAccountId, phoneNumberId, `wamid.${this.tag}.`, this.messages],
    );
  }

  async messageStatuses(db: pg.Pool, businessAccountId: string): Promise<Record<string, number>> {
    const r = await db.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM messages WHERE business_account_id = $1 AND upstream_message_id LIKE $2 GROUP BY status`,
      [businessAccountId, `wamid.${this.tag}.%`],
    );
    return Object.fromEntries(r.rows.map((x) => [x.status, Number(x.n)]));
  }
}

/** An autocannon request that posts the pre-generated deliveries in order, each exactly once (use with `amount`). */
export function deliveryRequests(
  deliveries: Delivery[],
  order?: number[],
): { requests: RequestSpec[]; issued: () => number } {
  let next = 0;
  const requests: RequestSpec[] = [
    {
      method: 'POST',
      path: '/webhooks/whatsapp',
      setupRequest: (req) => {
        const i = order ? order[next % order.length]! : next % deliveries.length;
        next++;
        const d = deliveries[i]!;
        return {
          ...req,
          body: d.body,
          headers: { ...req.headers, 'content-type': 'application/json', 'x-hub-signature-256': d.signature },
        };
      },
    },
  ];
  return { requests, issued: () => next };
}

export interface ProcessingOutcome {
  /** Seconds from the end of the load until every expected event was stored and processed (null: not within the limit). */
  allProcessedAfterS: number | null;
  deliveriesStored: number;
  deliveriesProcessed: number;
  deliveriesFailed: number;
  eventsStored: number;
  eventsDistinct: number;
  eventsProcessed: number;
}

/**
 * Polls until the phase's deliveries (ids above `afterDeliveryId`) are processed and its events (wamids with the
 * plan's tag) are all stored and processed, or `limitMs` passes. Cheap queries: the deliveries' primary key
 * range first, the events only once the deliveries are done.
 */
export async function waitProcessed(
  db: pg.Pool,
  opts: {
    afterDeliveryId: number;
    deliveries: number;
    wabaId: string;
    tag: string;
    events: number;
    loadEndedAt: number;
    limitMs: number;
  },
): Promise<ProcessingOutcome> {
  const deadline = Date.now() + opts.limitMs;
  let doneAt: number | null = null;
  for (;;) {
    const d = await deliveryCounts(db, opts.afterDeliveryId);
    if (d.processed + d.failed >= opts.deliveries) {
      const e = await eventCounts(db, opts.wabaId, opts.tag);
      if (e.processed >= opts.events) {
        doneAt = Date.now();
        break;
      }
    }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const d = await deliveryCounts(db, opts.afterDeliveryId);
  const e = await eventCounts(db, opts.wabaId, opts.tag);
  return {
    allProcessedAfterS: doneAt === null ? null : (doneAt - opts.loadEndedAt) / 1000,
    deliveriesStored: d.stored,
    deliveriesProcessed: d.processed,
    deliveriesFailed: d.failed,
    eventsStored: e.stored,
    eventsDistinct: e.distinct,
    eventsProcessed: e.processed,
  };
}

export async function maxDeliveryId(db: pg.Pool): Promise<number> {
  // A delivery is in the inbox (waiting) or the weekly table (processed), with one id sequence.
  const r = await db.query<{ id: number | null }>(
    'SELECT greatest((SELECT max(id) FROM webhook_inbox), (SELECT max(id) FROM webhook_deliveries)) AS id',
  );
  return r.rows[0]?.id ?? 0;
}

async function deliveryCounts(
  db: pg.Pool,
  after: number,
): Promise<{ stored: number; processed: number; failed: number }> {
  const r = await db.query<{ stored: string; processed: string; failed: string }>(
    `SELECT count(*) AS stored, count(*) FILTER (WHERE status = 'processed') AS processed, count(*) FILTER (WHERE status = 'failed') AS failed
       FROM (SELECT status FROM webhook_inbox WHERE id > $1 UNION ALL SELECT status FROM webhook_deliveries WHERE id > $1) d`,
    [after],
  );
  const row = r.rows[0]!;
  return { stored: Number(row.stored), processed: Number(row.processed), failed: Number(row.failed) };
}

async function eventCounts(
  db: pg.Pool,
  wabaId: string,
  tag: string,
): Promise<{ stored: number; distinct: number; processed: number }> {
  const r = await db.query<{ stored: string; distinct: string; processed: string }>(
    `SELECT count(*) AS stored, count(DISTINCT (message_id, status, upstream_timestamp)) AS distinct,
            count(*) FILTER (WHERE processed) AS processed
       FROM events WHERE message_id LIKE $2 AND waba_id = $1`,
    [wabaId, `wamid.${tag}.%`],
  );
  const row = r.rows[0]!;
  return { stored: Number(row.stored), distinct: Number(row.distinct), processed: Number(row.processed) };
}
