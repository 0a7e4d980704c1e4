// The physical reference for batches of statuses: what PostgreSQL alone spends per status event, for the
// service's schema and for leaner storage designs, with no API, worker, queue or network between. Each design
// gets a fresh database (the migrations applied, then the design's change) and the same work: BENCH_EVENTS
// statuses (sent → delivered → read of BENCH_EVENTS / 3 messages, as `npm run bench`'s batch phase sends them),
// stored in transactions of the worker's WEBHOOK_EVENT_CHUNK (500; BENCH_TX_ITEMS; 100 before 2026-11-24 21:45) on
// one connection the way the worker does (lock the messages, insert the event rows, update each message once),
// and PostgreSQL's CPU time read from /proc
// (bench/lib/cpu.ts, all of its processes; only when the bench started PostgreSQL itself).
//
//   npm run bench:floor        (env: BENCH_EVENTS=30000, BENCH_DESIGNS, BENCH_TX_ITEMS)
//
// Designs:
//   service       the service's tables, with the worker's own code for a chunk (its status effect: lock, decide,
//                 write each message once; the events repository's insert) instead of the simplified statements
//                 every other design uses
//   schema        the service's tables as migrated (events: 11 indexes, counts and feed triggers; messages with
//                 its status index, so every status update writes all five message indexes)
//   hot           messages without the (business_account_id, status, created_at) index, fillfactor 80: the
//                 message update is HOT (no index entries)
//   hot-3         hot, and events without the kind, status and recipient list-filter indexes
//   narrow        hot, and status events as narrow rows (id, message id, status code, time, dedupe key) with
//                 two indexes, instead of rows of `events` (what a separate status table would cost)
//   append        narrow rows only: no message lock and no message update (message status read from them)
//   lean          every cheap removal together, each a feature given up: hot-3 (no kind/status/recipient list
//                 filter indexes), no count and feed triggers (totals by COUNT(*), long polls woken by their 1 s
//                 re-read only), no raw item stored; still one `events` row per status
//
// "if PostgreSQL had both cores" = 2 / (CPU per event): the ceiling of events/s with nothing else running.
// Last, `worker`: what the worker's own code spends per event parsing and classifying the bodies the bench posts
// (JSON.parse + the service's classify(), and the rows serialised for its INSERT): the part no design removes.
import fs from 'node:fs';
import pg from 'pg';
import { migrate } from '../scripts/stack/app.js';
import { DEFAULT_WEBHOOK_EVENT_CHUNK } from '../src/core/config/app-config.js';
import { EventsRepository, insertEvents, lockDedupeKeys } from '../src/events/events.repository.js';
import { classify } from '../src/events/classify.js';
import { dedupeHash, dedupeLockId } from '../src/events/dedupe-key.js';
import { MessagesRepository } from '../src/messages/messages.repository.js';
import { Db, txOn } from '../src/core/db/db.js';
import { StatusUpdateEffect } from '../src/webhooks/processing/effects/status-update.effect.js';
import { MarketingPreferencesRepository } from '../src/accounts/users/marketing-preferences.repository.js';
import { STATUSES, StatusPlan, statusPayload } from './lib/webhooks.js';
import { machine, printMachine, writeResult } from './lib/report.js';
import { CpuMeter } from './lib/cpu.js';
import { log, runBench } from './lib/bench.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 30_000);
/** Statuses per delivery, as `npm run bench`'s batch phase posts them. */
const CHUNK = 100;
/** Statuses per transaction: the worker's WEBHOOK_EVENT_CHUNK (its default unless BENCH_TX_ITEMS says otherwise). */
const TX_ITEMS = Number(process.env.BENCH_TX_ITEMS ?? DEFAULT_WEBHOOK_EVENT_CHUNK);
const ALL_DESIGNS = ['service', 'schema', 'noraw', 'notrig', 'hot', 'hot-3', 'narrow', 'append', 'lean'] as const;
const DESIGNS = (process.env.BENCH_DESIGNS?.split(',') ?? ALL_DESIGNS) as Design[];
const [WABA_ID, PHONE_NUMBER_ID] = ['310000000000001', '402000000000011'];
/** The statuses of `npm run bench`'s batch phase: message i is `wamid.floor.i`, as prepare() seeds it. */
const PLAN = new StatusPlan('floor', EVENTS);
type Design = (typeof ALL_DESIGNS)[number];

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
  /** Its place in PLAN. */
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
    [businessAccountId, PLAN.messages, PHONE_NUMBER_ID],
  );
  await db.query('VACUUM ANALYZE');
  return { url: url.toString(), db, businessAccountId };
}

/** The statuses `npm run bench`'s batch phase posts (its StatusPlan), in transactions of TX_ITEMS. */
function items(): Item[][] {
  const out: Item[][] = [];
  for (let j = 0; j < EVENTS; j += TX_ITEMS) {
    const chunk: Item[] = [];
    for (let k = j; k < Math.min(EVENTS, j + TX_ITEMS); k++) {
      const item = PLAN.item(k) as { id: string; status: Item['status']; timestamp: string };
      const message = k % PLAN.messages;
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

/** The rows the worker stores for these statuses (its insert statement's shape, raw item included). */
function eventRows(chunk: Item[], withRaw = true): string {
  return JSON.stringify(eventObjects(chunk, withRaw));
}

/** What the worker makes of them: the service's classify() over the body that carries them. */
function eventObjects(chunk: Item[], withRaw = true) {
  const body = statusPayload(
    WABA_ID,
    PHONE_NUMBER_ID,
    chunk.map((r) => PLAN.item(r.index)),
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

async function run(db: pg.Client, design: Design, chunks: Item[][]): Promise<void> {
  if (design === 'service') return runService(db, chunks);
  for (const chunk of chunks) {
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
      // The worker's two statements: the keys' advisory locks, then the insert (dedupe across partitions).
      // (the worker's own statements, events.repository.ts, so that the reference measures exactly what it runs)
      const keys = chunk.map((r) => dedupeHash(r.key));
      await db.query(lockDedupeKeys.query({ keys: keys.map(dedupeLockId) }));
      await db.query(
        insertEvents.query({
          rows: eventRows(chunk, design !== 'noraw' && design !== 'lean'),
          at: null,
          keys,
        }),
      );
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
async function runService(db: pg.Client, chunks: Item[][]): Promise<void> {
  // Every statement of a chunk runs on `tx` (this client), so the repositories need no pool of their own.
  const noPool = Db.over(undefined as unknown as pg.Pool);
  const effect = new StatusUpdateEffect(
    new MessagesRepository(noPool),
    new MarketingPreferencesRepository(undefined as never),
  );
  const events = new EventsRepository(noPool);
  const tx = txOn(db);
  for (const chunk of chunks) {
    await db.query('BEGIN');
    const drafts = eventObjects(chunk);
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

await runBench({ name: 'floor', apis: 0, workers: 0, limitMs: 600_000 }, async (stack) => {
  const m = machine();
  printMachine(m);
  const results: {
    design: Design;
    eventsPerSecondOneConnection: number;
    postgresCpuUsPerEvent: number;
    ceilingEventsPerSecond: number;
    walBytesPerEvent: number;
    indexEntriesPerEvent: number | null;
    walByRecord: { record: string; perEvent: number; bytesPerEvent: number }[] | null;
  }[] = [];
  for (const design of DESIGNS) {
    const { db } = await prepare(stack.databaseUrl, design);
    const chunks = items();
    // Warm-up on other messages is not possible without changing the figures' rows; the first chunk's planning
    // is part of the measurement (≈ 300 chunks).
    const meter = new CpuMeter(() => stack.cpuLabels());
    const lsn = async () => (await db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
    const lsn0 = await lsn();
    const t0 = performance.now();
    meter.begin();
    await run(db, design, chunks);
    const usage = meter.end();
    const ms = performance.now() - t0;
    const lsn1 = await lsn();
    const wal = await walByRecord(db, lsn0, lsn1);
    const walBytes = Number(
      (await db.query<{ n: string }>('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS n', [lsn1, lsn0]))
        .rows[0]!.n,
    );
    // PostgreSQL's processes as the stack's CPU meter labels them (none when DATABASE_URL points elsewhere: NaN).
    const cpuMs = usage?.cores.postgres !== undefined ? usage.cores.postgres * usage.seconds * 1000 : NaN;
    await db.end();
    const us = (cpuMs / EVENTS) * 1000;
    const row = {
      design,
      eventsPerSecondOneConnection: Math.round(EVENTS / (ms / 1000)),
      postgresCpuUsPerEvent: Number(us.toFixed(1)),
      ceilingEventsPerSecond: Math.round(2e6 / us),
      walBytesPerEvent: Math.round(walBytes / EVENTS),
      indexEntriesPerEvent: wal
        ? Number(
            (wal.filter((r) => r.record.startsWith('Btree/INSERT_')).reduce((n, r) => n + r.count, 0) / EVENTS).toFixed(
              1,
            ),
          )
        : null,
      walByRecord:
        wal?.map((r) => ({
          record: r.record,
          perEvent: Number((r.count / EVENTS).toFixed(2)),
          bytesPerEvent: Math.round(r.bytes / EVENTS),
        })) ?? null,
    };
    results.push(row);
    log(
      `${design.padEnd(7)} ${EVENTS} statuses: ${row.eventsPerSecondOneConnection} events/s on one connection; PostgreSQL ${row.postgresCpuUsPerEvent} µs of CPU and ${row.walBytesPerEvent} bytes of WAL per event → ≤ ${row.ceilingEventsPerSecond} events/s if PostgreSQL had both cores`,
    );
    if (row.walByRecord) {
      log(
        `        WAL per event by record (pg_walinspect): ${row.indexEntriesPerEvent} B-tree entries; ` +
          row.walByRecord
            .slice(0, 6)
            .map((r) => `${r.record} ${r.perEvent} × = ${r.bytesPerEvent} B`)
            .join(', '),
      );
    }
  }
  const worker = workerFloor();
  log(
    `worker  ${EVENTS} statuses in deliveries of ${CHUNK}: parsing and classifying them costs the worker's own code ${worker.classifyUsPerEvent} µs of CPU per event ` +
      `(${worker.parseUsPerEvent} µs of it JSON.parse); with the rows serialised for its INSERT, ${worker.withRowsUsPerEvent} µs`,
  );
  writeResult('status-floor', {
    machine: m,
    events: EVENTS,
    statusesPerDelivery: CHUNK,
    statusesPerTransaction: TX_ITEMS,
    results,
    worker,
    loadAverageAtEnd: fs.readFileSync('/proc/loadavg', 'utf8').trim(),
  });
});

/**
 * The part of the worker no storage design removes: each delivery's stored body parsed and classified by the
 * service's own classify(), on the bodies `npm run bench` posts (StatusPlan, 100 statuses each). CPU of this
 * process, best of three passes (the first warms the JIT up), so a lower bound of what the worker pays per event
 * before any SQL, queue or transaction.
 */
function workerFloor(): { parseUsPerEvent: number; classifyUsPerEvent: number; withRowsUsPerEvent: number } {
  const bodies = PLAN.deliveries(WABA_ID, PHONE_NUMBER_ID, CHUNK, 'x').map((d) => d.body);
  const cpuUs = (work: () => void): number => {
    let best = Infinity;
    for (let pass = 0; pass < 3; pass++) {
      const t = process.cpuUsage();
      work();
      const u = process.cpuUsage(t);
      best = Math.min(best, u.user + u.system);
    }
    return Number((best / EVENTS).toFixed(1));
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
