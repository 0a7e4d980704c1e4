// `npm run bench`: the three webhook receivers and the send path measured side by side, in ONE run (one process
// tree, one PostgreSQL/Redis, one results file, one summary table):
//
//   (a) bare node:http        bench/lib/hello-server.mjs: reads the body, answers 200 (the loopback ceiling)
//   (b) reference receiver    bench/reference/group-commit-receiver.mjs: plain node:http + pg, signature check,
//                             JSON parse, one multi-row INSERT into webhook_inbox per ~2 ms window, 200 after
//                             the commit; also with the window off (one commit per request)
//   (c) the service           POST /webhooks/whatsapp (1 API + 1 worker): acked/s, ack latency, time until all
//                             processed, exact counts; the same load with the worker stopped until the last answer
//                             (the receive path alone, then the catch-up); batches of 100 statuses (events/s processed)
//   send                      POST /messages across BENCH_KEYS key pairs against the simulator (instant upstream),
//                             then the durable-send reference (bench/reference/durable-send.mjs: key check from
//                             memory, pacing slot, INSERT pending, the call upstream, UPDATE sent) with the same requests
//   (b) the floor             `npm run bench:floor`'s `service` design (bench/lib/status-floor.ts): the batch phase's
//                             statuses stored by the worker's own statements on its connections, PostgreSQL alone
//
// The summary ends with each ratio against its reference (issue 40: ingest ≥ 75 % of the 2 ms window, sends ≥ 70 % of
// the durable-send reference, p99s within 2×, batches of 100 statuses ≥ 80 % of the floor's events/s).
//
// Order: PostgreSQL/Redis/simulator start; (a) and (b) run while no API or worker process exists (so they compete
// with nothing of the service, and the worker's sweeper never sees the reference's rows, which are deleted after
// each reference mode); then the API and worker start for (c) (after a settle, below); the 2 ms reference's saturation
// is measured again right after (c)'s ingest rows (after a settle too), the workers stopped and the API idle, and the ingest ratios take the mean of its two
// measurements (the host's speed drifts within minutes; the summary says how far apart they were); then the floor (after
// a settle, BENCH_FLOOR_EVENTS=30000, its own database); then send (each send
// phase after a settle: CHECKPOINT, VACUUM ANALYZE and until the machine is idle, see settle()). Each target: saturation (as fast as
// BENCH_CONNECTIONS connections go) and a fixed BENCH_INGEST_RATE (default 500/s). Every figure carries the CPU
// used per operation by each process group and, beside it, the CPU taken by "other" processes (everything not
// started by this bench) and the 1-minute load average (/proc/loadavg) at the end of that measurement.
//
//   npm run bench     env: BENCH_LOAD_S=10 (seconds of load per ingest measurement: fixed sets of distinct deliveries
//                     sized from a warm-up), BENCH_INGEST_RATE=500, BENCH_CONNECTIONS=64, BENCH_FIXED_CONNECTIONS=64,
//                     BENCH_REF_WINDOWS=2,0 (reference modes, ms; "2" alone skips window 0), BENCH_REF_MAX_ROWS=500,
//                     BENCH_REF_POOL=4, BENCH_DURATION=15 (send, s), BENCH_RATE=500 (send), BENCH_KEYS=40,
//                     BENCH_SEND_ACCOUNTS=4 (keys spread over that many business accounts), BENCH_SKIP=send,batch
//                     (skip parts: hello, reference, ingest, held, reference-again, batch, floor, send, send-reference), BENCH_LIMIT_S=1500, BENCH_APIS=1 (API processes for the service rows), BENCH_TIMELINE=dir
//                     (per-request latencies of each paced phase, one CSV each), BENCH_GC_LOG=dir (GCs ≥ 5 ms of the app processes)
//                     BENCH_API_NODE_ARGS='--trace-gc …' (node options for the API processes only, for a comparison)
//                     BENCH_PROFILE=1 (PostgreSQL with pg_stat_statements: every measured window prints its statements'
//                     and Redis's commands' time per operation, and the result file keeps them: bench/lib/db-profile.ts)
import type { RequestSpec } from 'autocannon';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CREDENTIAL_CHECK_FIRST_AFTER_MS } from '../src/worker/worker-credential-checks.js';
import { HOUSEKEEPING_FIRST_AFTER_MS } from '../src/worker/worker-schedules.js';
import { CpuMeter, formatCpu, waitUntilQuiet, type CpuUsage } from './lib/cpu.js';
import { ingestPhase, sized, type PhaseResult } from './lib/ingest.js';
import { paced, type PacedSummary } from './lib/paced.js';
import { formatProfile, type DbProfile } from './lib/db-profile.js';
import { fmt, load, machine, printMachine, writeResult, type LoadSummary } from './lib/report.js';
import { createKey, type ConnectedAccount } from '../test/utils/factories.js';
import { startDurableSendReference, type ReferenceKeyPair } from './lib/durable-send-reference.js';
import { ROOT, freePort, log, runBench, sleep, waitFor, type Stack, type Tenant } from './lib/bench.js';
import { StatusPlan, deliveryRequests, maxDeliveryId } from './lib/webhooks.js';
import { measureFloor } from './lib/status-floor.js';
import {
  DEFAULT_DATABASE_POOL_SIZE,
  DEFAULT_WEBHOOK_EVENT_CHUNK,
  DEFAULT_WORKER_CONCURRENCY,
} from '../src/core/config/app-config.js';
import {
  BATCH_PHASE,
  FLOOR_PHASE,
  FLOOR_REFERENCE,
  HELD_PHASE,
  REF_AGAIN,
  SEND_REFERENCE,
  SINGLE_PHASE,
  int,
  ms,
  referenceRatioLines,
} from './lib/reference-ratios.js';

const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 10);
const RATE = Number(process.env.BENCH_INGEST_RATE ?? 500);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const FIXED_CONNECTIONS = Number(process.env.BENCH_FIXED_CONNECTIONS ?? 64);
const REF_WINDOWS = (process.env.BENCH_REF_WINDOWS ?? '2,0').split(',').filter(Boolean).map(Number);
const REF_MAX_ROWS = Number(process.env.BENCH_REF_MAX_ROWS ?? 500);
const REF_POOL = Number(process.env.BENCH_REF_POOL ?? 4);
const SEND_S = Number(process.env.BENCH_DURATION ?? 15);
const SEND_RATE = Number(process.env.BENCH_RATE ?? 500);
const KEYS = Number(process.env.BENCH_KEYS ?? 40);
const SEND_ACCOUNTS = Math.max(1, Math.min(KEYS, Number(process.env.BENCH_SEND_ACCOUNTS ?? 4)));
const SKIP = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
/** API processes for the service's targets (the issue's figures: 1); the rows name the count. */
const APIS = Math.max(1, Number(process.env.BENCH_APIS ?? 1));
const LIMIT_S = Number(process.env.BENCH_LIMIT_S ?? 1500);

/** The process groups shown per row (the "server" column is the target's own HTTP process). */
const GROUPS = ['server', 'worker', 'postgres', 'redis', 'simulator', 'loadgen', 'other'] as const;

/** One line of the summary: one measurement. */
interface Row {
  target: string;
  phase: string;
  /** Requests sent / answered 200. */
  posted: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** Acked (200) per second over the load; for batches the deliveries, with the events in `rateNote`. */
  rate: number;
  rateNote?: string;
  /** The batch phase: events processed per second, first POST to last event processed (its ratio to the floor). */
  processedPerSecond?: number | null;
  p50: number;
  p99: number;
  /** Fixed-rate rows: p50/p99 from the moment each request was written (p50/p99 count from its due time). */
  written?: { p50: number; p99: number };
  /** Service only: seconds from the end of the load until every event was processed (null: not within the limit). */
  processedAfterS?: number | null;
  lost?: number;
  duplicated?: number;
  exact?: boolean;
  countsNote?: string;
  /** CPU milliseconds per acked operation, by group (load window, plus the drain window for the service); "other" = not ours. */
  cpuMsPerOp: Record<string, number>;
  /** Cores used by processes this bench did not start, and the machine's idle cores, over the same windows. */
  otherCores: number;
  idleCores: number;
  loadAvg1: number;
  at: string;
  /** BENCH_PROFILE=1: PostgreSQL's statements and Redis's commands per operation (bench/lib/db-profile.ts). */
  profile?: DbProfile;
}

function loadAvg(): number[] {
  try {
    return fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  } catch {
    return [NaN, NaN, NaN];
  }
}

/** CPU ms per operation by group, from one or more meter windows; `server` = the target's HTTP process label. */
function cpuPerOp(
  windows: (CpuUsage | null)[],
  ops: number,
  serverLabel: string,
): { perOp: Record<string, number>; other: number; idle: number } {
  const seconds: Record<string, number> = {};
  let wall = 0;
  let idle = 0;
  for (const w of windows) {
    if (!w) continue;
    wall += w.seconds;
    idle += w.idleCores * w.seconds;
    for (const [k, cores] of Object.entries(w.cores)) seconds[k] = (seconds[k] ?? 0) + cores * w.seconds;
  }
  const perOp: Record<string, number> = {};
  for (const [k, s] of Object.entries(seconds)) {
    const key = k === serverLabel ? 'server' : k;
    perOp[key] = (perOp[key] ?? 0) + (ops > 0 ? (s * 1000) / ops : NaN);
  }
  return { perOp, other: wall ? (seconds.other ?? 0) / wall : 0, idle: wall ? idle / wall : 0 };
}

/** The columns every row shares: latency (and, paced, from the write), CPU per operation, the machine's state. */
function commonFields(s: LoadSummary | PacedSummary, c: ReturnType<typeof cpuPerOp>) {
  return {
    p50: s.latencyMs.p50,
    p99: s.latencyMs.p99,
    ...('sentToAnswerMs' in s ? { written: { p50: s.sentToAnswerMs.p50, p99: s.sentToAnswerMs.p99 } } : {}),
    cpuMsPerOp: c.perOp,
    otherCores: c.other,
    idleCores: c.idle,
    loadAvg1: loadAvg()[0]!,
    at: new Date().toISOString(),
  };
}

function rowFromLoad(
  target: string,
  phase: string,
  s: LoadSummary | PacedSummary,
  cpu: CpuUsage | null,
  serverLabel: string,
  extra: Partial<Row> = {},
): Row {
  const c = cpuPerOp([cpu], s.ok2xx, serverLabel);
  return {
    target,
    phase,
    posted: s.responses + s.errors,
    ok: s.ok2xx,
    non2xx: s.non2xx,
    errors: s.errors,
    rate: s.okPerSecond,
    ...commonFields(s, c),
    ...extra,
  };
}

function rowFromPhase(target: string, phase: string, p: PhaseResult, extra: Partial<Row> = {}): Row {
  const c = cpuPerOp([p.cpuLoad, p.cpuProcessing], p.load.ok2xx, 'api');
  return {
    target,
    phase,
    posted: p.posts,
    ok: p.load.ok2xx,
    non2xx: p.load.non2xx,
    errors: p.load.errors,
    rate: p.ackedPerSecond,
    processedAfterS: p.processing.allProcessedAfterS,
    lost: p.lost,
    duplicated: p.duplicated,
    exact: p.exact,
    countsNote: p.exact
      ? undefined
      : `stored ${p.processing.deliveriesStored}/${p.posts} deliveries, ${p.processing.eventsProcessed}/${p.expected.events} events processed${p.pending ? `, ${p.pending} pending` : ''}${p.messagesExact ? '' : ', message statuses differ'}`,
    ...commonFields(p.load, c),
    ...(p.profile ? { profile: p.profile } : {}),
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------------------
// (a) bare node:http

async function helloTarget(stack: Stack, tenant: { wabaId: string; phoneNumberId: string }): Promise<Row[]> {
  const port = await freePort();
  const hello = await stack.spawnExtra('hello', [path.join(ROOT, 'bench/lib/hello-server.mjs')], {
    HELLO_PORT: String(port),
  });
  await waitFor(
    'hello server',
    async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' })).ok,
    10_000,
    [hello],
  );
  const url = `http://127.0.0.1:${port}`;
  const sample = new StatusPlan('hello', 20_000).deliveries(tenant.wabaId, tenant.phoneNumberId, 1, stack.appSecret);
  const meter = new CpuMeter(() => stack.cpuLabels());
  await load('node:http warm-up', {
    url,
    connections: CONNECTIONS,
    amount: 5000,
    requests: deliveryRequests(sample).requests,
  });
  meter.begin();
  const sat = await load('node:http saturation', {
    url,
    connections: CONNECTIONS,
    duration: LOAD_S,
    requests: deliveryRequests(sample).requests,
  });
  const satCpu = meter.end();
  console.log(formatCpu(satCpu));
  const rows = [
    rowFromLoad('(a) bare node:http', 'saturation', sat, satCpu, 'hello', { countsNote: 'nothing stored' }),
  ];
  meter.begin();
  const fixed = await paced(`node:http ${RATE}/s`, {
    url,
    connections: FIXED_CONNECTIONS,
    amount: Math.round(RATE * LOAD_S),
    rate: RATE,
    requests: deliveryRequests(sample).requests,
  });
  const fixedCpu = meter.end();
  console.log(formatCpu(fixedCpu));
  rows.push(
    rowFromLoad('(a) bare node:http', `fixed ${RATE}/s`, fixed, fixedCpu, 'hello', { countsNote: 'nothing stored' }),
  );
  await hello.stop();
  return rows;
}

// ---------------------------------------------------------------------------------------------------------
// (b) the reference group-commit receiver

async function referencePhase(
  stack: Stack,
  ids: { wabaId: string; phoneNumberId: string },
  url: string,
  server: string,
  label: string,
  target: string,
  phase: string,
  deliveries: number,
  rate?: number,
): Promise<Row> {
  const tag = `r${stack.runId}${label.replace(/[^a-z0-9]/gi, '')}`;
  const list = new StatusPlan(tag, deliveries).deliveries(ids.wabaId, ids.phoneNumberId, 1, stack.appSecret);
  const { requests, issued } = deliveryRequests(list);
  const before = await maxDeliveryId(stack.db);
  const statsBefore = await refStats(url);
  const meter = new CpuMeter(() => stack.cpuLabels());
  await stack.profiler?.begin();
  meter.begin();
  const s = rate
    ? await paced(label, { url, connections: FIXED_CONNECTIONS, amount: deliveries, rate, requests })
    : await load(label, { url, connections: Math.min(CONNECTIONS, deliveries), amount: deliveries, requests });
  const cpu = meter.end();
  console.log(formatCpu(cpu));
  const profile = await stack.profiler?.end(label, s.ok2xx);
  if (profile) console.log(formatProfile(profile));
  if (issued() !== deliveries)
    throw new Error(`the load generator built ${issued()} requests for ${deliveries} deliveries`);
  const statsAfter = await refStats(url);
  const inserts = statsAfter.batches - statsBefore.batches;
  const rowsPerInsert = inserts ? (statsAfter.rows - statsBefore.rows) / inserts : 0;
  // Each 200 was sent after its commit; only requests cut off by a timeout could still be in a window.
  await sleep(100);
  const r = await stack.db.query<{ stored: string; distinct: string }>(
    `SELECT count(*) AS stored, count(DISTINCT signature) AS distinct FROM webhook_inbox WHERE id > $1`,
    [before],
  );
  const stored = Number(r.rows[0]!.stored);
  const distinct = Number(r.rows[0]!.distinct);
  const lost = Math.max(0, s.ok2xx - stored);
  const duplicated = stored - distinct;
  // 503s (a failed batch) store nothing; a request that timed out may be stored without its 200 (Meta retries it).
  const unacked = Math.max(0, stored - s.ok2xx);
  const exact = lost === 0 && duplicated === 0 && unacked === 0 && s.ok2xx === deliveries;
  console.log(
    `  ${label}: ${deliveries} distinct deliveries posted, ${s.ok2xx} acked, ${stored} rows stored (${distinct} distinct); lost ${lost}, duplicated ${duplicated}${unacked ? `, stored but not acked ${unacked}` : ''}; ${inserts} INSERTs, ${fmt(rowsPerInsert, 1)} rows per INSERT (max ${statsAfter.maxRows} so far)`,
  );
  return rowFromLoad(target, `${phase} (${fmt(rowsPerInsert, 1)} rows per INSERT)`, s, cpu, server, {
    ...(profile ? { profile } : {}),
    posted: deliveries,
    lost,
    duplicated,
    exact,
    countsNote: exact
      ? undefined
      : `${s.ok2xx}/${deliveries} acked (${JSON.stringify(s.statusCodes)}, ${s.errors} errors), ${stored} stored${unacked ? `, ${unacked} stored unacked` : ''}`,
  });
}

async function refStats(url: string): Promise<{ batches: number; rows: number; maxRows: number }> {
  return (await fetch(`${url}/stats`)).json() as Promise<{ batches: number; rows: number; maxRows: number }>;
}

/**
 * `again`: the saturation phase only, run after the service's ingest rows with the workers stopped (their sweeper must
 * not see its rows; the API is idle), so that the ratios compare the service with the reference measured on both sides
 * of it: the host's speed drifts within minutes.
 */
async function referenceTarget(
  stack: Stack,
  ids: { wabaId: string; phoneNumberId: string },
  windowMs: number,
  again = false,
): Promise<Row[]> {
  const port = await freePort();
  const name = `ref-w${windowMs}${again ? '-again' : ''}`;
  const script = path.join(ROOT, 'bench/reference/group-commit-receiver.mjs');
  // BENCH_CPU_PROF=reference profiles it too, into profiles/ref-w<window>.cpuprofile (written when it exits on SIGTERM).
  const profile = stack.profileArgs('reference');
  const nodeArgs = profile.length > 0 ? [...profile, '--cpu-prof-name', `${name}.cpuprofile`] : [];
  const proc = await stack.spawnExtra(name, [...nodeArgs, script], {
    PORT: String(port),
    DATABASE_URL: stack.databaseUrl,
    APP_SECRET: stack.appSecret,
    WINDOW_MS: String(windowMs),
    MAX_ROWS: String(REF_MAX_ROWS),
    POOL: String(REF_POOL),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(name, async () => (await fetch(`${url}/`)).status === 404, 10_000, [proc]);
  const target = again
    ? REF_AGAIN
    : windowMs > 0
      ? `(b) reference, ${windowMs} ms window`
      : '(b) reference, window 0 (commit per request)';
  const first = await maxDeliveryId(stack.db);
  // Two warm-ups: the first is cold (JIT, pool connections) and would size the measured phase too short.
  await referencePhase(stack, ids, url, name, `${name} warm-up 1`, target, 'warm-up', 3000);
  const warm = await referencePhase(stack, ids, url, name, `${name} warm-up 2`, target, 'warm-up', 3000);
  const n = sized(process.env.BENCH_REF_DELIVERIES, warm.rate, LOAD_S, 1000, 200_000);
  const rows = [await referencePhase(stack, ids, url, name, `${name} saturation`, target, 'saturation', n)];
  if (!again)
    rows.push(
      await referencePhase(
        stack,
        ids,
        url,
        name,
        `${name} ${RATE}/s`,
        target,
        `fixed ${RATE}/s`,
        Math.round(RATE * LOAD_S),
        RATE,
      ),
    );
  await proc.stop();
  log(`${name}: ${proc.tail(1)}`);
  // Its rows must not reach the service's worker (the sweeper would enqueue them) nor slow the next target.
  await stack.db.query('DELETE FROM webhook_inbox WHERE id > $1', [first]);
  await stack.db.query('VACUUM ANALYZE webhook_inbox');
  return rows;
}

// ---------------------------------------------------------------------------------------------------------
// (c) the service: ingest

async function serviceIngest(stack: Stack, tenant: Tenant): Promise<Row[]> {
  const urls = stack.apiUrls;
  const target = `(c) service, ${APIS} API + 1 worker`;
  // Two warm-ups of 3,000 deliveries, as the reference gets: the first is cold (JIT, pool connections, the first
  // plans). Sized from one cold warm-up of 1,500 (before 2026-12-04), the measured load lasted 2-3 s instead of
  // BENCH_LOAD_S, more than half of it still warming up (one run: 5-8k/s for 1.3 s, then 12k/s, processing held).
  const warmUp = (label: string) =>
    ingestPhase(stack, tenant, {
      label,
      deliveries: 3000,
      perDelivery: 1,
      connections: CONNECTIONS,
      urls,
      processLimitMs: 60_000,
    });
  await warmUp('warm-up 1');
  const warm = await warmUp('warm-up 2');
  const n = sized(process.env.BENCH_SINGLES, warm.ackedPerSecond, LOAD_S, 1000, 100_000);
  const rows: Row[] = [];
  const single = await ingestPhase(stack, tenant, {
    label: 'single',
    deliveries: n,
    perDelivery: 1,
    connections: CONNECTIONS,
    urls,
    processLimitMs: 90_000,
  });
  rows.push(rowFromPhase(target, SINGLE_PHASE, single));
  if (!SKIP.has('held')) {
    // The same load with the worker stopped until its last answer: what the receive path alone acknowledges beside the
    // reference (issue 40, item 3), and how long the processing then takes to catch up. A measurement, not a mode of
    // the service: processing runs beside the acknowledgements (docs/benchmarks.md says why).
    const held = await ingestPhase(stack, tenant, {
      label: 'single, processing held',
      deliveries: n,
      perDelivery: 1,
      connections: CONNECTIONS,
      urls,
      processLimitMs: 120_000,
      hold: holdWorkers(stack),
    });
    rows.push(rowFromPhase(target, HELD_PHASE, held));
  }
  // On a settled database: the saturation phases leave 2 × 10 s of deliveries, events and message updates behind for
  // autovacuum and the checkpointer (without this, p99 54-60 ms at 500/s against 8 ms after short loads).
  await settle(stack, `the ${RATE}/s phase`);
  const fixed = await ingestPhase(stack, tenant, {
    label: `single at ${RATE}/s`,
    deliveries: Math.round(RATE * LOAD_S),
    perDelivery: 1,
    connections: FIXED_CONNECTIONS,
    urls,
    processLimitMs: 90_000,
    rate: RATE,
  });
  rows.push(rowFromPhase(target, `fixed ${RATE}/s, 1 status`, fixed));
  if (!SKIP.has('batch')) {
    const warmBatch = await ingestPhase(stack, tenant, {
      label: 'warm-up batch100',
      deliveries: 40,
      perDelivery: 100,
      connections: CONNECTIONS,
      urls,
      processLimitMs: 60_000,
    });
    // About 0.3 × BENCH_LOAD_S of load (the worker drains it for several times longer), at most 100,000 events.
    const b = sized(process.env.BENCH_BATCHES, warmBatch.ackedPerSecond, LOAD_S * 0.3, 30, 1000);
    const batch = await ingestPhase(stack, tenant, {
      label: 'batch100',
      deliveries: b,
      perDelivery: 100,
      connections: CONNECTIONS,
      urls,
      processLimitMs: 180_000,
    });
    rows.push(
      rowFromPhase(target, BATCH_PHASE, batch, {
        processedPerSecond: batch.processedPerSecond,
        rateNote: `= ${int(batch.eventsPerSecond)} events/s acked; **${batch.processedPerSecond === null ? 'not all' : int(batch.processedPerSecond)} events/s processed**, first POST to last event processed`,
      }),
    );
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------------
// (b) the floor of batches: PostgreSQL alone

/** Statuses the floor stores: the batch phase's order of magnitude, a few seconds of PostgreSQL. */
const FLOOR_EVENTS = Number(process.env.BENCH_FLOOR_EVENTS ?? 30_000);

/**
 * `npm run bench:floor`'s `service` design in this run: a fresh database on the same PostgreSQL, the batch phase's
 * statuses stored by the worker's own statements in its chunks (WEBHOOK_EVENT_CHUNK) on as many connections as its
 * jobs may hold at once, nothing else between. The batch phase's events processed per second are compared with its
 * events per second (issue 40: ≥ 80 %); its PostgreSQL CPU per event is the batch phase's floor.
 */
async function floorTarget(stack: Stack): Promise<Row> {
  const chunk = Number(process.env.WEBHOOK_EVENT_CHUNK ?? DEFAULT_WEBHOOK_EVENT_CHUNK);
  // As many connections as the worker's jobs may hold at once: its concurrency, within its pool.
  const connections = Math.min(
    Number(process.env.WORKER_CONCURRENCY ?? DEFAULT_WORKER_CONCURRENCY),
    Number(process.env.DATABASE_POOL_SIZE ?? DEFAULT_DATABASE_POOL_SIZE),
  );
  const f = await measureFloor(stack, 'service', FLOOR_EVENTS, chunk, connections);
  log(
    `floor: ${FLOOR_EVENTS} statuses in transactions of ${chunk}: ${int(f.eventsPerSecond)} events/s on ${connections} connections; PostgreSQL ${f.postgresCpuUsPerEvent} µs of CPU, ${f.walBytesPerEvent} B of WAL and ${f.indexEntriesPerEvent ?? '–'} B-tree entries per event`,
  );
  return {
    target: FLOOR_REFERENCE,
    phase: `${FLOOR_PHASE} (${connections} connections)`,
    posted: FLOOR_EVENTS,
    ok: FLOOR_EVENTS,
    non2xx: 0,
    errors: 0,
    rate: f.eventsPerSecond,
    rateNote: `events/s (PostgreSQL ${f.postgresCpuUsPerEvent} µs of CPU per event)`,
    p50: NaN,
    p99: NaN,
    cpuMsPerOp: Number.isFinite(f.postgresCpuUsPerEvent) ? { postgres: f.postgresCpuUsPerEvent / 1000 } : {},
    otherCores: NaN,
    idleCores: NaN,
    loadAvg1: loadAvg()[0]!,
    at: new Date().toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------------------
// between targets

/**
 * Each send phase starts on a settled database, not in the write-back of the phase before it (the batch phase
 * leaves 100,000 new event rows and 33,000 updated messages behind; PostgreSQL writes them out and autovacuum
 * visits both tables for many seconds after the last event is processed): a CHECKPOINT, VACUUM ANALYZE of the
 * tables the phases write, then until the machine has 1.6 of its 2 cores idle over a second (at most 30 s).
 * Nor in the workers' first housekeeping pass (retention, purges, credential checks: one minute after a worker
 * starts, ≈ 0.5 s of CPU, mostly first-use query compilation and module loading), which would otherwise land
 * in the send phase at 500/s.
 */
const HOUSEKEEPING_FIRST_PASS_MS = Math.max(HOUSEKEEPING_FIRST_AFTER_MS, CREDENTIAL_CHECK_FIRST_AFTER_MS) + 5_000;

async function settle(stack: Stack, before: string): Promise<void> {
  const t0 = Date.now();
  const housekeeping = stack.workersStartedAt + HOUSEKEEPING_FIRST_PASS_MS - Date.now();
  if (housekeeping > 0) await sleep(housekeeping);
  await stack.db.query('CHECKPOINT');
  await stack.db.query('VACUUM ANALYZE messages, events, webhook_deliveries, webhook_inbox, idempotency_keys');
  const quiet = await waitUntilQuiet(Math.max(1, os.cpus().length - 0.4), 30_000);
  log(
    `settled before ${before} in ${((Date.now() - t0) / 1000).toFixed(1)} s (${housekeeping > 0 ? `the workers' first housekeeping pass, ` : ''}checkpoint, vacuum; idle ${quiet.idleCores} cores)`,
  );
}

// ---------------------------------------------------------------------------------------------------------
// send

async function sendTarget(stack: Stack, tenant: Tenant): Promise<Row[]> {
  // Key pairs spread over SEND_ACCOUNTS business accounts (each its own simulator account and number).
  const accounts: ConnectedAccount[] = [tenant.account];
  while (accounts.length < SEND_ACCOUNTS) accounts.push(await stack.addAccount(tenant.operator));
  const keys: { headers: Record<string, string>; phoneNumberId: string }[] = [];
  const keyPairs: ReferenceKeyPair[] = [];
  for (let i = 0; i < KEYS; i++) {
    const acc = accounts[i % accounts.length]!;
    const k = i === 0 ? tenant.key : await createKey(stack.api, tenant.operator, acc.wabaId, `bench-${i}`);
    keys.push({ headers: { 'content-type': 'application/json', ...k.headers }, phoneNumberId: acc.phoneNumberId });
    keyPairs.push({
      accessKey: k.accessKey,
      secretKey: k.secretKey,
      businessAccountId: acc.businessAccountId,
      accessToken: acc.accessToken,
    });
  }
  log(`send: ${KEYS} key pairs over ${accounts.length} business account(s)`);
  // Recipients 447700000000…447700099999 (none of the simulator's special numbers); keys in turn.
  let n = 0;
  const requests: RequestSpec[] = [
    {
      method: 'POST',
      path: '/messages',
      setupRequest: (req) => {
        const i = n++;
        const k = keys[i % keys.length]!;
        return {
          ...req,
          headers: k.headers,
          body: JSON.stringify({
            phoneNumberId: k.phoneNumberId,
            to: `4477000${String(i % 100_000).padStart(5, '0')}`,
            type: 'template',
            templateName: 'hello_world',
            templateLanguage: 'en_US',
          }),
        };
      },
    },
  ];
  const url = stack.apiUrls.length === 1 ? stack.apiUrl : stack.apiUrls;
  const target = `send, ${KEYS} key pairs${APIS > 1 ? `, ${APIS} API processes` : ''}`;
  await settle(stack, 'send');
  const since = (await stack.db.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
  const warm = await load('send warm-up', { url, connections: 16, amount: 1500, requests });
  const meter = new CpuMeter(() => stack.cpuLabels());
  await stack.profiler?.begin();
  meter.begin();
  const sat = await load('send saturation', { url, connections: CONNECTIONS, duration: SEND_S, requests });
  const satCpu = meter.end();
  console.log(formatCpu(satCpu));
  const satProfile = await stack.profiler?.end('send saturation', sat.ok2xx);
  if (satProfile) console.log(formatProfile(satProfile));
  const satRow = rowFromLoad(target, 'saturation', sat, satCpu, 'api', satProfile ? { profile: satProfile } : {});
  await settle(stack, `send at ${SEND_RATE}/s`);
  meter.begin();
  const fixed = await paced(`send ${SEND_RATE}/s`, {
    url,
    connections: FIXED_CONNECTIONS,
    durationS: SEND_S,
    rate: SEND_RATE,
    requests,
  });
  const fixedCpu = meter.end();
  console.log(formatCpu(fixedCpu));
  const fixedRow = rowFromLoad(target, `fixed ${SEND_RATE}/s`, fixed, fixedCpu, 'api');
  // Every acknowledged send must be a stored message with status sent (requests cut off at the end of a run
  // finish on the server a moment later, so stored may exceed acked).
  await sleep(2000);
  const r = await stack.db.query<{ status: string; n: string }>(
    'SELECT status, count(*) AS n FROM messages WHERE business_account_id = ANY($1::uuid[]) AND created_at >= $2 GROUP BY status',
    [accounts.map((a) => a.businessAccountId), since],
  );
  const byStatus = Object.fromEntries(r.rows.map((x) => [x.status, Number(x.n)]));
  const acked = warm.ok2xx + sat.ok2xx + fixed.ok2xx;
  const sent = byStatus.sent ?? 0;
  const note = `all phases: ${acked} acked, stored ${JSON.stringify(byStatus)}`;
  console.log(`  send: ${note}`);
  for (const row of [satRow, fixedRow]) {
    row.lost = Math.max(0, acked - sent);
    row.exact = sent >= acked && row.non2xx === 0 && row.errors === 0;
    row.countsNote = row.exact ? undefined : `${row.non2xx} non-2xx, ${row.errors} errors; ${note}`;
  }
  if (SKIP.has('send-reference')) return [satRow, fixedRow];
  // The durable-send reference with the same requests and key pairs, after the counts (its rows are not the service's).
  await settle(stack, 'the durable-send reference');
  const refUrl = await startDurableSendReference(stack, keyPairs);
  await load('durable-send reference warm-up', { url: refUrl, connections: 16, amount: 1500, requests });
  await stack.profiler?.begin();
  meter.begin();
  const ref = await load('durable-send reference saturation', {
    url: refUrl,
    connections: CONNECTIONS,
    duration: SEND_S,
    requests,
  });
  const refCpu = meter.end();
  console.log(formatCpu(refCpu));
  const refProfile = await stack.profiler?.end('durable-send reference saturation', ref.ok2xx);
  if (refProfile) console.log(formatProfile(refProfile));
  const refRow = rowFromLoad(
    SEND_REFERENCE,
    'saturation',
    ref,
    refCpu,
    'ref-send',
    refProfile ? { profile: refProfile } : {},
  );
  refRow.countsNote = 'the reference: not counted';
  return [satRow, fixedRow, refRow];
}

/** Stops the stack's worker processes (SIGSTOP) and continues them (SIGCONT): their jobs, locks and connections wait. */
function holdWorkers(stack: Stack): { pause(): void; resume(): void } {
  const signal = (sig: NodeJS.Signals) => () => {
    for (const w of stack.workers) process.kill(w.pid, sig);
  };
  return { pause: signal('SIGSTOP'), resume: signal('SIGCONT') };
}

// ---------------------------------------------------------------------------------------------------------
// the summary

export function summaryTable(rows: Row[]): string {
  const head = [
    'Target',
    'Measurement',
    'Acked / posted',
    'Acked/s',
    'p50 / p99 ms',
    'All processed after load',
    'Lost / dup.',
    ...GROUPS.map((g) => `CPU ms/op ${g}`),
    '"other": cores',
    'Load avg 1 min',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) {
    const cells = [
      r.target,
      r.phase,
      `${r.ok.toLocaleString('en-US')} / ${r.posted.toLocaleString('en-US')}${r.non2xx || r.errors ? ` (${r.non2xx} non-2xx, ${r.errors} errors)` : ''}`,
      `**${int(r.rate)}**${r.rateNote ? ` ${r.rateNote}` : ''}`,
      // The floor has no clients, hence no latency.
      Number.isFinite(r.p50)
        ? `${fmt(r.p50, 0)} / ${fmt(r.p99, 0)}${r.written ? ` (from the write: ${fmt(r.written.p50, 0)} / ${fmt(r.written.p99, 0)})` : ''}`
        : '–',
      r.processedAfterS === undefined
        ? '–'
        : r.processedAfterS === null
          ? '**not within the limit**'
          : `${fmt(r.processedAfterS, 2)} s`,
      r.lost === undefined
        ? '–'
        : `${r.lost} / ${r.duplicated ?? '–'}${r.exact === false ? ` **NOT EXACT**: ${r.countsNote ?? ''}` : ''}`,
      ...GROUPS.map((g) => (r.cpuMsPerOp[g] === undefined ? '–' : ms(r.cpuMsPerOp[g]))),
      Number.isFinite(r.otherCores) ? fmt(r.otherCores, 2) : '–',
      fmt(r.loadAvg1, 2),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------

await runBench(
  { name: 'all', apis: 0, workers: 0, simulatorWebhooks: false, limitMs: LIMIT_S * 1000 },
  async (stack) => {
    const m = machine();
    printMachine(m);
    const startedAt = Date.now();
    const rows: Row[] = [];
    // The reference and node:http targets run before any API process exists: their payloads name an account the
    // simulator knows nothing of (they never reach the service).
    const ids = { wabaId: `9${String(Date.now()).slice(-14)}`, phoneNumberId: '100000000000001' };

    if (!SKIP.has('hello')) rows.push(...(await helloTarget(stack, ids)));
    if (!SKIP.has('reference')) for (const w of REF_WINDOWS) rows.push(...(await referenceTarget(stack, ids, w)));

    await stack.startApis(APIS);
    await stack.startWorkers(1);
    const tenant = await stack.onboard();
    if (!SKIP.has('ingest')) {
      // Like the reference before it, on a settled database: the reference's rows are written out and vacuumed.
      await settle(stack, "the service's ingest");
      rows.push(...(await serviceIngest(stack, tenant)));
    }
    if (!SKIP.has('ingest') && !SKIP.has('reference') && !SKIP.has('reference-again') && REF_WINDOWS.includes(2)) {
      await settle(stack, 'the reference again');
      const workers = holdWorkers(stack);
      workers.pause();
      try {
        rows.push(...(await referenceTarget(stack, ids, 2, true)));
      } finally {
        workers.resume();
      }
    }
    if (!SKIP.has('ingest') && !SKIP.has('batch') && !SKIP.has('floor')) {
      await settle(stack, 'the floor');
      rows.push(await floorTarget(stack));
    }
    if (!SKIP.has('send')) rows.push(...(await sendTarget(stack, tenant)));
    stack.assertAlive();

    const la = loadAvg();
    const table = summaryTable(rows);
    const header =
      `npm run bench — ${m.date.slice(0, 16).replace('T', ' ')} UTC, git ${m.gitCommit}${m.gitDirty ? ' (uncommitted changes)' : ''}, ${m.cores} cores, node ${m.node}; ` +
      `BENCH_LOAD_S=${LOAD_S}, BENCH_INGEST_RATE=${RATE}, BENCH_DURATION=${SEND_S}, BENCH_RATE=${SEND_RATE}, BENCH_KEYS=${KEYS}, ${CONNECTIONS} connections (fixed rate: ${FIXED_CONNECTIONS}); ` +
      `load average at start ${m.loadAvg.join(' / ')}, at end ${la.join(' / ')} (1/5/15 min); ${((Date.now() - startedAt) / 1000).toFixed(0)} s`;
    const legend =
      "p50 / p99 at a fixed rate: from each request's due time (evenly paced, open loop: waiting for a free connection counts), in brackets from the moment it was written. " +
      'CPU ms/op: CPU time per acked request (per delivery, per send) of each process group — server = the measured HTTP process ' +
      '(hello server, reference receiver or API); for the service ingest rows it covers the load and the drain until all was processed. ' +
      '"other": CPU used by processes this bench did not start (other engineers\' work), per operation and in cores averaged over the same window (of ' +
      `${m.cores}); load avg: /proc/loadavg at the end of that measurement.`;
    const ingest = rows.filter((r) => r.target.startsWith('(') && r.phase === 'saturation');
    const hello = ingest.find((r) => r.target.startsWith('(a)'));
    const lines = [header, '', table, '', legend];
    if (hello) {
      lines.push(
        '',
        'Share of the bare node:http saturation rate: ' +
          rows
            .filter(
              (r) => r.target !== hello.target && r.phase.startsWith('saturation') && !r.target.startsWith('send'),
            )
            .map((r) => `${r.target} ${r.phase}: ${fmt((r.rate / hello.rate) * 100, 1)} %`)
            .join('; ') +
          '.',
      );
    }
    lines.push('', ...referenceRatioLines(rows));
    const summary = lines.join('\n');
    console.log(`\n================ summary ================\n${summary}\n`);
    writeResult('all', {
      machine: m,
      loadAvgEnd: la,
      config: {
        LOAD_S,
        RATE,
        CONNECTIONS,
        FIXED_CONNECTIONS,
        REF_WINDOWS,
        REF_MAX_ROWS,
        REF_POOL,
        SEND_S,
        SEND_RATE,
        KEYS,
        SEND_ACCOUNTS,
        skip: [...SKIP],
      },
      rows,
      summaryMarkdown: summary,
    });
  },
);
