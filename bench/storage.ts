// Storage (issue 24): the partitioned schema of migration storage_bigint_partitions measured in PostgreSQL alone (no
// API, worker or queue): what the events' reads cost as the table grows, what a retention drop costs and whom it
// holds up, daily against weekly partitions, and how long the upgrade of an existing database takes.
//
//   npm run bench:storage
//   BENCH_STORAGE_SIZES=1e6,1e7,5e7 BENCH_STORAGE_WIDTH_ROWS=2e6 BENCH_STORAGE_UPGRADE_ROWS=1e6 npm run bench:storage   (the recorded run)
//
// Parts (BENCH_STORAGE_PARTS, default all: upgrade,bytes,width,queries,drop,drop-split):
//   bytes    what one status event costs on disk all in, loaded the way Meta sends them: BENCH_STORAGE_BYTES_ROWS
//            (default 1e6; a list runs each) statuses, one per webhook delivery, in chunks of 1,000: the receiver's
//            insert of the deliveries (waiting, with their bytes), then in another transaction the worker's insert
//            of the events and its update marking the deliveries processed (so the space that update leaves is in
//            the figure); two loaders at once, autovacuum on. Then VACUUM ANALYZE + CHECKPOINT and the bytes of
//            events and webhook_deliveries (heap, TOAST, every index, every partition) per event, with pg_stats'
//            widths. In the schema before migration lean_events, after it alone (`lean-events`: the status item's
//            timestamp, pricing and phone number id still in `raw`), before lean_list_indexes (`lean-items`: the
//            display number still in `raw`, the kind and status indexes whole, the dedupe key's with created_at; then
//            that migration timed on those rows, and their bytes again), before lean_callback_data (`lean-lists`: the
//            send's callback data still in `raw`; a NULL column more costs no byte) and today's (BENCH_STORAGE_BYTES_SHAPES,
//            default before,after). Today's rows are then measured again once their week has ended: the service's own
//            `storage-compaction` code (the deliveries' partition rewritten, both tables' indexes rebuilt) run on them,
//            with its time, while a receiver stores one delivery at a time in the next week's partition (its insert
//            latency 10 s before and during the compaction: what a compaction costs a live service)
//            (BENCH_STORAGE_BYTES_CLOSED=0 skips it).
//   queries  events of ~20 business accounts with Zipf-like skew (the largest ~31 %), spread over the last
//            BENCH_STORAGE_DAYS (42) days in weekly partitions, loaded in stages (BENCH_STORAGE_SIZES, default
//            1e5,1e6) in transactions of 500 rows, as the worker stores them (one created_at and one xid per
//            transaction, which the per-account indexes keep as one entry: lib/storage-data.ts TRANSACTION_ROWS;
//            before 2026-12-05 chunks of 100,000 and a created_at per row): after each stage (VACUUM ANALYZE, CHECKPOINT) every read of the events list and feed runs
//            BENCH_STORAGE_RUNS times (300, after 20 warm-up runs) on one connection, as named (prepared) statements
//            exactly as EventsRepository builds them: the SQL is captured from the repository's own methods (page,
//            count, feed), not copied. p50/p99 per stage, and whether the p99s stay within 20 % of each other.
//   drop     at the stage of BENCH_STORAGE_DROP_AT rows (default: the largest stage of at most 1e7), the retention
//            drop of the 5 oldest weekly partitions (EventsRepository.dropPartitionsBefore: one transaction per
//            partition, lock_timeout 1 s, its weeks' event_counts deleted in it) while an inserter stores 10 events
//            every 10 ms into the live partition through EventsRepository.insert (advisory locks + the NOT IN
//            dedupe probe): its worst latency before, during and after. First with a reader holding `events` open
//            for the whole pass (every detach waits its lock_timeout and gives up: what the inserter sees then),
//            then unhindered. The dropped weeks are loaded again before the next stage.
//   drop-split  after "drop": the same partitions loaded again and dropped with the counts and the detach in one
//            transaction and the DROP TABLE in the next, timed apart (detach / files), with the inserter. (Since
//            060d68f the repository drops this way itself; the part still shows where the time goes.)
//   width    the same BENCH_STORAGE_WIDTH_ROWS (default 2e5) rows over 60 days in 60 daily partitions and in weekly
//            ones (9 or 10): the dedupe probe (the NOT IN subquery of EventsRepository's insert, 1 and 500 keys), a chunk
//            insert, the page and feed, and a lookup that cannot prune (statusHistory without `since`: message_id
//            over every partition), prepared and planned each time, with its planning time and relation locks.
//   upgrade  a database of the previous shape (the migrations before BENCH_STORAGE_UPGRADE, default lean_events;
//            storage_bigint_partitions for the earlier upgrade; applied file by file), filled with
//            BENCH_STORAGE_UPGRADE_ROWS (default 1e5) events and as many webhook deliveries and a
//            fifth as many messages; then the new migration.sql, statement by statement in one transaction (what
//            prisma/migrate.ts does with the whole script), with maintenance_work_mem at PostgreSQL's default
//            (64MB). Seconds per million rows of each table.
//
// PostgreSQL: DATABASE_URL (any database on the server: the bench creates storage_<pid>_* databases next to it and drops
// them afterwards unless BENCH_STORAGE_KEEP=1) or, without it, a private one in BENCH_STORAGE_STATE_DIR
// (.local/bench/storage-services), started at nice 10. On a shared machine start the server yourself at nice 10:
//   nice -n 10 node --import tsx scripts/stack/cli.ts --state-dir /tmp/storagebench --db-name storagebench &
//   DATABASE_URL=$(grep ^DATABASE_URL= /tmp/storagebench/services.env | cut -d= -f2-) npm run bench:storage
// Disk: realistic rows took ~1.5 KB each with the 11 indexes before lean_events; a stage that would take the databases past
// BENCH_STORAGE_MAX_GB (40) is cut to what fits, and the cut is printed and recorded; a stage that would leave less than
// BENCH_STORAGE_MIN_FREE_GB (10) of the disk free (10 % over the size per row measured so far) is refused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import pg from 'pg';
import { migrate } from '../scripts/stack/app.js';
import {
  compactEndedPartition,
  expiredPartitions,
  WEEK_MS,
  type Partition,
  type PartitionedTable,
} from '../src/core/db/partitions.js';
import { Db, txOn } from '../src/core/db/db.js';
import { EventsRepository, type EventFilter } from '../src/events/events.repository.js';
import { insertEvents, storedKeys } from '../src/events/statements/insert.js';
import { dedupeUuids } from '../src/events/statements/index-keys.js';
import { FEED_START, type FeedPosition } from '../src/events/feed-cursor.js';
import { dedupeHash } from '../src/events/dedupe-key.js';
import { BENCH_LOCAL, log, sleep } from './lib/bench.js';
import { waitUntilQuiet } from './lib/cpu.js';
import {
  MIGRATIONS_DIR,
  migrationFolders,
  migrationsBefore,
  applyMigrationFiles,
  splitSql,
  statementLabel,
} from './lib/migrations.js';
import {
  BenchServer,
  INSERTER_ACCOUNT,
  Inserter,
  fmtConditions,
  inserterRow,
  relayout,
  settle,
  stats,
  weeklyLayout,
  type Conditions,
  type Stats,
} from './lib/pg-bench.js';
import { fmt, machine, printMachine, writeResult } from './lib/report.js';
import {
  DELIVERIES_SQL,
  EVENTS_SQL,
  EVENTS_SQL_BEFORE,
  MESSAGES_SQL,
  PROCESSED_SQL,
  PROCESSED_SQL_BEFORE,
  PROCESSED_SQL_IN_PLACE,
  STATUS_DELIVERIES_SQL,
  STATUS_DELIVERIES_SQL_WEEKLY,
  STATUS_EVENTS_SQL,
  STATUS_EVENTS_SQL_BEFORE,
  STATUS_EVENTS_SQL_LEAN_EVENTS,
  STATUS_EVENTS_SQL_LEAN_ITEMS,
  STATUS_EVENTS_SQL_LEAN_LISTS,
  baseValues,
  accounts,
  TRANSACTION_ROWS,
  fmtInt,
  insertAccounts,
  loadRows,
  type Accounts,
  type Stage,
} from './lib/storage-data.js';
import { AppConfig } from '../src/core/config/app-config.js';

/** The migration the "upgrade" part times (BENCH_STORAGE_UPGRADE: another one's folder name). */
const NEW_MIGRATION = process.env.BENCH_STORAGE_UPGRADE ?? '20261202210000_lean_events';
/** The schema before and after issue 40's lean events (part "bytes" measures both). */
const LEAN_MIGRATION = '20261202210000_lean_events';
/** The shape `lean-items` is the one before it; the bytes part then times it on those rows (its upgrade). */
const LIST_MIGRATION = '20261204050000_lean_list_indexes';
const BYTES_ROWS = (process.env.BENCH_STORAGE_BYTES_ROWS ?? '1e6').split(',').map((s) => Math.round(Number(s)));
type BytesShape = 'before' | 'lean-events' | 'lean-items' | 'lean-lists' | 'after';
const BYTES_SHAPES = (process.env.BENCH_STORAGE_BYTES_SHAPES ?? 'before,after').split(',') as BytesShape[];
/** Part "bytes" also measures the `after` rows once their week has ended (BENCH_STORAGE_BYTES_CLOSED=0: not). */
const CLOSED_WEEK = process.env.BENCH_STORAGE_BYTES_CLOSED !== '0';
const STATUS_EVENTS: Record<BytesShape, string> = {
  before: STATUS_EVENTS_SQL_BEFORE,
  'lean-events': STATUS_EVENTS_SQL_LEAN_EVENTS,
  'lean-items': STATUS_EVENTS_SQL_LEAN_ITEMS,
  'lean-lists': STATUS_EVENTS_SQL_LEAN_LISTS,
  after: STATUS_EVENTS_SQL,
};
const num = (v: string | undefined, d: number) => (v === undefined || v.trim() === '' ? d : Number(v));
const SIZES = (process.env.BENCH_STORAGE_SIZES ?? '1e5,1e6').split(',').map((s) => Math.round(Number(s)));
const RUNS = num(process.env.BENCH_STORAGE_RUNS, 300);
const WARMUP = 20;
const ROUNDS = num(process.env.BENCH_STORAGE_ROUNDS, 3);
const PASSES = num(process.env.BENCH_STORAGE_PASSES, 1);
const DAYS = num(process.env.BENCH_STORAGE_DAYS, 42);
const WIDTH_ROWS = Math.round(num(process.env.BENCH_STORAGE_WIDTH_ROWS, 2e5));
const UPGRADE_ROWS = Math.round(num(process.env.BENCH_STORAGE_UPGRADE_ROWS, 1e5));
const MAX_BYTES = num(process.env.BENCH_STORAGE_MAX_GB, 40) * 2 ** 30;
/** What a stage must leave free on the disk (BENCH_STORAGE_MIN_FREE_GB, GiB): the disk is shared. */
const MIN_FREE_BYTES = num(process.env.BENCH_STORAGE_MIN_FREE_GB, 10) * 2 ** 30;
const PARTS = new Set((process.env.BENCH_STORAGE_PARTS ?? 'upgrade,bytes,width,queries,drop,drop-split').split(','));
const DROP_AT = process.env.BENCH_STORAGE_DROP_AT
  ? Math.round(Number(process.env.BENCH_STORAGE_DROP_AT))
  : Math.max(...SIZES.filter((s) => s <= 1e7), 0);
const KEEP = process.env.BENCH_STORAGE_KEEP === '1';
/** The bench's databases are named <prefix>main, <prefix>width_daily, …: one run never drops another's. */
const DB_PREFIX = process.env.BENCH_STORAGE_DB_PREFIX ?? `storage_${process.pid}_`;
const ACCOUNTS = accounts(20);
const DAY_MS = 86_400_000;
const server = new BenchServer({
  stateDir: process.env.BENCH_STORAGE_STATE_DIR ?? path.join(BENCH_LOCAL, 'storage-services'),
  dbName: 'storage',
  settings: 'shared_buffers=1GB max_wal_size=4GB checkpoint_timeout=30min',
  keep: KEEP,
  log,
  prefix: DB_PREFIX,
});

// ---------------------------------------------------------------------------------------------------------
// measuring

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** Runs the statement `runs` times (after WARMUP) on one connection and returns its latency (round trip, ms). */
async function timeQuery(client: pg.ClientBase, q: pg.QueryConfig, runs = RUNS): Promise<Stats & { rows: number }> {
  let rows = 0;
  for (let i = 0; i < WARMUP; i++) rows = (await client.query(q)).rowCount ?? 0;
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await client.query(q);
    samples.push(ms(t0));
  }
  return { ...stats(samples), rows };
}

/**
 * The statements run in turn, `rounds` times (each run RUNS / rounds times per round, after WARMUP runs in the first),
 * so that a noisy moment of a shared machine spreads over all of them instead of spoiling one; before each round it
 * waits (at most 15 s) for a second with at least one idle core. Returns the latencies (round trip, ms) per statement.
 */
async function timeInTurn(
  client: pg.ClientBase,
  qs: pg.QueryConfig[],
  rounds = ROUNDS,
): Promise<{ samples: number[]; clean: number[]; rows: number; cpuNs: number; waitNs: number }[]> {
  const out = qs.map(() => ({
    samples: [] as number[],
    spans: [] as [number, number][],
    clean: [] as number[],
    rows: 0,
    cpuNs: 0,
    waitNs: 0,
  }));
  // The bench's own garbage collections (it parses 50 rows of JSON per run) stall a round trip as much as anything
  // PostgreSQL does: every pause is recorded, and each statement's latencies are also given without the runs a pause
  // of this process overlapped (`clean`).
  const pauses: [number, number][] = [];
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push([e.startTime, e.startTime + e.duration]);
  });
  gcs.observe({ entryTypes: ['gc'] });
  const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  for (let r = 0; r < rounds; r++) {
    await waitUntilQuiet(1, 15_000);
    for (let k = 0; k < qs.length; k++) {
      if (r === 0) for (let i = 0; i < WARMUP; i++) out[k]!.rows = (await client.query(qs[k]!)).rowCount ?? 0;
      const before = schedstat(backend);
      for (let i = 0; i < Math.ceil(RUNS / rounds); i++) {
        const t0 = performance.now();
        await client.query(qs[k]!);
        const t1 = performance.now();
        out[k]!.samples.push(t1 - t0);
        out[k]!.spans.push([t0, t1]);
      }
      const after = schedstat(backend);
      out[k]!.cpuNs += after.cpuNs - before.cpuNs;
      out[k]!.waitNs += after.waitNs - before.waitNs;
    }
  }
  await new Promise((r) => setImmediate(r));
  gcs.disconnect();
  pauses.sort((a, b) => a[0] - b[0]);
  const overlapsPause = ([t0, t1]: [number, number]) => pauses.some(([p0, p1]) => p0 < t1 && p1 > t0);
  for (const o of out) o.clean = o.spans.filter((sp) => !overlapsPause(sp)).map(([t0, t1]) => t1 - t0);
  return out.map(({ spans: _spans, ...o }) => o);
}

/**
 * The CPU time a process has had and the time it waited for a CPU while runnable (/proc/<pid>/schedstat, ns): the
 * backend's own work per statement, apart from the time other processes of a busy machine kept it off the CPU.
 */
function schedstat(pid: number): { cpuNs: number; waitNs: number } {
  try {
    const [cpu, wait] = fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return { cpuNs: cpu ?? NaN, waitNs: wait ?? NaN };
  } catch {
    return { cpuNs: NaN, waitNs: NaN };
  }
}

interface PlanInfo {
  /** Which plan the named statement ran with on this connection (pg_prepared_statements), or 'unnamed'. */
  used: 'generic' | 'custom' | 'unnamed';
  /** Shared buffers the used plan touched (hit + read) in one EXPLAIN (ANALYZE, BUFFERS) run, planning included. */
  buffers: number;
  planningMs: number;
  executionMs: number;
  custom: string;
  generic: string;
}

function buffersOf(plan: string): number {
  // The top node's line comes first (cumulative), the planning's after "Planning:".
  const [exec, planning] = plan.split(/\nPlanning:/);
  const sum = (text: string | undefined) => {
    const m = /Buffers: shared((?: \w+=\d+)+)/.exec(text ?? '');
    if (!m) return 0;
    return [...m[1]!.matchAll(/(hit|read)=(\d+)/g)].reduce((a, x) => a + Number(x[2]), 0);
  };
  return sum(exec) + sum(planning);
}

/** EXPLAIN (ANALYZE, BUFFERS) of the statement with its values, custom and generic plan, and which one the statement used. */
async function planInfo(client: pg.ClientBase, q: pg.QueryConfig): Promise<PlanInfo> {
  const run = async () =>
    (
      await client.query<{ 'QUERY PLAN': string }>({ text: `EXPLAIN (ANALYZE, BUFFERS) ${q.text}`, values: q.values })
    ).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');
  let used: PlanInfo['used'] = 'unnamed';
  if (q.name) {
    const ps = (
      await client.query<{ g: string; c: string }>(
        `SELECT generic_plans::text AS g, custom_plans::text AS c FROM pg_prepared_statements WHERE name = $1`,
        [q.name],
      )
    ).rows[0];
    if (ps) used = Number(ps.g) >= Number(ps.c) ? 'generic' : 'custom';
  }
  const custom = await run();
  await client.query('SET plan_cache_mode = force_generic_plan');
  let generic: string;
  try {
    generic = await run();
  } finally {
    await client.query('RESET plan_cache_mode');
  }
  const chosen = used === 'generic' ? generic : custom;
  const num = (re: RegExp) => Number(re.exec(chosen)?.[1] ?? NaN);
  return {
    used,
    buffers: buffersOf(chosen),
    planningMs: num(/Planning Time: ([\d.]+)/),
    executionMs: num(/Execution Time: ([\d.]+)/),
    custom,
    generic,
  };
}

/** The statements a repository method sends, captured (not run): the exact SQL text, name and values. */
async function captured(call: (repo: EventsRepository) => Promise<unknown>): Promise<pg.QueryConfig[]> {
  const configs: pg.QueryConfig[] = [];
  const pool = {
    query: (cfg: pg.QueryConfig) => {
      configs.push(cfg);
      // A total above any page, so that a page that reads its total first (readsTotalFirst) goes on to read the page.
      return Promise.resolve({ rows: [{ n: '1000000', horizon: '1', beyond: null, id: null }], rowCount: 0 });
    },
  };
  await call(new EventsRepository(Db.over(pool as unknown as pg.Pool)));
  return configs;
}

// ---------------------------------------------------------------------------------------------------------
// schema helpers

async function partitionCount(db: pg.Pool): Promise<number> {
  return Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM storage_partitions('events')`)).rows[0]!.n);
}

async function dbSize(db: pg.Pool): Promise<number> {
  return Number((await db.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b')).rows[0]!.b);
}

const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`;

// ---------------------------------------------------------------------------------------------------------
// the events' reads (part "queries")

interface QueryResult extends Stats {
  label: string;
  rows: number;
  sql: string;
  plan?: PlanInfo;
  /** Mean CPU time of the PostgreSQL backend per run, and mean time it waited for a CPU per run (schedstat), µs. */
  cpuUs?: number;
  waitUs?: number;
  /** p99 over the runs that no garbage collection of the bench process overlapped, and how many runs one did. */
  p99NoBenchGc?: number;
  benchGcRuns?: number;
}

/** The reads of the console's events list and of the feed, as EventsRepository sends them. */
async function readQueries(db: pg.ClientBase, a: Accounts): Promise<{ label: string; q: pg.QueryConfig }[]> {
  const top = a.wabaIds[0]!;
  const small = a.wabaIds[a.wabaIds.length - 1]!;
  const recipient = (
    await db.query<{ r: string }>(
      `SELECT recipient AS r FROM events WHERE waba_id = $1 AND recipient IS NOT NULL ORDER BY created_at DESC LIMIT 1 OFFSET 500`,
      [top],
    )
  ).rows[0]?.r;
  const head = (
    await db.query<{ xid: string; id: string }>(
      `SELECT xid::text, id::text FROM events WHERE waba_id = $1 ORDER BY xid DESC, id DESC LIMIT 1 OFFSET 1000`,
      [top],
    )
  ).rows[0];
  const nearHead: FeedPosition = head ? { xid: BigInt(head.xid), id: Number(head.id) } : FEED_START;
  // [the page, its total], whichever the repository sends first.
  const page = async (waba: string, filter: EventFilter, p = 1) => {
    const sent = await captured((r) => r.page(waba, filter, { page: p, limit: 50 }));
    const isPage = (q: pg.QueryConfig) => q.name?.startsWith('sql_events_page') ?? false;
    return [sent.find(isPage), sent.find((q) => !isPage(q))] as const;
  };
  const out: { label: string; q: pg.QueryConfig }[] = [];
  const add = (label: string, q: pg.QueryConfig | undefined) => q && out.push({ label, q });
  const [p1, c1] = await page(top, {});
  add('page: newest 50 (largest account)', p1);
  add('page: OFFSET 1000', (await page(top, {}, 21))[0]);
  add('page: newest 50 (smallest account)', (await page(small, {}))[0]);
  const [ps, cs] = await page(top, { status: 'failed' });
  add('list: status=failed', ps);
  add('list: status=read', (await page(top, { status: 'read' }))[0]);
  add('list: kind=status_update', (await page(top, { kind: 'status_update' }))[0]);
  const [pk, ck] = await page(top, { kind: 'inbound_message' });
  add('list: kind=inbound_message', pk);
  const [pr, cr] = recipient ? await page(top, { recipient }) : [];
  add('list: recipient', pr);
  add('count: all (event_counts)', c1);
  add('count: status=failed (event_counts)', cs);
  add('count: kind=inbound_message (event_counts)', ck);
  add('count: recipient (COUNT(*))', cr);
  add('feed: from the start', (await captured((r) => r.feed(top, {}, FEED_START, 50)))[0]);
  const [feed] = await captured((r) => r.feed(top, {}, nearHead, 50));
  add('feed: 1,000 behind the head', feed);
  const once = feed && beyondOnce(feed.text);
  if (once) add('feed, proposed: `beyond` computed once', { ...feed, name: `${feed.name}_once`, text: once });
  return out;
}

/**
 * The feed with its `beyond` subquery evaluated once per statement instead of once per row returned (a MATERIALIZED
 * CTE holds the horizon and `beyond`): the variant bench/history/2026-11-22-to-26.md ("Storage") proposes. Undefined when the feed's SQL no longer
 * has the shape this rewrite expects.
 */
function beyondOnce(text: string): string | undefined {
  const m =
    /^\s*SELECT h\.horizon::text AS horizon,\s*\((SELECT b\.\w+ FROM \w+ b WHERE [\s\S]*?LIMIT 1)\)::text AS beyond,\s*(\w+)\.\*\s*FROM pg_snapshot_xmin\(pg_current_snapshot\(\)\) AS h\(horizon\)\s*(LEFT JOIN LATERAL[\s\S]*)$/.exec(
      text,
    );
  if (!m) return undefined;
  const beyond = m[1]!.replace(/h\.horizon/g, 'x.horizon');
  return `WITH h AS MATERIALIZED (SELECT x.horizon, (${beyond}) AS beyond FROM pg_snapshot_xmin(pg_current_snapshot()) AS x(horizon))
             SELECT h.horizon::text AS horizon, h.beyond::text AS beyond, ${m[2]}.* FROM h
             ${m[3]}`;
}

async function measureReads(url: string, a: Accounts, withPlans: boolean): Promise<QueryResult[]> {
  // A fresh connection per stage: prepared statements and their plans as a restarted service would have them.
  // The service's read pool plans them generically (Db.partitionReads); BENCH_STORAGE_PLAN_CACHE_MODE=auto
  // measures PostgreSQL's own choice instead (custom plans, planned on every run).
  const mode = process.env.BENCH_STORAGE_PLAN_CACHE_MODE || 'force_generic_plan';
  const db = new pg.Pool({ connectionString: url, max: 1, ...(mode ? { options: `-c plan_cache_mode=${mode}` } : {}) });
  const client = await db.connect();
  try {
    const queries = await readQueries(client, a);
    const timed = await timeInTurn(
      client,
      queries.map((x) => x.q),
    );
    const out: QueryResult[] = [];
    for (let k = 0; k < queries.length; k++) {
      const { label, q } = queries[k]!;
      const s = stats(timed[k]!.samples);
      const n = timed[k]!.samples.length;
      const clean = stats(timed[k]!.clean);
      const r: QueryResult = {
        label,
        ...s,
        rows: timed[k]!.rows,
        sql: q.text,
        cpuUs: timed[k]!.cpuNs / n / 1000,
        waitUs: timed[k]!.waitNs / n / 1000,
        p99NoBenchGc: clean.p99,
        benchGcRuns: n - clean.runs,
      };
      if (withPlans) r.plan = await planInfo(client, q);
      out.push(r);
      log(
        `  ${label.padEnd(44)} p50 ${fmt(s.p50, 2).padStart(7)} ms · p99 ${fmt(s.p99, 2).padStart(7)} ms (${fmt(clean.p99, 2)} ms without the ${r.benchGcRuns} runs the bench's GC paused) · max ${fmt(s.max, 1).padStart(6)} ms · ${r.rows} rows · backend CPU ${fmt(r.cpuUs!, 0)} µs/run, waited for a CPU ${fmt(r.waitUs!, 0)} µs/run` +
          (r.plan
            ? ` · ${r.plan.used} plan, ${r.plan.buffers} buffers, planning ${fmt(r.plan.planningMs, 2)} ms, execution ${fmt(r.plan.executionMs, 2)} ms`
            : ''),
      );
    }
    return out;
  } finally {
    client.release();
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------------------
// the retention drop with an inserter (part "drop")

interface DropResult {
  cutoff: Date;
  rowsBefore: number;
  rowsDropped: number;
  partitions: string[];
  blocked: { seconds: number; dropped: number; readerHeldS: number; inserts: Stats };
  clean: { seconds: number; dropped: number; inserts: Stats };
  baseline: Stats;
  after: Stats;
  countsConsistent: boolean;
  conditions: Conditions;
  /**
   * The same partitions loaded again and dropped the way proposed in the report: the counts and the detach in one
   * transaction (the parent's ACCESS EXCLUSIVE lock), the DROP TABLE of the then stand-alone table in the next (its
   * files are unlinked at that commit, which no longer holds the parent's lock).
   */
  split?: {
    seconds: number;
    dropped: number;
    inserts: Stats;
    baseline: Stats;
    after: Stats;
    detachS: number;
    dropS: number;
    countsConsistent: boolean;
    conditions: Conditions;
  };
}

/** Detach (with the weeks' counts) and drop in two transactions: the variant the report proposes. */
async function dropSplit(
  pool: pg.Pool,
  partitions: Partition[],
): Promise<{ dropped: number; detachS: number; dropS: number }> {
  let dropped = 0;
  let detachS = 0;
  let dropS = 0;
  const db = Db.over(pool);
  for (const p of partitions) {
    const t0 = performance.now();
    const detached = await db
      .transaction(async (tx) => {
        const q = db.on(tx);
        await sql`SET LOCAL lock_timeout = '1s'`.execute(q);
        // The same statement as EventsRepository.dropPartitionsBefore runs before its detach.
        await sql`DELETE FROM event_counts WHERE bucket >= COALESCE(${p.lowerBound}, '-infinity'::timestamptz) AND bucket < ${p.upperBound}`.execute(
          q,
        );
        await sql`ALTER TABLE events DETACH PARTITION ${sql.id(p.name)}`.execute(q);
        return true;
      })
      .catch((e: { code?: string }) => {
        if (e.code === '55P03') return false;
        throw e;
      });
    const t1 = performance.now();
    detachS += (t1 - t0) / 1000;
    if (!detached) continue;
    await pool.query(`DROP TABLE "${p.name}"`);
    dropS += (performance.now() - t1) / 1000;
    dropped++;
  }
  return { dropped, detachS, dropS };
}

async function countsMatch(pool: pg.Pool): Promise<boolean> {
  const counted = Number(
    (await pool.query<{ n: string }>('SELECT COALESCE(sum(count), 0) AS n FROM event_counts')).rows[0]!.n,
  );
  const stored = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n);
  log(`after the drop: ${fmtInt(stored)} rows stored, event_counts says ${fmtInt(counted)}`);
  return counted === stored;
}

async function dropMonth(
  url: string,
  refill: (cutoff: Date) => Promise<void>,
  oldestWeeklies = 5,
): Promise<DropResult> {
  const pool = new pg.Pool({ connectionString: url, max: 6 });
  const repo = new EventsRepository(Db.over(pool));
  try {
    const parts = await repo.partitions();
    const weeklies = parts.filter((p) => p.lowerBound !== null);
    const cutoff = weeklies[oldestWeeklies - 1]!.upperBound;
    const doomed = parts.filter((p) => p.upperBound.getTime() <= cutoff.getTime());
    const rowsBefore = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n);
    const rowsDropped = Number(
      (await pool.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE created_at < $1', [cutoff])).rows[0]!.n,
    );
    log(
      `drop: ${doomed.length} partitions before ${cutoff.toISOString()} (${doomed.map((p) => p.name).join(', ')}): ${fmtInt(rowsDropped)} of ${fmtInt(rowsBefore)} rows`,
    );

    const { value, conditions } = await server.measured(async () => {
      const inserter = new Inserter(pool, repo, 10, 10);
      inserter.start();
      await new Promise((r) => setTimeout(r, 3000));
      // 1. A reader holds `events` (an open transaction that has read it) for the whole pass: each detach waits
      //    its lock_timeout, gives up and leaves the partition to the next pass.
      const reader = await pool.connect();
      await reader.query('BEGIN');
      await reader.query(`SELECT id FROM events WHERE waba_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, [
        ACCOUNTS.wabaIds[0],
      ]);
      const r0 = performance.now();
      const b0 = performance.now();
      const blockedDropped = await repo.dropPartitionsBefore(cutoff);
      const b1 = performance.now();
      await reader.query('COMMIT');
      reader.release();
      const readerHeldS = (performance.now() - r0) / 1000;
      log(`drop with a reader holding events: ${blockedDropped.length} dropped in ${((b1 - b0) / 1000).toFixed(2)} s`);
      await new Promise((r) => setTimeout(r, 2000));
      // 2. Unhindered.
      const c0 = performance.now();
      const dropped = await repo.dropPartitionsBefore(cutoff);
      const c1 = performance.now();
      log(`drop: ${dropped.length} partitions dropped in ${((c1 - c0) / 1000).toFixed(3)} s`);
      await new Promise((r) => setTimeout(r, 2000));
      await inserter.stop();
      const firstAt = inserter.samples[0]?.at ?? 0;
      return {
        blocked: {
          seconds: (b1 - b0) / 1000,
          dropped: blockedDropped.length,
          readerHeldS,
          inserts: inserter.between(b0, b1),
        },
        clean: { seconds: (c1 - c0) / 1000, dropped: dropped.length, inserts: inserter.between(c0, c1) },
        baseline: inserter.between(firstAt, b0 - 1),
        after: inserter.between(c1 + 1, Number.MAX_SAFE_INTEGER),
      };
    });
    const countsConsistent = await countsMatch(pool);
    const result: DropResult = {
      cutoff,
      rowsBefore,
      rowsDropped,
      partitions: doomed.map((p) => p.name),
      ...value,
      countsConsistent,
      conditions,
    };
    if (PARTS.has('drop-split')) {
      await refill(cutoff);
      const again = expiredPartitions(await repo.partitions(), cutoff);
      const split = await server.measured(async () => {
        const inserter = new Inserter(pool, repo, 10, 10);
        inserter.start();
        await new Promise((r) => setTimeout(r, 3000));
        const s0 = performance.now();
        const r = await dropSplit(pool, again);
        const s1 = performance.now();
        log(
          `drop, detach and DROP TABLE in two transactions: ${r.dropped} partitions in ${((s1 - s0) / 1000).toFixed(3)} s (detach ${r.detachS.toFixed(3)} s, drop ${r.dropS.toFixed(3)} s)`,
        );
        await new Promise((r) => setTimeout(r, 2000));
        await inserter.stop();
        return {
          seconds: (s1 - s0) / 1000,
          ...r,
          inserts: inserter.between(s0, s1),
          baseline: inserter.between(inserter.samples[0]?.at ?? 0, s0 - 1),
          after: inserter.between(s1 + 1, Number.MAX_SAFE_INTEGER),
        };
      });
      result.split = { ...split.value, countsConsistent: await countsMatch(pool), conditions: split.conditions };
    }
    return result;
  } finally {
    await pool.end();
  }
}

// ---------------------------------------------------------------------------------------------------------
// part "queries" (+ "drop"): the stages

interface StageResult {
  target: number;
  rows: number;
  cut?: string;
  load: { rows: number; seconds: number; rowsPerS: number; settleS: number };
  bytes: number;
  partitions: number;
  reads: QueryResult[];
  conditions: Conditions;
  /** The same reads measured again (BENCH_STORAGE_PASSES - 1 more passes). */
  again: { reads: QueryResult[]; conditions: Conditions }[];
  postgresNice: number;
}

async function queriesPart(): Promise<{ stages: StageResult[]; drop?: DropResult }> {
  const name = `${DB_PREFIX}main`;
  const url = await server.createDb(name);
  await migrate(url);
  const db = new pg.Pool({ connectionString: url, max: 4 });
  const stages: StageResult[] = [];
  let drop: DropResult | undefined;
  try {
    const now = Date.now();
    const windowStart = new Date(now - DAYS * DAY_MS);
    await relayout(db, (c) => weeklyLayout(c, windowStart, new Date(now + 28 * DAY_MS)));
    log(
      `events: ${await partitionCount(db)} partitions (history, weekly from ${windowStart.toISOString().slice(0, 10)} through 4 weeks ahead)`,
    );
    const loaded: Stage[] = [];
    let rows = 0;
    for (let s = 0; s < SIZES.length; s++) {
      let target = SIZES[s]!;
      let cut: string | undefined;
      if (rows > 0) {
        const perRow = (await dbSize(db)) / rows;
        const fits = Math.floor(MAX_BYTES / (perRow * 1.08) / 1e6) * 1e6;
        const free = fs.statfsSync('/');
        const freeBytes = Number(free.bavail) * Number(free.bsize);
        if (target > fits) {
          cut = `${fmtInt(target)} rows would take ~${gib(target * perRow * 1.08)} (${fmtInt(perRow)} bytes per row measured): over BENCH_STORAGE_MAX_GB; loaded ${fmtInt(fits)} instead`;
          log(`NOTE: ${cut}`);
          target = fits;
        }
        if ((target - rows) * perRow * 1.1 > freeBytes - MIN_FREE_BYTES)
          throw new Error(`not enough free disk for ${fmtInt(target)} rows (${gib(freeBytes)} free)`);
      }
      if (target <= rows) continue;
      const stage: Stage = {
        from: rows,
        to: target - 1,
        t0: new Date(Date.now() - DAYS * DAY_MS),
        spanS: (DAYS * DAY_MS) / 1000,
      };
      log(`stage ${s + 1}: loading ${fmtInt(target - rows)} events (to ${fmtInt(target)}) over the last ${DAYS} days…`);
      const l = await loadRows(db, stage, ACCOUNTS, { log, label: `stage ${s + 1}`, chunk: TRANSACTION_ROWS });
      loaded.push(stage);
      rows = target;
      const settleS = await settle(db);
      const bytes = await dbSize(db);
      log(
        `stage ${s + 1}: ${fmtInt(l.rows)} rows in ${l.seconds.toFixed(0)} s (${fmtInt(l.rows / l.seconds)} rows/s); VACUUM ANALYZE + CHECKPOINT ${settleS.toFixed(0)} s; database ${gib(bytes)}`,
      );
      const { value: reads, conditions } = await server.measured(() => measureReads(url, ACCOUNTS, true));
      log(`stage ${s + 1} measured: ${fmtConditions(conditions)}`);
      // More passes over the same rows, a minute apart: how far the p99 moves with nothing changed but the machine.
      const again: { reads: QueryResult[]; conditions: Conditions }[] = [];
      for (let pass = 1; pass < PASSES; pass++) {
        await new Promise((r) => setTimeout(r, 60_000));
        const m = await server.measured(() => measureReads(url, ACCOUNTS, false));
        log(`stage ${s + 1} pass ${pass + 1} measured: ${fmtConditions(m.conditions)}`);
        again.push({ reads: m.value, conditions: m.conditions });
      }
      stages.push({
        target: SIZES[s]!,
        rows,
        cut,
        load: { rows: l.rows, seconds: l.seconds, rowsPerS: l.rows / l.seconds, settleS },
        bytes,
        partitions: await partitionCount(db),
        reads,
        conditions,
        again,
        postgresNice: server.nice,
      });
      if (PARTS.has('drop') && !drop && rows >= DROP_AT) {
        // Back to the same rows after a drop: the dropped weeks' partitions again, and their rows of every stage so far.
        const refill = async (cutoff: Date) => {
          const c = await db.connect();
          try {
            await weeklyLayout(c, windowStart, new Date(Date.now() + 28 * DAY_MS));
          } finally {
            c.release();
          }
          for (const st of loaded) {
            const last = Math.min(
              st.to,
              st.from + Math.ceil(((cutoff.getTime() - st.t0.getTime()) / 1000 / st.spanS) * (st.to - st.from + 1)) + 1,
            );
            if (last >= st.from)
              await loadRows(db, st, ACCOUNTS, {
                log,
                label: 'refill',
                range: [st.from, last],
                extra: [cutoff],
                chunk: TRANSACTION_ROWS,
              });
          }
          await settle(db);
          const n = Number(
            (
              await db.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE waba_id <> $1`, [
                INSERTER_ACCOUNT.wabaId,
              ])
            ).rows[0]!.n,
          );
          log(`refilled the dropped weeks: ${fmtInt(n)} rows stored again (of ${fmtInt(rows)})`);
        };
        drop = await dropMonth(url, refill);
        if (s < SIZES.length - 1) await refill(drop.cutoff);
      }
    }
    return { stages, drop };
  } finally {
    await db.end();
    await server.dropDb(name);
  }
}

// ---------------------------------------------------------------------------------------------------------
// part "width": daily against weekly partitions

interface WidthResult {
  layout: string;
  partitions: number;
  rows: number;
  reads: QueryResult[];
  nonPruning: { planningMs: number; executionMs: number; relationLocks: number; plannedEachTime: Stats };
  conditions: Conditions;
}

async function widthLayout(layout: 'daily' | 'weekly'): Promise<WidthResult> {
  const name = `${DB_PREFIX}width_${layout}`;
  const url = await server.createDb(name);
  await migrate(url);
  const db = new pg.Pool({ connectionString: url, max: 4 });
  try {
    const now = Date.now();
    const d0 = new Date(Math.floor(now / DAY_MS) * DAY_MS - 59 * DAY_MS);
    await relayout(db, async (c) => {
      if (layout === 'weekly') {
        await c.query(`SELECT storage_ensure_partitions('events', $1, $2)`, [d0, new Date(now)]);
      } else {
        for (let d = 0; d < 60; d++) {
          const lo = new Date(d0.getTime() + d * DAY_MS);
          const hi = new Date(lo.getTime() + DAY_MS);
          await c.query(
            `CREATE TABLE events_d${lo.toISOString().slice(0, 10).replace(/-/g, '')} PARTITION OF events FOR VALUES FROM ('${lo.toISOString()}') TO ('${hi.toISOString()}')`,
          );
        }
      }
    });
    const partitions = await partitionCount(db);
    const spanS = (now - d0.getTime()) / 1000 - 60;
    const stage: Stage = { from: 0, to: WIDTH_ROWS - 1, t0: d0, spanS };
    log(`width (${layout}): ${partitions} partitions; loading ${fmtInt(WIDTH_ROWS)} events over 60 days…`);
    await loadRows(db, stage, ACCOUNTS, { log, label: `width ${layout}` });
    await settle(db);

    const top = ACCOUNTS.wabaIds[0]!;
    const recentKeys = (
      await db.query<{ k: Buffer }>(
        `SELECT dedupe_key AS k FROM events WHERE waba_id = $1 ORDER BY created_at DESC LIMIT 500`,
        [top],
      )
    ).rows.map((r) => r.k);
    const wamid = (
      await db.query<{ m: string }>(
        `SELECT message_id AS m FROM events WHERE waba_id = $1 AND kind = events_kind_code('status_update') ORDER BY created_at DESC LIMIT 1 OFFSET 5000`,
        [top],
      )
    ).rows[0]!.m;
    const absent = Array.from({ length: 500 }, (_, i) => dedupeHash(`status:wamid.absent.${i}:delivered:1790000000`));
    const { value, conditions } = await server.measured(async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const reads: QueryResult[] = [];
        const run = async (label: string, q: pg.QueryConfig, withPlan = true) => {
          const s = await timeQuery(client, q);
          const plan = withPlan ? await planInfo(client, q) : undefined;
          reads.push({ label, ...s, sql: q.text, plan });
          log(
            `  ${layout.padEnd(6)} ${label.padEnd(46)} p50 ${fmt(s.p50, 2).padStart(7)} ms · p99 ${fmt(s.p99, 2).padStart(7)} ms · ${s.rows} rows` +
              (plan
                ? ` · ${plan.used} plan, ${plan.buffers} buffers, planning ${fmt(plan.planningMs, 2)} ms, execution ${fmt(plan.executionMs, 2)} ms`
                : ''),
          );
        };
        // The dedupe probe of EventsRepository.insert (its NOT IN subquery), on its own.
        const probe = (name: string, keys: Buffer[]) => ({
          ...storedKeys.query({ keys: dedupeUuids(keys), at: null }),
          name,
        });
        await run('dedupe probe: 1 key, stored', probe('probe_1_stored', [recentKeys[0]!]));
        await run('dedupe probe: 1 key, new', probe('probe_1_new', [absent[0]!]));
        await run(
          'dedupe probe: 500 keys (250 stored)',
          probe('probe_500', [...recentKeys.slice(0, 250), ...absent.slice(0, 250)]),
        );
        // The worker's chunk: EventsRepository.insert (locks, then the insert with its probe), rolled back.
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        const repo = new EventsRepository(Db.over(pool));
        const samples: number[] = [];
        const c2 = await pool.connect();
        for (let i = 0; i < WARMUP + Math.min(RUNS, 200); i++) {
          const rows = Array.from({ length: 100 }, (_, k) => inserterRow(1e9 + i * 100 + k));
          await c2.query('BEGIN');
          const t0 = process.hrtime.bigint();
          await repo.insert(txOn(c2), rows);
          if (i >= WARMUP) samples.push(ms(t0));
          await c2.query('ROLLBACK');
        }
        c2.release();
        await pool.end();
        const ins = stats(samples);
        reads.push({
          label: 'insert: 100 new events (repository, rolled back)',
          ...ins,
          rows: 100,
          sql: insertEvents.text,
        });
        log(
          `  ${layout.padEnd(6)} ${'insert: 100 new events (rolled back)'.padEnd(46)} p50 ${fmt(ins.p50, 2).padStart(7)} ms · p99 ${fmt(ins.p99, 2).padStart(7)} ms`,
        );
        const [page] = await captured((r) => r.page(top, {}, { page: 1, limit: 50 }));
        await run('page: newest 50', page!);
        const head = (
          await client.query<{ xid: string; id: string }>(
            `SELECT xid::text, id::text FROM events WHERE waba_id = $1 ORDER BY xid DESC, id DESC LIMIT 1 OFFSET 1000`,
            [top],
          )
        ).rows[0]!;
        const [feed] = await captured((r) => r.feed(top, {}, { xid: BigInt(head.xid), id: Number(head.id) }, 50));
        await run('feed: 1,000 behind the head', feed!);
        // A lookup that cannot prune: statusHistory without `since` (created_at >= 1970: every partition).
        const [history] = await captured((r) => r.statusHistory(top, wamid));
        await run('no pruning: statusHistory(wamid), prepared', history!);
        const unnamed = { text: history!.text, values: history!.values };
        const each = await timeQuery(client, unnamed);
        reads.push({ label: 'no pruning: statusHistory(wamid), planned each time', ...each, sql: unnamed.text });
        log(
          `  ${layout.padEnd(6)} ${'no pruning: planned each time'.padEnd(46)} p50 ${fmt(each.p50, 2).padStart(7)} ms · p99 ${fmt(each.p99, 2).padStart(7)} ms`,
        );
        const plan = (
          await client.query<{ 'QUERY PLAN': unknown }>({
            text: `EXPLAIN (ANALYZE, SUMMARY, FORMAT JSON) ${unnamed.text}`,
            values: unnamed.values,
          })
        ).rows[0]!['QUERY PLAN'] as {
          'Planning Time': number;
          'Execution Time': number;
        }[];
        await client.query('BEGIN');
        await client.query(unnamed);
        const locks = Number(
          (
            await client.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'relation'`,
            )
          ).rows[0]!.n,
        );
        await client.query('ROLLBACK');
        return {
          reads,
          nonPruning: {
            planningMs: plan[0]!['Planning Time'],
            executionMs: plan[0]!['Execution Time'],
            relationLocks: locks,
            plannedEachTime: each,
          },
        };
      } finally {
        await client.end();
      }
    });
    log(
      `width (${layout}) non-pruning lookup: planning ${fmt(value.nonPruning.planningMs, 2)} ms, execution ${fmt(value.nonPruning.executionMs, 2)} ms, ${value.nonPruning.relationLocks} relation locks`,
    );
    return { layout, partitions, rows: WIDTH_ROWS, ...value, conditions };
  } finally {
    await db.end();
    await server.dropDb(name);
  }
}

// ---------------------------------------------------------------------------------------------------------
// part "bytes": what one status event costs on disk, all in, loaded the way Meta sends them

interface RelationBytes {
  relation: string;
  kind: 'heap' | 'toast' | 'index';
  bytes: number;
}
interface BytesResult {
  /** The layout, and `… week closed` for the same rows once the week's maintenance has compacted them. */
  shape: string;
  rows: number;
  loadSeconds: number;
  /** events + webhook_deliveries, every partition: heap (with its free space map and visibility map), TOAST, indexes. */
  totalBytes: number;
  perEvent: number;
  relations: RelationBytes[];
  /** Average stored width per column of events and webhook_deliveries (pg_stats, after ANALYZE). */
  widths: { table: string; column: string; width: number }[];
  conditions: Conditions;
}

/**
 * What the service's `storage-compaction` task does to the weeks that have ended (PartitionMaintenance.compact), with
 * the service's own code, run until nothing is left to do: here every week up to the loaded one (this week: rows are
 * stored at "now") counts as ended; not the next one, the live receiver's. Returns how many partitions it compacted.
 */
async function compactClosedWeeks(url: string): Promise<number> {
  const monday = Date.UTC(2000, 0, 3);
  const endOfThisWeek = new Date(monday + Math.ceil((Date.now() - monday) / WEEK_MS) * WEEK_MS);
  const db = new Db(
    Object.assign(new AppConfig(), {
      databaseUrl: url,
      databaseDirectUrl: url,
      databasePoolSize: 2,
      databasePreparedStatements: 'named' as const,
    }),
  );
  try {
    let n = 0;
    for (const table of ['events', 'webhook_deliveries'] as PartitionedTable[])
      while (await compactEndedPartition(db, table, endOfThisWeek)) n++;
    return n;
  } finally {
    await db.close();
  }
}

const RECEIVER_QUIET_MS = 10_000;

/**
 * A receiver's inserts beside the compaction: one ~700-byte delivery at a time into the inbox (migration
 * webhook_inbox: the receiver no longer writes the weekly partitions), each its own synchronously committed
 * statement, one every 2 ms at most. `mark()` gives the p50 / p99 / max of the latencies since the previous mark.
 */
function liveReceiver(pool: pg.Pool): { mark(): string; stop(): Promise<void> } {
  let latencies: number[] = [];
  let running = true;
  const body = Buffer.from(JSON.stringify({ object: 'whatsapp_business_account', pad: 'x'.repeat(640) }));
  const loop = (async () => {
    const c = await pool.connect();
    try {
      while (running) {
        const t = performance.now();
        await c.query(`INSERT INTO webhook_inbox (raw_body, signature, waba_ids) VALUES ($1, 'sha256=0', ARRAY['1'])`, [
          body,
        ]);
        latencies.push(performance.now() - t);
        await sleep(2);
      }
    } finally {
      c.release();
    }
  })();
  return {
    mark() {
      const l = latencies.sort((a, b) => a - b);
      latencies = [];
      const q = (f: number) => (l.length ? l[Math.min(l.length - 1, Math.floor(f * l.length))]!.toFixed(1) : '–');
      return `${q(0.5)} / ${q(0.99)} / ${l.length ? l[l.length - 1]!.toFixed(1) : '–'} (${l.length} inserts)`;
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** Heap, TOAST and each index of a partitioned table, summed over its partitions, by the parent's index name. */
async function relationBytes(db: pg.Pool, table: string): Promise<RelationBytes[]> {
  const { rows } = await db.query<{ relation: string; kind: RelationBytes['kind']; bytes: string }>(
    `WITH parts AS (SELECT relid FROM pg_partition_tree($1::regclass) WHERE isleaf
                    UNION ALL SELECT $1::regclass WHERE NOT EXISTS (SELECT FROM pg_partition_tree($1::regclass)))
     SELECT $1::text AS relation, 'heap' AS kind, sum(pg_table_size(p.relid) - coalesce(pg_total_relation_size(c.reltoastrelid), 0))::bigint AS bytes
       FROM parts p JOIN pg_class c ON c.oid = p.relid
     UNION ALL
     SELECT $1 || ' TOAST', 'toast', coalesce(sum(pg_total_relation_size(c.reltoastrelid)), 0)::bigint
       FROM parts p JOIN pg_class c ON c.oid = p.relid WHERE c.reltoastrelid <> 0
     UNION ALL
     SELECT coalesce(parent.relname, i.relname::name)::text, 'index', sum(pg_relation_size(x.indexrelid))::bigint
       FROM parts p JOIN pg_index x ON x.indrelid = p.relid JOIN pg_class i ON i.oid = x.indexrelid
       LEFT JOIN pg_inherits h ON h.inhrelid = x.indexrelid LEFT JOIN pg_class parent ON parent.oid = h.inhparent
      GROUP BY 1`,
    [table],
  );
  return rows.map((r) => ({ relation: r.relation, kind: r.kind, bytes: Number(r.bytes) }));
}

/**
 * `rows` status events, one per webhook delivery (as Meta sends them), in the schema before migration lean_events or
 * after it: per chunk of 1,000, the receiver's insert of the deliveries (waiting, with their bytes) in one
 * transaction, then the worker's in another: the events (processed, as the worker stores them) and the deliveries
 * marked processed: since migration webhook_inbox moved out of the inbox into the weekly table without their bytes,
 * before it updated in place (from lean_events emptying their bytes), so the space an update or the inbox leaves
 * behind is in the figure, as it is in service. Two such loaders at once. Then VACUUM ANALYZE and CHECKPOINT; the
 * bytes of the tables (events, webhook_deliveries and the inbox), all in.
 */
async function bytesPart(shape: BytesShape, rows: number): Promise<BytesResult[]> {
  const name = `${DB_PREFIX}bytes_${shape.replace('-', '_')}`;
  const url = await server.createDb(name);
  const db = new pg.Pool({ connectionString: url, max: 3 });
  try {
    if (shape === 'before' || shape === 'lean-items') {
      const c = await db.connect();
      await applyMigrationFiles(c, migrationsBefore(shape === 'before' ? LEAN_MIGRATION : LIST_MIGRATION));
      c.release();
    } else await migrate(url);
    // The schemas of lean-events and lean-lists are today's (their events are written in the older encodings).
    const inbox = shape !== 'before' && shape !== 'lean-items';
    const tables = inbox ? ['events', 'webhook_deliveries', 'webhook_inbox'] : ['events', 'webhook_deliveries'];
    const processedSql = shape === 'before' ? PROCESSED_SQL_BEFORE : inbox ? PROCESSED_SQL : PROCESSED_SQL_IN_PLACE;
    const stage: Stage = { from: 0, to: rows - 1, t0: new Date(Date.now() - 3600_000), spanS: 3600 };
    const chunk = 1000;
    const jobs: [number, number][] = [];
    for (let f = 0; f < rows; f += chunk) jobs.push([f, Math.min(f + chunk - 1, rows - 1)]);
    let next = 0;
    let lastPrint = Date.now();
    const t0 = Date.now();
    const { value: loadSeconds, conditions } = await server.measured(async () => {
      const runner = async () => {
        const c = await db.connect();
        try {
          await c.query('SET synchronous_commit = off');
          for (let j = next++; j < jobs.length; j = next++) {
            const [f, t] = jobs[j]!;
            const base = baseValues(stage, f, t, ACCOUNTS);
            const insert = inbox ? STATUS_DELIVERIES_SQL : STATUS_DELIVERIES_SQL_WEEKLY;
            const ids = (await c.query<{ id: string }>(insert, base)).rows.map((r) => r.id);
            await c.query('BEGIN');
            await c.query(STATUS_EVENTS[shape], [...base, ids]);
            await c.query(processedSql, [ids, new Date(t0 - 60_000)]);
            await c.query('COMMIT');
            if (Date.now() - lastPrint > 10_000) {
              lastPrint = Date.now();
              log(
                `bytes (${shape}): ${fmtInt(next * chunk)} of ${fmtInt(rows)} in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
              );
            }
          }
        } finally {
          c.release();
        }
      };
      await Promise.all([runner(), runner()]);
      return (Date.now() - t0) / 1000;
    });
    await settle(db, `${tables.join(', ')}, event_counts`);
    const relations = (await Promise.all(tables.map((t) => relationBytes(db, t)))).flat();
    const totalBytes = relations.reduce((a, r) => a + r.bytes, 0);
    const widths = (
      await db.query<{ table: string; column: string; width: number }>(
        `SELECT tablename AS table, attname AS column, avg(avg_width)::int AS width FROM pg_stats
          WHERE tablename IN ('events', 'webhook_deliveries') AND inherited GROUP BY 1, 2 ORDER BY 1, 3 DESC`,
      )
    ).rows;
    log(
      `bytes (${shape}, ${fmtInt(rows)} status events, one per delivery): ${fmtInt(totalBytes / rows)} bytes per event all in; loaded in ${loadSeconds.toFixed(0)} s; ${fmtConditions(conditions)}`,
    );
    for (const r of relations) log(`  ${r.relation.padEnd(56)} ${fmtInt(r.bytes / rows).padStart(6)} B/event`);
    const results: BytesResult[] = [
      { shape, rows, loadSeconds, totalBytes, perEvent: totalBytes / rows, relations, widths, conditions },
    ];
    if (shape === 'lean-items') results.push(await upgradedToLists(db, rows, loadSeconds));
    if (shape === 'after' && CLOSED_WEEK) {
      // What the storage maintenance does to a week once it has ended (docs/storage.md, "A week that has ended"),
      // while a receiver goes on storing deliveries in the next week: what the compaction costs a live service.
      const receiver = liveReceiver(db);
      await sleep(RECEIVER_QUIET_MS);
      const quiet = receiver.mark();
      const t = Date.now();
      const compacted = await compactClosedWeeks(url);
      const during = receiver.mark();
      await receiver.stop();
      log(
        `bytes: a receiver storing one delivery at a time into the inbox (each its own commit), p50 / p99 / max ms: ` +
          `before the compaction ${quiet}; during it ${during}`,
      );
      const closed = (await Promise.all(tables.map((t) => relationBytes(db, t)))).flat();
      const closedTotal = closed.reduce((a, r) => a + r.bytes, 0);
      log(
        `bytes (${shape}, the week closed: ${compacted} partitions compacted in ${((Date.now() - t) / 1000).toFixed(0)} s): ${fmtInt(closedTotal / rows)} bytes per event all in`,
      );
      for (const r of closed) log(`  ${r.relation.padEnd(56)} ${fmtInt(r.bytes / rows).padStart(6)} B/event`);
      results.push({
        shape: `${shape}, week closed`,
        rows,
        loadSeconds,
        totalBytes: closedTotal,
        perEvent: closedTotal / rows,
        relations: closed,
        widths,
        conditions,
      });
    }
    return results;
  } finally {
    await db.end();
    await server.dropDb(name);
  }
}

/**
 * Migration lean_list_indexes on the rows of shape `lean-items` (what an upgrade does to a live week): its statements in
 * one transaction, timed, then the bytes again (the stored items keep their display number in `raw`; the indexes change).
 */
async function upgradedToLists(db: pg.Pool, rows: number, loadSeconds: number): Promise<BytesResult> {
  const statements = splitSql(fs.readFileSync(path.join(MIGRATIONS_DIR, LIST_MIGRATION, 'migration.sql'), 'utf8'));
  const { value: timings, conditions } = await server.measured(async () => {
    const c = await db.connect();
    const out: string[] = [];
    try {
      await c.query(`SET maintenance_work_mem = '64MB'`);
      await c.query('BEGIN');
      for (const stmt of statements) {
        const t = performance.now();
        await c.query(stmt);
        out.push(`${statementLabel(stmt)} ${((performance.now() - t) / 1000).toFixed(2)} s`);
      }
      const t = performance.now();
      await c.query('COMMIT');
      out.push(`COMMIT ${((performance.now() - t) / 1000).toFixed(2)} s`);
      return out;
    } finally {
      c.release();
    }
  });
  const seconds = timings.reduce((a, x) => a + Number(/ ([\d.]+) s$/.exec(x)![1]), 0);
  log(
    `bytes (lean-items): migration ${LIST_MIGRATION} on ${fmtInt(rows)} events in ${seconds.toFixed(1)} s (${(seconds / (rows / 1e6)).toFixed(1)} s per million); ${fmtConditions(conditions)}`,
  );
  for (const t of timings) log(`  ${t}`);
  await settle(db, 'events, webhook_deliveries, event_counts');
  const relations = [...(await relationBytes(db, 'events')), ...(await relationBytes(db, 'webhook_deliveries'))];
  const totalBytes = relations.reduce((a, r) => a + r.bytes, 0);
  log(`bytes (lean-items, upgraded): ${fmtInt(totalBytes / rows)} bytes per event all in`);
  for (const r of relations) log(`  ${r.relation.padEnd(56)} ${fmtInt(r.bytes / rows).padStart(6)} B/event`);
  return {
    shape: `lean-items, upgraded in ${seconds.toFixed(1)} s`,
    rows,
    loadSeconds,
    totalBytes,
    perEvent: totalBytes / rows,
    relations,
    widths: [],
    conditions,
  };
}

// ---------------------------------------------------------------------------------------------------------
// part "upgrade"

interface UpgradeResult {
  rows: { events: number; deliveries: number; messages: number };
  fillSeconds: number;
  totalSeconds: number;
  byTable: Record<string, number>;
  statements: { label: string; seconds: number; table: string }[];
  kept: boolean;
  conditions: Conditions;
}

function tableOf(stmt: string): string {
  const s = stmt.replace(/\s+/g, ' ');
  if (/webhook_deliveries/.test(s)) return 'webhook_deliveries';
  if (
    /\b(events|events_legacy|event_counts|events_id_seq|events_history)\b|"events(_legacy|_history)?"|"event_counts/.test(
      s,
    )
  )
    return 'events';
  if (/"messages"|messages_id_seq/.test(s)) return 'messages';
  if (/audit_logs/.test(s)) return 'audit_logs';
  return 'other';
}

/** Since migration webhook_inbox a delivery is in the inbox (waiting, dead letters) or the weekly table. */
const hasInbox = async (db: pg.Pool) =>
  (await db.query<{ x: boolean }>(`SELECT to_regclass('webhook_inbox') IS NOT NULL AS x`)).rows[0]!.x;
const deliveriesCount = (inbox: boolean) =>
  inbox
    ? '((SELECT count(*) FROM webhook_deliveries) + (SELECT count(*) FROM webhook_inbox))'
    : '(SELECT count(*) FROM webhook_deliveries)';

async function upgradePart(): Promise<UpgradeResult> {
  const name = `${DB_PREFIX}upgrade`;
  const url = await server.createDb(name);
  const db = new pg.Pool({ connectionString: url, max: 3 });
  try {
    const c = await db.connect();
    await applyMigrationFiles(c, migrationsBefore(NEW_MIGRATION));
    c.release();
    log(`upgrade: applied the ${migrationsBefore(NEW_MIGRATION).length} migrations before ${NEW_MIGRATION}; filling…`);
    const t = Date.now();
    const uuids = await insertAccounts(db, ACCOUNTS);
    const span = 12 * 7 * DAY_MS;
    const stage = (n: number): Stage => ({ from: 0, to: n - 1, t0: new Date(Date.now() - span), spanS: span / 1000 });
    const messages = Math.round(UPGRADE_ROWS / 5);
    await loadRows(db, stage(messages), ACCOUNTS, {
      sql: MESSAGES_SQL,
      extra: [uuids],
      log,
      label: 'upgrade messages',
    });
    await loadRows(db, stage(UPGRADE_ROWS), ACCOUNTS, { sql: DELIVERIES_SQL, log, label: 'upgrade deliveries' });
    await loadRows(db, stage(UPGRADE_ROWS), ACCOUNTS, {
      sql: NEW_MIGRATION === LEAN_MIGRATION ? EVENTS_SQL_BEFORE : EVENTS_SQL,
      log,
      label: 'upgrade events',
    });
    await settle(db, '');
    const fillSeconds = (Date.now() - t) / 1000;
    const before = (
      await db.query<{ e: string; d: string; m: string; c: string }>(
        `SELECT (SELECT count(*) FROM events) e, ${deliveriesCount(await hasInbox(db))} d, (SELECT count(*) FROM messages) m, (SELECT sum(count) FROM event_counts) c`,
      )
    ).rows[0]!;
    log(
      `upgrade: old shape holds ${fmtInt(+before.e)} events (event_counts ${fmtInt(+before.c)}), ${fmtInt(+before.d)} deliveries, ${fmtInt(+before.m)} messages (${gib(await dbSize(db))}); migrating…`,
    );
    const file = migrationFolders().find((m) => m.name === NEW_MIGRATION)!.file;
    const statements = splitSql(fs.readFileSync(file, 'utf8'));
    const { value, conditions } = await server.measured(async () => {
      const client = await db.connect();
      const timings: { label: string; seconds: number; table: string }[] = [];
      const t0 = performance.now();
      try {
        await client.query(`SET maintenance_work_mem = '64MB'`);
        await client.query('BEGIN');
        for (const stmt of statements) {
          const s0 = performance.now();
          await client.query(stmt);
          timings.push({ label: statementLabel(stmt), seconds: (performance.now() - s0) / 1000, table: tableOf(stmt) });
        }
        const s0 = performance.now();
        await client.query('COMMIT');
        timings.push({ label: 'COMMIT', seconds: (performance.now() - s0) / 1000, table: 'other' });
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      } finally {
        client.release();
      }
      return { timings, totalSeconds: (performance.now() - t0) / 1000 };
    });
    const after = (
      await db.query<{ e: string; d: string; m: string; c: string }>(
        `SELECT (SELECT count(*) FROM events) e, ${deliveriesCount(await hasInbox(db))} d, (SELECT count(*) FROM messages) m, (SELECT sum(count) FROM event_counts) c`,
      )
    ).rows[0]!;
    const kept = after.e === before.e && after.d === before.d && after.m === before.m && after.c === before.c;
    const byTable: Record<string, number> = {};
    for (const s of value.timings) byTable[s.table] = (byTable[s.table] ?? 0) + s.seconds;
    log(
      `upgrade: ${value.totalSeconds.toFixed(2)} s in all; by table: ${Object.entries(byTable)
        .map(([k, v]) => `${k} ${v.toFixed(2)} s`)
        .join(', ')}; rows kept: ${kept}`,
    );
    for (const s of [...value.timings].sort((a, b) => b.seconds - a.seconds).slice(0, 8))
      log(`  ${s.seconds.toFixed(2).padStart(7)} s  ${s.label}`);
    return {
      rows: { events: +before.e, deliveries: +before.d, messages: +before.m },
      fillSeconds,
      totalSeconds: value.totalSeconds,
      byTable,
      statements: value.timings,
      kept,
      conditions,
    };
  } finally {
    await db.end();
    await server.dropDb(name);
  }
}

// ---------------------------------------------------------------------------------------------------------
// the report

const p = (s: Stats | undefined, d = 2) => (s ? `${fmt(s.p50, d)} / ${fmt(s.p99, d)}` : '–');
const mn = (n: number) => (n >= 1e6 ? `${fmt(n / 1e6, n % 1e6 === 0 ? 0 : 1)} M` : `${fmt(n / 1e3, 0)} k`);

function report(r: {
  stages: StageResult[];
  drop?: DropResult;
  width: WidthResult[];
  upgrade?: UpgradeResult;
  bytes: BytesResult[];
}): string {
  const out: string[] = [];
  if (r.bytes.length) {
    out.push(
      '**Bytes per status event, one per delivery, all in** (heap, TOAST, every index of both tables, after VACUUM)',
    );
    out.push('');
    out.push(`| Relation | ${r.bytes.map((b) => `${b.shape} @ ${mn(b.rows)}`).join(' | ')} |`);
    out.push(`|---|${r.bytes.map(() => '---:').join('|')}|`);
    const names = [...new Set(r.bytes.flatMap((b) => b.relations.map((x) => x.relation)))];
    for (const n of names)
      out.push(
        `| ${n} | ${r.bytes
          .map((b) => {
            const x = b.relations.find((y) => y.relation === n);
            return x ? fmtInt(x.bytes / b.rows) : '–';
          })
          .join(' | ')} |`,
      );
    out.push(`| **all in** | ${r.bytes.map((b) => `**${fmtInt(b.perEvent)}**`).join(' | ')} |`);
    out.push(`| load average (1/5/15 min) | ${r.bytes.map((b) => b.conditions.loadAvg.join(' / ')).join(' | ')} |`);
    out.push('');
  }
  if (r.stages.length) {
    out.push(
      `**Events list and feed, p50 / p99 ms over ${RUNS} runs** (one connection, prepared statements as the repository sends them; largest account ≈ ${Math.round(ACCOUNTS.shares[0]! * 100)} % of the rows)`,
    );
    out.push('');
    const passes = r.stages.some((s) => s.again.length > 0);
    out.push(
      `| Query | ${r.stages.map((s) => `${mn(s.rows)} events`).join(' | ')} | p99 spread | p99 without the bench's GC pauses | spread | Flat (≤ 20 %) | Backend CPU µs per run | Buffers per run (plan) |${passes ? ' Same rows, another pass: p99 spread |' : ''}`,
    );
    out.push(`|---|${r.stages.map(() => '---').join('|')}|---|---|---|---|---|---|${passes ? '---|' : ''}`);
    for (const label of r.stages[0]!.reads.map((q) => q.label)) {
      const row = r.stages.map((s) => s.reads.find((q) => q.label === label));
      const p99s = row.filter((q): q is QueryResult => !!q).map((q) => q.p99);
      const spread = Math.max(...p99s) / Math.min(...p99s) - 1;
      const cleanP99s = row.map((q) => q?.p99NoBenchGc ?? NaN);
      const cleanSpread = Math.max(...cleanP99s) / Math.min(...cleanP99s) - 1;
      const plans = row.map((q) => (q?.plan ? `${q.plan.buffers}` : '–')).join(' → ');
      const used = [...new Set(row.map((q) => q?.plan?.used).filter(Boolean))].join('/');
      const noise = r.stages.map((s) => {
        const all = [s.reads, ...s.again.map((a) => a.reads)]
          .map((rs) => rs.find((q) => q.label === label)?.p99)
          .filter((x): x is number => x !== undefined);
        return all.length > 1 ? `${fmt((Math.max(...all) / Math.min(...all) - 1) * 100, 0)} %` : '–';
      });
      const cpus = row.map((q) => q?.cpuUs ?? NaN);
      const cpu = cpus.map((c) => (Number.isFinite(c) ? fmt(c, 0) : '–')).join(' → ');
      const cpuSpread = cpus.every(Number.isFinite) ? Math.max(...cpus) / Math.min(...cpus) - 1 : NaN;
      const verdict = `p99 ${spread <= 0.2 ? 'yes' : '**no**'} · without GC ${cleanSpread <= 0.2 ? 'yes' : '**no**'}${Number.isFinite(cpuSpread) ? ` · CPU ${cpuSpread <= 0.2 ? 'yes' : '**no**'} (${fmt(cpuSpread * 100, 0)} %)` : ''}`;
      out.push(
        `| ${label} | ${row.map((q) => p(q)).join(' | ')} | ${fmt(spread * 100, 0)} % | ${cleanP99s.map((c) => fmt(c, 2)).join(' / ')} | ${fmt(cleanSpread * 100, 0)} % | ${verdict} | ${cpu} | ${plans} (${used}) |${passes ? ` ${noise.join(' · ')} |` : ''}`,
      );
    }
    out.push('');
    out.push(
      `| Stage | Rows | Partitions | Load (rows/s) | Database | Load avg (1/5/15) | CPU busy during the reads | Backend waited for a CPU, mean per run | PostgreSQL nice |`,
    );
    out.push(`|---|---|---|---|---|---|---|---|---|`);
    for (const s of r.stages) {
      const cpu = s.conditions.cpu
        ? Object.entries(s.conditions.cpu.cores)
            .map(([k, v]) => `${k} ${v.toFixed(2)}`)
            .join(', ')
        : 'n/a';
      const waits = s.reads.map((q) => q.waitUs ?? NaN).filter(Number.isFinite);
      const wait = waits.length ? `${fmt(waits.reduce((a, b) => a + b, 0) / waits.length, 0)} µs` : '–';
      out.push(
        `| ${mn(s.target)}${s.cut ? ' (cut: disk cap)' : ''} | ${fmtInt(s.rows)} | ${s.partitions} | ${fmtInt(s.load.rowsPerS)} | ${gib(s.bytes)} | ${s.conditions.loadAvg.join(' / ')} | ${cpu} | ${wait} | ${s.postgresNice} |`,
      );
    }
  }
  if (r.drop) {
    const d = r.drop;
    out.push('');
    out.push(
      `**Retention drop at ${fmtInt(d.rowsBefore)} events**: ${d.partitions.length} partitions (${d.partitions.join(', ')}), ${fmtInt(d.rowsDropped)} rows; an inserter stores 10 events every 10 ms through EventsRepository.insert meanwhile (p50 / p99 / max ms)`,
    );
    out.push('');
    out.push('| Pass | Dropped | Time | Inserts during it: p50 / p99 / max ms (n) |');
    out.push('|---|---|---|---|');
    out.push(`| before (inserter alone) | – | – | ${p(d.baseline)} / ${fmt(d.baseline.max, 1)} (${d.baseline.runs}) |`);
    out.push(
      `| a reader holds events for the whole pass (${fmt(d.blocked.readerHeldS, 1)} s) | ${d.blocked.dropped} | ${fmt(d.blocked.seconds, 2)} s | ${p(d.blocked.inserts)} / ${fmt(d.blocked.inserts.max, 1)} (${d.blocked.inserts.runs}) |`,
    );
    out.push(
      `| unhindered | ${d.clean.dropped} | **${fmt(d.clean.seconds, 3)} s** | ${p(d.clean.inserts)} / **${fmt(d.clean.inserts.max, 1)}** (${d.clean.inserts.runs}) |`,
    );
    out.push(`| after | – | – | ${p(d.after)} / ${fmt(d.after.max, 1)} (${d.after.runs}) |`);
    if (d.split) {
      const x = d.split;
      out.push(
        `| proposed: counts + detach, then DROP TABLE in a second transaction (same partitions, loaded again) | ${x.dropped} | **${fmt(x.seconds, 3)} s** (detach ${fmt(x.detachS, 3)} s, drop ${fmt(x.dropS, 3)} s) | ${p(x.inserts)} / **${fmt(x.inserts.max, 1)}** (${x.inserts.runs}); before ${p(x.baseline)} / ${fmt(x.baseline.max, 1)} |`,
      );
    }
    out.push('');
    out.push(
      `event_counts after the drop ${d.countsConsistent ? 'equals' : '**differs from**'} COUNT(*) of what is stored${d.split ? ` (after the proposed variant: ${d.split.countsConsistent ? 'equals' : '**differs**'})` : ''}. ${fmtConditions(d.conditions)}.`,
    );
  }
  if (r.width.length) {
    out.push('');
    out.push(
      `**Partition width: the same ${mn(r.width[0]!.rows)} events over 60 days, p50 / p99 ms over ${RUNS} runs**`,
    );
    out.push('');
    out.push(`| Query | ${r.width.map((w) => `${w.layout} (${w.partitions} partitions)`).join(' | ')} |`);
    out.push(`|---|${r.width.map(() => '---').join('|')}|`);
    for (const label of r.width[0]!.reads.map((q) => q.label)) {
      out.push(
        `| ${label} | ${r.width
          .map((w) => {
            const q = w.reads.find((x) => x.label === label);
            return `${p(q)}${q?.plan ? ` (${q.plan.used} plan, ${q.plan.buffers} buffers, planning ${fmt(q.plan.planningMs, 2)} ms)` : ''}`;
          })
          .join(' | ')} |`,
      );
    }
    out.push(
      `| no pruning: planning time (EXPLAIN) | ${r.width.map((w) => `${fmt(w.nonPruning.planningMs, 2)} ms`).join(' | ')} |`,
    );
    out.push(
      `| no pruning: relation locks held | ${r.width.map((w) => String(w.nonPruning.relationLocks)).join(' | ')} |`,
    );
    out.push('');
    for (const w of r.width) out.push(`${w.layout}: ${fmtConditions(w.conditions)}.  `);
  }
  if (r.upgrade) {
    const u = r.upgrade;
    out.push('');
    out.push(
      `**Upgrade** (migration ${NEW_MIGRATION} on a database of the previous shape; one transaction; maintenance_work_mem 64MB)`,
    );
    out.push('');
    out.push('| Table | Rows | Seconds | Seconds per million rows |');
    out.push('|---|---|---|---|');
    const rowsOf: Record<string, number> = {
      events: u.rows.events,
      webhook_deliveries: u.rows.deliveries,
      messages: u.rows.messages,
    };
    for (const [t, s] of Object.entries(u.byTable).sort((a, b) => b[1] - a[1])) {
      out.push(
        `| ${t} | ${rowsOf[t] !== undefined ? fmtInt(rowsOf[t]) : '–'} | ${fmt(s, 2)} | ${rowsOf[t] ? fmt(s / (rowsOf[t] / 1e6), 1) : '–'} |`,
      );
    }
    out.push(`| **whole migration** | | **${fmt(u.totalSeconds, 2)}** | |`);
    out.push('');
    out.push(
      `Every row kept (counts of events, deliveries, messages and the event_counts total equal before and after): ${u.kept ? 'yes' : '**NO**'}. ${fmtConditions(u.conditions)}.`,
    );
  }
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------------------

server.cleanupOnSignals();

try {
  const m = machine();
  printMachine(m);
  await server.start();
  const settings = await server.settings();
  const nice = server.nice;
  log(
    `PostgreSQL ${settings.server_version} (postmaster pid ${server.postmasterPid || 'unknown'}, nice ${Number.isNaN(nice) ? 'unknown' : nice}); ${JSON.stringify(settings)}`,
  );
  log(
    `sizes ${SIZES.map(mn).join(', ')} · runs ${RUNS} · width ${mn(WIDTH_ROWS)} · upgrade ${mn(UPGRADE_ROWS)} · parts ${[...PARTS].join(',')} · drop at ${mn(DROP_AT)}`,
  );
  const result: {
    stages: StageResult[];
    drop?: DropResult;
    width: WidthResult[];
    upgrade?: UpgradeResult;
    bytes: BytesResult[];
  } = {
    stages: [],
    width: [],
    bytes: [],
  };
  if (PARTS.has('upgrade')) result.upgrade = await upgradePart();
  if (PARTS.has('bytes'))
    for (const rows of BYTES_ROWS)
      for (const shape of BYTES_SHAPES) result.bytes.push(...(await bytesPart(shape, rows)));
  if (PARTS.has('width')) result.width = [await widthLayout('daily'), await widthLayout('weekly')];
  if (PARTS.has('queries')) Object.assign(result, await queriesPart());
  const table = report(result);
  console.log(`\n${table}\n`);
  writeResult('storage', {
    machine: m,
    finishedLoadAvg: os.loadavg(),
    postgres: { settings, nice },
    config: { SIZES, RUNS, DAYS, WIDTH_ROWS, UPGRADE_ROWS, DROP_AT, shares: ACCOUNTS.shares },
    ...result,
    summaryMarkdown: table,
  });
  await server.cleanup();
  process.exit(0);
} catch (e) {
  console.error('[bench] failed:', e instanceof Error ? (e.stack ?? e.message) : e);
  await server.cleanup();
  process.exit(1);
}
