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
import { DEFAULT_WEBHOOK_EVENT_CHUNK } from '../src/core/config/app-config.js';
import {
  ALL_DESIGNS,
  type Design,
  FLOOR_CHUNK,
  type FloorResult,
  measureFloor,
  workerFloor,
} from './lib/status-floor.js';
import { machine, printMachine, writeResult } from './lib/report.js';
import { log, runBench } from './lib/bench.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 30_000);
/** Statuses per transaction: the worker's WEBHOOK_EVENT_CHUNK (its default unless BENCH_TX_ITEMS says otherwise). */
const TX_ITEMS = Number(process.env.BENCH_TX_ITEMS ?? DEFAULT_WEBHOOK_EVENT_CHUNK);
const DESIGNS = (process.env.BENCH_DESIGNS?.split(',') ?? ALL_DESIGNS) as Design[];
/** Connections taking the chunks in turn (`npm run bench`'s floor phase uses as many as the worker may: 10). */
const CONNECTIONS = Number(process.env.BENCH_FLOOR_CONNECTIONS ?? 1);

await runBench({ name: 'floor', apis: 0, workers: 0, limitMs: 600_000 }, async (stack) => {
  const m = machine();
  printMachine(m);
  const results: FloorResult[] = [];
  for (const design of DESIGNS) {
    const row = await measureFloor(stack, design, EVENTS, TX_ITEMS, CONNECTIONS);
    results.push(row);
    log(
      `${design.padEnd(7)} ${EVENTS} statuses: ${row.eventsPerSecond} events/s on ${CONNECTIONS} connection(s); PostgreSQL ${row.postgresCpuUsPerEvent} µs of CPU and ${row.walBytesPerEvent} bytes of WAL per event → ≤ ${row.ceilingEventsPerSecond} events/s if PostgreSQL had both cores`,
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
  const worker = workerFloor(EVENTS);
  log(
    `worker  ${EVENTS} statuses in deliveries of ${FLOOR_CHUNK}: parsing and classifying them costs the worker's own code ${worker.classifyUsPerEvent} µs of CPU per event ` +
      `(${worker.parseUsPerEvent} µs of it JSON.parse); with the rows serialised for its INSERT, ${worker.withRowsUsPerEvent} µs`,
  );
  writeResult('status-floor', {
    machine: m,
    events: EVENTS,
    statusesPerDelivery: FLOOR_CHUNK,
    statusesPerTransaction: TX_ITEMS,
    connections: CONNECTIONS,
    results,
    worker,
    loadAverageAtEnd: fs.readFileSync('/proc/loadavg', 'utf8').trim(),
  });
});
