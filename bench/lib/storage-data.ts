// Synthetic rows for bench/storage.ts, generated inside PostgreSQL (INSERT … SELECT generate_series: no row crosses
// the wire), in the shapes the service stores them. The same statements fill the schema before and after migration
// storage_bigint_partitions (they name the columns both shapes have).
//
// Events: row i belongs to "group" g = i / 20 (a burst of one conversation: 5 outbound messages with their sent,
// delivered and read statuses, 4 inbound messages, and every 10th group a template status, every 10th an account
// update instead of the last inbound one). 2 % of the messages fail (their third status is `failed`, with Meta's
// error). One recipient per group, so a recipient has ~20 events however many are stored (more traffic means more
// customers, not more events per customer). The group's business account is one of the accounts, by a hash of g
// through `slots` (1,000 slots shared out by weight: skew). created_at runs linearly from t0 to t0 + span over the
// i of one load (a stage), so any stage is spread over the whole window and each partition is in time order within a
// stage, as rows arriving in time order would be.
import type pg from 'pg';
import { leanItem } from '../../src/events/statements/lean-encoding.js';

export interface Accounts {
  wabaIds: string[];
  phoneNumberIds: string[];
  /** 1,000 entries: slot → index into wabaIds (1-based, for SQL). */
  slots: number[];
  /** Share of the rows per account (same order as wabaIds). */
  shares: number[];
}

/**
 * `count` accounts with Zipf-like skew (weight 1 / rank^1.1): with 20 accounts the largest holds ~30 % of the rows,
 * the smallest ~1 %.
 */
export function accounts(count: number, prefix = '3100'): Accounts {
  const weights = Array.from({ length: count }, (_, k) => 1 / (k + 1) ** 1.1);
  const sum = weights.reduce((a, b) => a + b, 0);
  const slots: number[] = [];
  let acc = 0;
  for (let k = 0; k < count; k++) {
    acc += (weights[k]! / sum) * 1000;
    while (slots.length < Math.round(acc)) slots.push(k + 1);
  }
  while (slots.length < 1000) slots.push(count);
  const shares = Array.from({ length: count }, (_, k) => slots.filter((s) => s === k + 1).length / 1000);
  return {
    wabaIds: Array.from({ length: count }, (_, k) => `${prefix}${String(k + 1).padStart(11, '0')}`),
    phoneNumberIds: Array.from({ length: count }, (_, k) => `4020${String(k + 1).padStart(11, '0')}`),
    slots,
    shares,
  };
}

/**
 * The worker's transaction (WEBHOOK_EVENT_CHUNK, 500 by default): the rows one transaction stores share created_at
 * (now() at its start) and xid, and the per-account indexes keep them as one entry, read back sorted by id
 * (docs/storage.md, "The account's key in the indexes"). The loads of the queries part go in chunks of this size.
 */
export const TRANSACTION_ROWS = 500;

/**
 * $1..$2: the i to insert; $3 t0, $4 the stage's first i, $5 the stage's row count, $6 span in seconds (row i is
 * created at t0 + (i - $4) / $5 * span, i rounded down to its transaction's first); $7 waba ids, $8 slots, $9 phone number ids; $10: only rows created before
 * it (a refill of dropped weeks), 'infinity' otherwise.
 */
const EVENTS_SELECT = `
SELECT i / 4 AS delivery_id, w.waba AS waba_id, w.phone AS phone_number_id, v.event_type, v.kind, v.title, v.status,
       v.rcpt AS recipient, v.wamid AS message_id, x.at - interval '2 seconds' AS upstream_timestamp, v.error_code,
       v.error_title, v.error_detail, v.raw, v.pricing, v.dedupe_key, true AS processed, x.at AS processed_at, x.at AS created_at
  FROM generate_series($1::bigint, $2::bigint) AS i
 CROSS JOIN LATERAL (SELECT $3::timestamptz + ((i / ${TRANSACTION_ROWS} * ${TRANSACTION_ROWS} - $4::bigint)::float8 / $5::bigint * $6::float8) * interval '1 second' AS at) AS x
 CROSS JOIN LATERAL (SELECT i / 20 AS g, (i % 20)::int AS r, extract(epoch FROM x.at)::bigint::text AS ts) AS k
 CROSS JOIN LATERAL (SELECT ($8::int[])[1 + (k.g * 2654435761 % 4294967296 % 1000)::int] AS a) AS s
 CROSS JOIN LATERAL (SELECT ($7::text[])[s.a] AS waba, ($9::text[])[s.a] AS phone,
                            CASE WHEN k.r < 15 THEN 0 WHEN k.r < 19 OR k.g % 10 > 1 THEN 1 WHEN k.g % 10 = 0 THEN 2 ELSE 3 END AS kc,
                            k.g * 5 + k.r / 3 AS m) AS w
 CROSS JOIN LATERAL (SELECT CASE WHEN w.kc = 0 THEN 'wamid.HBgMNDQ3' || lpad(to_hex(w.m), 12, '0') || 'FQIAERgSQzA2RjI1QjQ0'
                                 WHEN w.kc = 1 THEN 'wamid.HBgMNDQ3' || lpad(to_hex(i), 12, '0') || 'FQIAEhgUM0FBQ0RGMjY0' END AS wamid,
                            CASE WHEN w.kc = 0 THEN CASE WHEN k.r % 3 = 2 AND w.m % 50 = 0 THEN 'failed' ELSE (ARRAY['sent','delivered','read'])[1 + k.r % 3] END END AS status,
                            CASE WHEN w.kc <= 1 THEN (447000000000 + k.g)::text END AS rcpt) AS y
 CROSS JOIN LATERAL (SELECT CASE WHEN w.kc <= 1 THEN 'messages' WHEN w.kc = 2 THEN 'message_template_status_update' ELSE 'account_update' END AS event_type,
                            (ARRAY['status_update','inbound_message','template_status','account_update'])[1 + w.kc] AS kind,
                            CASE w.kc WHEN 0 THEN CASE y.status WHEN 'sent' THEN 'Message sent' WHEN 'delivered' THEN 'Message delivered' WHEN 'read' THEN 'Message read'
                                                                 ELSE 'Message failed: Re-engagement message (131047)' END
                                      WHEN 1 THEN 'Inbound text from ' || y.rcpt
                                      WHEN 2 THEN 'Template order_update (en_US): APPROVED'
                                      ELSE 'Account update: VERIFIED_ACCOUNT' END AS title,
                            y.status, y.rcpt, y.wamid,
                            CASE WHEN y.status = 'failed' THEN 131047 END AS error_code,
                            CASE WHEN y.status = 'failed' THEN 'Re-engagement message' END AS error_title,
                            CASE WHEN y.status = 'failed' THEN 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.' END AS error_detail,
                            CASE w.kc
                              WHEN 0 THEN jsonb_build_object('id', y.wamid, 'status', y.status, 'timestamp', k.ts, 'recipient_id', y.rcpt,
                                            'pricing', jsonb_build_object('billable', true, 'pricing_model', 'PMP', 'category', 'utility', 'type', 'regular'),
                                            'metadata', jsonb_build_object('display_phone_number', '15550001111', 'phone_number_id', w.phone))
                                          || CASE WHEN y.status = 'failed' THEN jsonb_build_object('errors', jsonb_build_array(jsonb_build_object('code', 131047, 'title', 'Re-engagement message'))) ELSE '{}' END
                              WHEN 1 THEN jsonb_build_object('id', y.wamid, 'from', y.rcpt, 'type', 'text', 'timestamp', k.ts,
                                            'text', jsonb_build_object('body', 'Hello, is my parcel on its way? Order ' || (k.g % 100000)),
                                            'contact', jsonb_build_object('wa_id', y.rcpt, 'profile', jsonb_build_object('name', 'Ana Pereira')),
                                            'metadata', jsonb_build_object('display_phone_number', '15550001111', 'phone_number_id', w.phone))
                              WHEN 2 THEN jsonb_build_object('event', 'APPROVED', 'message_template_id', 1234567890 + k.g % 1000, 'message_template_name', 'order_update',
                                            'message_template_language', 'en_US', 'reason', 'NONE', 'message_template_category', 'UTILITY')
                              ELSE jsonb_build_object('event', 'VERIFIED_ACCOUNT', 'phone_number', '15550001111', 'waba_info', jsonb_build_object('waba_id', w.waba))
                            END AS raw,
                            CASE WHEN w.kc = 0 AND y.status <> 'failed' THEN '{"type": "regular", "billable": true, "category": "utility", "pricing_model": "PMP"}'::jsonb END AS pricing,
                            CASE w.kc WHEN 0 THEN 'status:' || y.wamid || ':' || y.status || ':' || k.ts
                                      WHEN 1 THEN 'inbound:' || y.wamid
                                      WHEN 2 THEN 'message_template_status_update:' || w.waba || ':' || k.ts || ':' || to_hex(i * 2654435761 % 4294967296)
                                      ELSE 'account_update:' || w.waba || ':' || k.ts || ':' || to_hex(i * 2654435761 % 4294967296) END AS dedupe_key) AS v
 WHERE x.at < $10::timestamptz`;

/** The rows in the shape before migration lean_events (the "upgrade" part fills that schema with them). */
export const EVENTS_SQL_BEFORE = `
INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                    upstream_timestamp, error_code, error_title, error_detail, raw, pricing, dedupe_key, processed, processed_at, created_at)
SELECT delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
       upstream_timestamp, error_code, error_title, error_detail, raw, pricing, dedupe_key, processed, processed_at, created_at
  FROM (${EVENTS_SELECT}) e`;

/** The same rows in today's lean shape, encoded by migration lean_events' own SQL functions. */
export const EVENTS_SQL = `
INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, event_type_other, kind, title, status, status_other,
                    recipient, message_id, upstream_timestamp, error_code, error_title, error_detail, raw, dedupe_key, processed, created_at)
SELECT delivery_id, waba_id, phone_number_id, events_type_code(event_type), NULL, events_kind_code(kind),
       CASE WHEN kind = 'status_update' AND title = events_status_title(status, error_title, error_code) THEN NULL ELSE title END,
       events_status_code(status), NULL, recipient, message_id, upstream_timestamp, error_code, error_title, error_detail,
       events_raw_lean(raw, kind = 'status_update', message_id, status, recipient), events_dedupe_hash(dedupe_key), processed, created_at
  FROM (${EVENTS_SELECT}) e`;

export interface Stage {
  /** The first and last i of the stage. */
  from: number;
  to: number;
  t0: Date;
  spanS: number;
}

/** The nine parameters every generator here shares ($1..$9). */
export function baseValues(stage: Stage, from: number, to: number, a: Accounts): unknown[] {
  return [from, to, stage.t0, stage.from, stage.to - stage.from + 1, stage.spanS, a.wabaIds, a.slots, a.phoneNumberIds];
}

/**
 * Loads the stage's rows (or the i in `range`) with `sql` (EVENTS_SQL unless given; `extra` are its parameters after
 * the nine shared ones: for EVENTS_SQL the "created before" bound, 'infinity' by default) in chunks of `chunk` rows,
 * `parallel` statements at a time, each on its own connection with synchronous_commit off; prints a progress line
 * every few seconds with the rows per second.
 */
export async function loadRows(
  pool: pg.Pool,
  stage: Stage,
  a: Accounts,
  o: {
    sql?: string;
    extra?: unknown[];
    chunk?: number;
    parallel?: number;
    label?: string;
    log: (m: string) => void;
    range?: [number, number];
  },
): Promise<{ rows: number; seconds: number }> {
  const sql = o.sql ?? EVENTS_SQL;
  const extra = o.extra ?? (sql === EVENTS_SQL || sql === EVENTS_SQL_BEFORE ? ['infinity'] : []);
  const chunk = o.chunk ?? 100_000;
  const [first, last] = o.range ?? [stage.from, stage.to];
  const jobs: [number, number][] = [];
  for (let f = first; f <= last; f += chunk) jobs.push([f, Math.min(f + chunk - 1, last)]);
  const t0 = Date.now();
  let rows = 0;
  let next = 0;
  let done = 0;
  let lastPrint = t0;
  const runner = async () => {
    const client = await pool.connect();
    try {
      await client.query('SET synchronous_commit = off');
      for (let j = next++; j < jobs.length; j = next++) {
        const [f, t] = jobs[j]!;
        const r = await client.query(sql, [...baseValues(stage, f, t, a), ...extra]);
        rows += r.rowCount ?? 0;
        done++;
        const now = Date.now();
        if (now - lastPrint > 5000 || done === jobs.length) {
          lastPrint = now;
          o.log(
            `${o.label ?? 'load'}: ${fmtInt(rows)} rows (${done}/${jobs.length} chunks) in ${((now - t0) / 1000).toFixed(0)} s · ${fmtInt(rows / ((now - t0) / 1000))} rows/s`,
          );
        }
      }
    } finally {
      client.release();
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.parallel ?? 2, jobs.length) }, runner));
  return { rows, seconds: (Date.now() - t0) / 1000 };
}

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

/** An organization and one business account per waba id (messages need them); returns the accounts' uuids. */
export async function insertAccounts(db: pg.Pool | pg.Client, a: Accounts): Promise<string[]> {
  const org = (
    await db.query<{ id: string }>(
      `INSERT INTO organizations (id, name) VALUES (gen_random_uuid(), 'storage bench') RETURNING id`,
    )
  ).rows[0]!.id;
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO business_accounts (id, organization_id, waba_id, name, access_token_encrypted, updated_at)
     SELECT gen_random_uuid(), $1, w, 'Account ' || w, 'v1:x', now() FROM unnest($2::text[]) WITH ORDINALITY AS t(w, n) ORDER BY n RETURNING id`,
    [org, a.wabaIds],
  );
  return rows.map((r) => r.id);
}

/** Outbound messages (template sends in their final statuses), with the parameters of EVENTS_SQL ($1..$9) and $10 the accounts' uuids. */
export const MESSAGES_SQL = `
INSERT INTO messages (business_account_id, phone_number_id, "to", type, template_name, template_language, content, status, upstream_message_id,
                      error_code, error_title, error_category, accepted_at, sent_at, delivered_at, read_at, failed_at,
                      pricing_model, pricing_category, pricing_type, pricing_billable, created_at, updated_at)
SELECT ($10::uuid[])[s.a], ($9::text[])[s.a], (447000000000 + i / 5)::text, 'template', 'order_update', 'en_US',
       jsonb_build_object('components', jsonb_build_array(jsonb_build_object('type', 'body', 'parameters', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'A-' || i))))),
       CASE WHEN i % 50 = 0 THEN 'failed' WHEN i % 4 = 0 THEN 'delivered' ELSE 'read' END,
       'wamid.HBgMNDQ3' || lpad(to_hex(i), 12, '0') || 'FQIAERgSQzA2RjI1QjQ0',
       CASE WHEN i % 50 = 0 THEN 131047 END, CASE WHEN i % 50 = 0 THEN 'Re-engagement message' END, CASE WHEN i % 50 = 0 THEN 'recipient' END,
       x.at, x.at + interval '1 second', CASE WHEN i % 50 <> 0 THEN x.at + interval '3 seconds' END,
       CASE WHEN i % 50 <> 0 AND i % 4 <> 0 THEN x.at + interval '60 seconds' END, CASE WHEN i % 50 = 0 THEN x.at + interval '2 seconds' END,
       'PMP', 'utility', 'regular', true, x.at, x.at + interval '60 seconds'
  FROM generate_series($1::bigint, $2::bigint) AS i
 CROSS JOIN LATERAL (SELECT $3::timestamptz + ((i / ${TRANSACTION_ROWS} * ${TRANSACTION_ROWS} - $4::bigint)::float8 / $5::bigint * $6::float8) * interval '1 second' AS at) AS x
 CROSS JOIN LATERAL (SELECT ($8::int[])[1 + ((i / 5) * 2654435761 % 4294967296 % 1000)::int] AS a) AS s
 WHERE $7::text[] IS NOT NULL`;

/**
 * Webhook deliveries as the receiver stores them (a single-status body of ~700 bytes, signed), with the parameters
 * of EVENTS_SQL ($1..$9): processed, 0.2 % dead letters (failed after 5 tries), 0.002 % still `received`.
 */
export const DELIVERIES_SQL = `
INSERT INTO webhook_deliveries (raw_body, signature, waba_ids, batch_id, status, attempts, last_error, event_count, received_at, processed_at)
SELECT convert_to(jsonb_build_object('object', 'whatsapp_business_account', 'entry', jsonb_build_array(jsonb_build_object(
         'id', w.waba, 'changes', jsonb_build_array(jsonb_build_object('field', 'messages', 'value', jsonb_build_object(
           'messaging_product', 'whatsapp',
           'metadata', jsonb_build_object('display_phone_number', '15550001111', 'phone_number_id', w.phone),
           'statuses', jsonb_build_array(jsonb_build_object(
             'id', 'wamid.HBgMNDQ3' || lpad(to_hex(i / 3), 12, '0') || 'FQIAERgSQzA2RjI1QjQ0', 'status', (ARRAY['sent','delivered','read'])[1 + i % 3],
             'timestamp', extract(epoch FROM x.at)::bigint::text, 'recipient_id', (447000000000 + i / 15)::text,
             'conversation', jsonb_build_object('id', lpad(to_hex(i / 15), 32, 'c0ffee'), 'origin', jsonb_build_object('type', 'utility')),
             'pricing', jsonb_build_object('billable', true, 'pricing_model', 'PMP', 'category', 'utility', 'type', 'regular')))))))))::text, 'UTF8'),
       'sha256=' || lpad(to_hex(i * 2654435761 % 4294967296), 64, '0'),
       ARRAY[w.waba], 'b' || (i / 20),
       CASE WHEN i % 500 = 7 THEN 'failed' WHEN i % 50000 = 49999 THEN 'received' ELSE 'processed' END,
       CASE WHEN i % 500 = 7 THEN 5 WHEN i % 50000 = 49999 THEN 0 ELSE 1 END,
       CASE WHEN i % 500 = 7 THEN 'simulated dead letter: upstream lookup failed 5 times' END,
       CASE WHEN i % 50000 = 49999 THEN NULL ELSE 1 END,
       x.at, CASE WHEN i % 500 <> 7 AND i % 50000 <> 49999 THEN x.at + interval '40 milliseconds' END
  FROM generate_series($1::bigint, $2::bigint) AS i
 CROSS JOIN LATERAL (SELECT $3::timestamptz + ((i / ${TRANSACTION_ROWS} * ${TRANSACTION_ROWS} - $4::bigint)::float8 / $5::bigint * $6::float8) * interval '1 second' AS at) AS x
 CROSS JOIN LATERAL (SELECT ($8::int[])[1 + ((i / 15) * 2654435761 % 4294967296 % 1000)::int] AS a) AS s
 CROSS JOIN LATERAL (SELECT ($7::text[])[s.a] AS waba, ($9::text[])[s.a] AS phone) AS w`;

// ---- Status events one per delivery, the way Meta sends them (bench/storage.ts part "bytes") -------------------

/**
 * Item i: the status of a message (wamid i / 3: sent, delivered, read), of recipient i / 15, as Meta words it since
 * per-message pricing (no `conversation` object; the same item as EVENTS_SQL's statuses and bench/lib/webhooks.ts),
 * for a message sent through the service: with the `biz_opaque_callback_data` its send set (`bm:<message id>`, message
 * 100,000,000 + i / 3), which Meta echoes in each of the message's statuses.
 */
const STATUS_ITEM = `
 CROSS JOIN LATERAL (SELECT $3::timestamptz + ((i / ${TRANSACTION_ROWS} * ${TRANSACTION_ROWS} - $4::bigint)::float8 / $5::bigint * $6::float8) * interval '1 second' AS at) AS x
 CROSS JOIN LATERAL (SELECT ($8::int[])[1 + ((i / 15) * 2654435761 % 4294967296 % 1000)::int] AS a) AS s
 CROSS JOIN LATERAL (SELECT ($7::text[])[s.a] AS waba, ($9::text[])[s.a] AS phone,
                            'wamid.HBgMNDQ3' || lpad(to_hex(i / 3), 12, '0') || 'FQIAERgSQzA2RjI1QjQ0' AS wamid,
                            (ARRAY['sent','delivered','read'])[1 + i % 3] AS status, extract(epoch FROM x.at)::bigint::text AS ts,
                            (447000000000 + i / 15)::text AS rcpt, 100000000 + i / 3 AS sent) AS w
 CROSS JOIN LATERAL (SELECT jsonb_build_object('id', w.wamid, 'status', w.status, 'timestamp', w.ts, 'recipient_id', w.rcpt,
                              'pricing', jsonb_build_object('billable', true, 'pricing_model', 'PMP', 'category', 'utility', 'type', 'regular'),
                              'biz_opaque_callback_data', 'bm:' || w.sent) AS item) AS v`;

/**
 * Deliveries of one status each as the receiver stores them (waiting: `received`, in the inbox since migration
 * webhook_inbox), with the parameters of EVENTS_SQL ($1..$9); RETURNING their ids in the order of i.
 */
const statusDeliveries = (table: string) => `
INSERT INTO ${table} (raw_body, signature, waba_ids, batch_id)
SELECT convert_to(jsonb_build_object('object', 'whatsapp_business_account', 'entry', jsonb_build_array(jsonb_build_object(
         'id', w.waba, 'changes', jsonb_build_array(jsonb_build_object('field', 'messages', 'value', jsonb_build_object(
           'messaging_product', 'whatsapp',
           'metadata', jsonb_build_object('display_phone_number', '15550001111', 'phone_number_id', w.phone),
           'statuses', jsonb_build_array(v.item)))))))::text, 'UTF8'),
       'sha256=' || lpad(to_hex(i * 2654435761 % 4294967296), 64, '0'), ARRAY[w.waba], 'b' || (i / 20) || '-' || md5(i::text)
  FROM generate_series($1::bigint, $2::bigint) AS i ${STATUS_ITEM}
 ORDER BY i
RETURNING id`;
export const STATUS_DELIVERIES_SQL = statusDeliveries('webhook_inbox');
/** The same into the weekly table, as the receiver stored them before migration webhook_inbox. */
export const STATUS_DELIVERIES_SQL_WEEKLY = statusDeliveries('webhook_deliveries');

/** The status events of those deliveries ($10: their ids, in the order of i) in the shape before migration lean_events. */
export const STATUS_EVENTS_SQL_BEFORE = `
INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                    upstream_timestamp, raw, pricing, dedupe_key, processed, processed_at)
SELECT ($10::bigint[])[i - $1 + 1], w.waba, w.phone, 'messages', 'status_update', 'Message ' || w.status, w.status, w.rcpt, w.wamid,
       to_timestamp(w.ts::bigint), v.item || jsonb_build_object('metadata', jsonb_build_object('display_phone_number', '15550001111', 'phone_number_id', w.phone)),
       v.item -> 'pricing', 'status:' || w.wamid || ':' || w.status || ':' || w.ts, true, now()
  FROM generate_series($1::bigint, $2::bigint) AS i ${STATUS_ITEM}`;

/**
 * The same events in the shape of migration lean_events alone (before lean_status_items: the item's timestamp, pricing
 * and metadata.phone_number_id kept in `raw`), encoded by that migration's own SQL functions.
 */
export const STATUS_EVENTS_SQL_LEAN_EVENTS = `
INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                    upstream_timestamp, raw, dedupe_key, processed)
SELECT ($10::bigint[])[i - $1 + 1], w.waba, w.phone, events_type_code('messages'), events_kind_code('status_update'),
       NULLIF('Message ' || w.status, events_status_title(w.status, NULL, NULL)), events_status_code(w.status), w.rcpt, w.wamid,
       to_timestamp(w.ts::bigint),
       events_raw_lean(v.item || jsonb_build_object('metadata', jsonb_build_object('display_phone_number', '15550001111', 'phone_number_id', w.phone)),
                       true, w.wamid, w.status, w.rcpt),
       events_dedupe_hash('status:' || w.wamid || ':' || w.status || ':' || w.ts), true
  FROM generate_series($1::bigint, $2::bigint) AS i ${STATUS_ITEM}`;

/**
 * `lean` of these items as the worker's insert computes it (lean-encoding.ts, on an item of the same shape): timestamp,
 * metadata.phone_number_id, the pricing, the display number and the callback data all in other columns.
 */
const STATUS_LEAN = leanItem({
  kind: 'status_update',
  raw: {
    id: 'w',
    status: 'read',
    timestamp: '1',
    recipient_id: 'r',
    pricing: { billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' },
    metadata: { display_phone_number: '15550001111', phone_number_id: 'p' },
    biz_opaque_callback_data: 'bm:100000000',
  },
  messageId: 'w',
  status: 'read',
  recipient: 'r',
  phoneNumberId: 'p',
  upstreamTimestamp: new Date(1000),
}).lean;

/** Bit 12 of `lean` (migration lean_list_indexes): the display number in `display_phone`. */
const LEAN_DISPLAY_PHONE = 1 << 12;
/** Bit 13 of `lean` (migration lean_callback_data): the callback data in `callback_id`. */
const LEAN_CALLBACK = 1 << 13;

/**
 * The same events in the shape of migration lean_status_items (before lean_list_indexes: the display number still in
 * `raw`), as the worker stored them then.
 */
export const STATUS_EVENTS_SQL_LEAN_ITEMS = `
INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                    upstream_timestamp, raw, lean, dedupe_key, processed)
SELECT ($10::bigint[])[i - $1 + 1], w.waba, w.phone, events_type_code('messages'), events_kind_code('status_update'),
       NULLIF('Message ' || w.status, events_status_title(w.status, NULL, NULL)), events_status_code(w.status), w.rcpt, w.wamid,
       to_timestamp(w.ts::bigint),
       events_raw_lean(v.item - 'timestamp' - 'pricing' || jsonb_build_object('metadata', jsonb_build_object('display_phone_number', '15550001111')),
                       true, w.wamid, w.status, w.rcpt),
       ${STATUS_LEAN! & ~LEAN_DISPLAY_PHONE & ~LEAN_CALLBACK}, events_dedupe_hash('status:' || w.wamid || ':' || w.status || ':' || w.ts), true
  FROM generate_series($1::bigint, $2::bigint) AS i ${STATUS_ITEM}`;

/**
 * The same events in the shape of migration lean_list_indexes (before lean_callback_data: the callback data the only
 * key left in `raw`), as the worker stored them then.
 */
export const STATUS_EVENTS_SQL_LEAN_LISTS = `
INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                    upstream_timestamp, raw, lean, display_phone, dedupe_key, processed)
SELECT ($10::bigint[])[i - $1 + 1], w.waba, w.phone, events_type_code('messages'), events_kind_code('status_update'),
       NULLIF('Message ' || w.status, events_status_title(w.status, NULL, NULL)), events_status_code(w.status), w.rcpt, w.wamid,
       to_timestamp(w.ts::bigint),
       NULLIF(events_raw_lean(v.item - 'timestamp' - 'pricing', true, w.wamid, w.status, w.rcpt), '{}'::jsonb),
       ${STATUS_LEAN! & ~LEAN_CALLBACK}, 15550001111, events_dedupe_hash('status:' || w.wamid || ':' || w.status || ':' || w.ts), true
  FROM generate_series($1::bigint, $2::bigint) AS i ${STATUS_ITEM}`;

/**
 * The same events in today's lean shape (migration lean_callback_data), as the worker's insert stores them: nothing of
 * the item left (`raw` NULL), the display number in `display_phone`, the message id of the callback data in
 * `callback_id`.
 */
export const STATUS_EVENTS_SQL = `
INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                    upstream_timestamp, raw, lean, display_phone, callback_id, dedupe_key, processed)
SELECT ($10::bigint[])[i - $1 + 1], w.waba, w.phone, events_type_code('messages'), events_kind_code('status_update'),
       NULLIF('Message ' || w.status, events_status_title(w.status, NULL, NULL)), events_status_code(w.status), w.rcpt, w.wamid,
       to_timestamp(w.ts::bigint),
       NULLIF(events_raw_lean(v.item - 'timestamp' - 'pricing' - 'biz_opaque_callback_data', true, w.wamid, w.status, w.rcpt), '{}'::jsonb),
       ${STATUS_LEAN}, 15550001111, w.sent, events_dedupe_hash('status:' || w.wamid || ':' || w.status || ':' || w.ts), true
  FROM generate_series($1::bigint, $2::bigint) AS i ${STATUS_ITEM}`;

/**
 * The worker's mark of those deliveries ($1 ids, $2 oldest received_at) in the weekly table, before migration
 * lean_events and from it until migration webhook_inbox (emptying their bytes).
 */
export const PROCESSED_SQL_BEFORE = `
UPDATE webhook_deliveries SET status = 'processed', processed_at = now(), event_count = 1, last_error = NULL, attempts = attempts + 1
 WHERE id = ANY($1::bigint[]) AND received_at >= $2 AND status <> 'processed'`;
export const PROCESSED_SQL_IN_PLACE = `
UPDATE webhook_deliveries SET status = 'processed', processed_at = now(), event_count = 1, last_error = NULL, attempts = attempts + 1,
       raw_body = '\\x', signature = '', batch_id = NULL
 WHERE id = ANY($1::bigint[]) AND received_at >= $2 AND status <> 'processed'`;
/**
 * Since migration webhook_inbox ($1 ids; $2 unused): the deliveries moved out of the inbox into the weekly table
 * without their bytes, as WebhookDeliveriesRepository.markProcessed does.
 */
export const PROCESSED_SQL = `
WITH moved AS (DELETE FROM webhook_inbox WHERE id = ANY($1::bigint[]) AND $2::timestamptz IS NOT NULL
               RETURNING id, waba_ids, attempts, received_at)
INSERT INTO webhook_deliveries (id, raw_body, signature, waba_ids, status, attempts, event_count, received_at, processed_at)
SELECT id, '\\x', '', waba_ids, 'processed', attempts + 1, 1, received_at, now() FROM moved`;
