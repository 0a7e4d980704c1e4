// The physical reference for batches of statuses (`npm run bench:floor`, and `npm run bench`'s floor phase): what
// PostgreSQL alone spends per status event on one connection, the worker's own statements for each chunk, with no API,
// worker process, queue or network between. bench/status-floor.ts describes the designs.
import pg from 'pg';
import { migrate } from '../../scripts/stack/app.js';
import { EventsRepository } from '../../src/events/events.repository.js';
import { classify } from '../../src/events/classify.js';
import { dedupeHash } from '../../src/events/dedupe-key.js';
import { MessagesRepository } from '../../src/messages/messages.repository.js';
import { Db, txOn } from '../../src/core/db/db.js';
import { StatusUpdateEffect } from '../../src/webhooks/processing/effects/status-update.effect.js';
import { MarketingPreferencesRepository } from '../../src/accounts/users/marketing-preferences.repository.js';
import { STATUSES, StatusPlan, statusPayload } from './webhooks.js';
import { CpuMeter } from './cpu.js';

/** Statuses per delivery, as `npm run bench`'s batch phase posts them. */
export const FLOOR_CHUNK = 100;
export const ALL_DESIGNS = [
  'service',
  'schema',
  'noraw',
  'notrig',
  'hot',
  'hot-3',
  'narrow',
  'append',
  'lean',
] as const;
export type Design = (typeof ALL_DESIGNS)[number];
const [WABA_ID, PHONE_NUMBER_ID] = ['310000000000001', '402000000000011'];

const CHANGES: Record<Design, string[]> = {
  service: [],
  schema: [],
  noraw: [],
  notrig: ['DROP TRIGGER event_counts_insert ON events', 'DROP TRIGGER events_feed_notify ON events'],
  hot: ['DROP INDEX messages_business_account_id_status_created_at_idx', 'ALTER TABLE messages SET (fillfactor = 80)'],
  'hot-3': [
    'DROP INDEX messages_business_account_id_status_created_at_idx',
    'ALTER TABLE messages SET (fillfactor = 80)',
    'DROP INDEX events_waba_id_kind_created_at_id_idx',
    'DROP INDEX events_waba_id_status_created_at_id_idx',
    'DROP INDEX events_recipient_idx',
  ],
  narrow: [
    'DROP INDEX messages_business_account_id_status_created_at_idx',
    'ALTER TABLE messages SET (fillfactor = 80)',
    'CREATE TABLE status_rows (id bigserial PRIMARY KEY, message_id int NOT NULL, status smallint NOT NULL, at timestamptz NOT NULL, dedupe_key text NOT NULL UNIQUE)',
  ],
  lean: [
    'DROP INDEX messages_business_account_id_status_created_at_idx',
    'ALTER TABLE messages SET (fillfactor = 80)',
    'DROP INDEX events_waba_id_kind_created_at_id_idx',
    'DROP INDEX events_waba_id_status_created_at_id_idx',
    'DROP INDEX events_recipient_idx',
    'DROP TRIGGER event_counts_insert ON events',
    'DROP TRIGGER events_feed_notify ON events',
  ],
  append: [
    'CREATE TABLE status_rows (id bigserial PRIMARY KEY, message_id int NOT NULL, status smallint NOT NULL, at timestamptz NOT NULL, dedupe_key text NOT NULL UNIQUE)',
  ],
};

interface Item {
  /** Its place in the StatusPlan. */
  index: number;
  message: number;
  wamid: string;
  status: (typeof STATUSES)[number];
  at: string;
  key: string;
}

async function prepare(
  adminUrl: string,
  design: Design,
  plan: StatusPlan,
): Promise<{ url: string; db: pg.Client; businessAccountId: string }> {
  const name = `floor_${design.replace('-', '_')}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  const db = new pg.Client(url.toString());
  await db.connect();
  for (const sql of CHANGES[design]) await db.query(sql);
  const org = (
    await db.query<{ id: string }>(
      `INSERT INTO organizations (id, name) VALUES (gen_random_uuid(), 'floor') RETURNING id`,
    )
  ).rows[0]!.id;
  const businessAccountId = (
    await db.query<{ id: string }>(
      `INSERT INTO business_accounts (id, organization_id, waba_id, name, access_token_encrypted, updated_at)
       VALUES (gen_random_uuid(), $1, $2, 'floor', 'x', now()) RETURNING id`,
      [org, WABA_ID],
    )
  ).rows[0]!.id;
  await db.query(
    `INSERT INTO messages (business_account_id, phone_number_id, "to", type, template_name, template_language, content, status,
                           upstream_message_id, sent_at, created_at, updated_at)
     SELECT $1, $3, '4477' || lpad(i::text, 8, '0'), 'template', 'hello_world', 'en_US', '{"components":[]}', 'sent',
            'wamid.floor.' || i, now(), now(), now() FROM generate_series(0, $2 - 1) i`,
    [businessAccountId, plan.messages, PHONE_NUMBER_ID],
  );
  await db.query('VACUUM ANALYZE');
  return { url: url.toString(), db, businessAccountId };
}

/** The statuses `npm run bench`'s batch phase posts (its StatusPlan), in transactions of `txItems`. */
function items(plan: StatusPlan, events: number, txItems: number): Item[][] {
  const out: Item[][] = [];
  for (let j = 0; j < events; j += txItems) {
    const chunk: Item[] = [];
    for (let k = j; k < Math.min(events, j + txItems); k++) {
      const item = plan.item(k) as { id: string; status: Item['status']; timestamp: string };
      const message = k % plan.messages;
      chunk.push({
        index: k,
        message,
        wamid: item.id,
        status: item.status,
        at: new Date(Number(item.timestamp) * 1000).toISOString(),
        key: `status:${item.id}:${item.status}`,
      });
    }
    out.push(chunk);
  }
  return out;
}

/** What the worker makes of them: the service's classify() over the body that carries them. */
function eventObjects(plan: StatusPlan, chunk: Item[], withRaw = true) {
  const body = statusPayload(
    WABA_ID,
    PHONE_NUMBER_ID,
    chunk.map((r) => plan.item(r.index)),
  );
  return rowsOf(classify(JSON.parse(body.toString('utf8'))).drafts, withRaw);
}

/** Drafts marked in place as the worker's rows for its INSERT (without the raw item and pricing for `noraw`, `lean`). */
function rowsOf(drafts: ReturnType<typeof classify>['drafts'], withRaw = true) {
  return drafts.map((d) =>
    Object.assign(
      d,
      { deliveryId: 1, processed: true, attempts: 0, dedupeHash: `\\x${dedupeHash(d.dedupeKey).toString('hex')}` },
      withRaw ? {} : { raw: {}, pricing: null },
    ),
  );
}

const INSERT_NARROW = `INSERT INTO status_rows (message_id, status, at, dedupe_key)
 SELECT * FROM unnest($1::int[], $2::smallint[], $3::timestamptz[], $4::text[]) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`;

/** Takes the next chunk of the work (shared by every connection of a run), until none is left. */
type Take = () => Item[] | undefined;

async function run(db: pg.Client, design: Design, plan: StatusPlan, take: Take): Promise<void> {
  if (design === 'service') return runService(db, plan, take);
  const events = new EventsRepository(Db.over(undefined as unknown as pg.Pool));
  const tx = txOn(db);
  for (let chunk = take(); chunk; chunk = take()) {
    await db.query('BEGIN');
    const ids = new Map<string, number>();
    if (design !== 'append') {
      const locked = await db.query<{ id: number; w: string }>(
        `SELECT id, upstream_message_id AS w FROM messages WHERE upstream_message_id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
        [chunk.map((r) => r.wamid)],
      );
      for (const r of locked.rows) ids.set(r.w, r.id);
    }
    if (design === 'narrow' || design === 'append') {
      await db.query(INSERT_NARROW, [
        chunk.map((r) => r.message + 1),
        chunk.map((r) => STATUSES.indexOf(r.status)),
        chunk.map((r) => r.at),
        chunk.map((r) => r.key),
      ]);
    } else {
      // The worker's two statements (the keys' advisory locks, then the insert: dedupe across partitions), through the
      // events repository itself, so that the reference stores exactly the rows the worker stores (lean encodings).
      await events.insert(tx, eventObjects(plan, chunk, design !== 'noraw' && design !== 'lean'));
    }
    if (design !== 'append') {
      await db.query(
        `UPDATE messages m SET status = u.s, delivered_at = CASE WHEN u.s IN ('delivered', 'read') THEN coalesce(m.delivered_at, u.at) ELSE m.delivered_at END,
                read_at = CASE WHEN u.s = 'read' THEN u.at ELSE m.read_at END, updated_at = now()
           FROM unnest($1::int[], $2::text[], $3::timestamptz[]) AS u(id, s, at) WHERE m.id = u.id`,
        [chunk.map((r) => ids.get(r.wamid)), chunk.map((r) => r.status), chunk.map((r) => r.at)],
      );
    }
    await db.query('COMMIT');
  }
}

/**
 * The worker's own code for a chunk of statuses, minus its queue and loop: the status effect (lock the messages,
 * decide, write each once: messages.repository.ts) around the events repository's insert.
 */
async function runService(db: pg.Client, plan: StatusPlan, take: Take): Promise<void> {
  // Every statement of a chunk runs on `tx` (this client), so the repositories need no pool of their own.
  const noPool = Db.over(undefined as unknown as pg.Pool);
  const effect = new StatusUpdateEffect(
    new MessagesRepository(noPool),
    new MarketingPreferencesRepository(undefined as never),
  );
  const events = new EventsRepository(noPool);
  const tx = txOn(db);
  for (let chunk = take(); chunk; chunk = take()) {
    await db.query('BEGIN');
    const drafts = eventObjects(plan, chunk);
    const prepared = await effect.prepare(tx, drafts);
    await events.insert(tx, drafts);
    await prepared.apply(drafts);
    await db.query('COMMIT');
  }
}

/**
 * The WAL written between two positions by record type (pg_walinspect, when this PostgreSQL has it and lets
 * the bench create it), largest first: which index entries, heap inserts, updates and locks the bytes are.
 */
async function walByRecord(
  db: pg.Client,
  from: string,
  to: string,
): Promise<{ record: string; count: number; bytes: number }[] | null> {
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const { rows } = await db.query<{ record: string; count: string; bytes: string }>(
      `SELECT "resource_manager/record_type" AS record, count::text, combined_size::text AS bytes
         FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0 ORDER BY combined_size DESC`,
      [from, to],
    );
    return rows.map((r) => ({ record: r.record, count: Number(r.count), bytes: Number(r.bytes) }));
  } catch {
    return null;
  }
}

export interface FloorResult {
  design: Design;
  /** Connections storing chunks at once. */
  connections: number;
  /** Events stored per second, over `connections`. */
  eventsPerSecond: number;
  postgresCpuUsPerEvent: number;
  ceilingEventsPerSecond: number;
  walBytesPerEvent: number;
  indexEntriesPerEvent: number | null;
  walByRecord: { record: string; perEvent: number; bytesPerEvent: number }[] | null;
}

/**
 * One design measured: a fresh database `floor_<design>` on the stack's PostgreSQL (the migrations, then the
 * design's change), `events` statuses of `npm run bench`'s batch phase stored in transactions of `txItems`, and
 * PostgreSQL's CPU (all of its processes, as the stack's meter labels them; NaN when the bench did not start it).
 * `connections` > 1: that many connections take the chunks in turn, as the worker's concurrent jobs do (the same
 * messages' locks in id order, the same dedupe-key locks).
 */
export async function measureFloor(
  stack: { databaseUrl: string; cpuLabels(): Map<number, string> },
  design: Design,
  events: number,
  txItems: number,
  connections = 1,
): Promise<FloorResult> {
  const plan = new StatusPlan('floor', events);
  const { url, db } = await prepare(stack.databaseUrl, design, plan);
  const chunks = items(plan, events, txItems);
  let next = 0;
  const take: Take = () => chunks[next++];
  const others = await Promise.all(
    Array.from({ length: connections - 1 }, async () => {
      const c = new pg.Client(url);
      await c.connect();
      return c;
    }),
  );
  // Warm-up on other messages is not possible without changing the figures' rows; the first chunk's planning
  // is part of the measurement (≈ 300 chunks).
  const meter = new CpuMeter(() => stack.cpuLabels());
  const lsn = async () => (await db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
  const lsn0 = await lsn();
  const t0 = performance.now();
  meter.begin();
  await Promise.all([db, ...others].map((c) => run(c, design, plan, take)));
  const usage = meter.end();
  await Promise.all(others.map((c) => c.end()));
  const ms = performance.now() - t0;
  const lsn1 = await lsn();
  const wal = await walByRecord(db, lsn0, lsn1);
  const walBytes = Number(
    (await db.query<{ n: string }>('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS n', [lsn1, lsn0])).rows[0]!
      .n,
  );
  // PostgreSQL's processes as the stack's CPU meter labels them (none when DATABASE_URL points elsewhere: NaN).
  const cpuMs = usage?.cores.postgres !== undefined ? usage.cores.postgres * usage.seconds * 1000 : NaN;
  await db.end();
  const us = (cpuMs / events) * 1000;
  return {
    design,
    connections,
    eventsPerSecond: Math.round(events / (ms / 1000)),
    postgresCpuUsPerEvent: Number(us.toFixed(1)),
    ceilingEventsPerSecond: Math.round(2e6 / us),
    walBytesPerEvent: Math.round(walBytes / events),
    indexEntriesPerEvent: wal
      ? Number(
          (wal.filter((r) => r.record.startsWith('Btree/INSERT_')).reduce((n, r) => n + r.count, 0) / events).toFixed(
            1,
          ),
        )
      : null,
    walByRecord:
      wal?.map((r) => ({
        record: r.record,
        perEvent: Number((r.count / events).toFixed(2)),
        bytesPerEvent: Math.round(r.bytes / events),
      })) ?? null,
  };
}

/**
 * The part of the worker no storage design removes: each delivery's stored body parsed and classified by the
 * service's own classify(), on the bodies `npm run bench` posts (StatusPlan, 100 statuses each). CPU of this
 * process, best of three passes (the first warms the JIT up), so a lower bound of what the worker pays per event
 * before any SQL, queue or transaction.
 */
export function workerFloor(events: number): {
  parseUsPerEvent: number;
  classifyUsPerEvent: number;
  withRowsUsPerEvent: number;
} {
  const bodies = new StatusPlan('floor', events)
    .deliveries(WABA_ID, PHONE_NUMBER_ID, FLOOR_CHUNK, 'x')
    .map((d) => d.body);
  const cpuUs = (work: () => void): number => {
    let best = Infinity;
    for (let pass = 0; pass < 3; pass++) {
      const t = process.cpuUsage();
      work();
      const u = process.cpuUsage(t);
      best = Math.min(best, u.user + u.system);
    }
    return Number((best / events).toFixed(1));
  };
  let sink = 0;
  const parseUsPerEvent = cpuUs(() => {
    for (const b of bodies) sink += (JSON.parse(b.toString('utf8')) as { entry: unknown[] }).entry.length;
  });
  const classifyUsPerEvent = cpuUs(() => {
    for (const b of bodies) sink += classify(JSON.parse(b.toString('utf8'))).drafts.length;
  });
  const withRowsUsPerEvent = cpuUs(() => {
    for (const b of bodies) sink += JSON.stringify(rowsOf(classify(JSON.parse(b.toString('utf8'))).drafts)).length;
  });
  if (sink === 0) throw new Error('nothing parsed');
  return { parseUsPerEvent, classifyUsPerEvent, withRowsUsPerEvent };
}
