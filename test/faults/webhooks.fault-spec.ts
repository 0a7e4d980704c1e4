// Fault suite (`npm run test:faults`): the real API and worker as separate node processes against a
// PostgreSQL and a Redis that this suite starts, stops and restarts itself, with signed webhook deliveries
// posted at a steady rate while the fault happens. After each scenario every acknowledged delivery must be
// stored and every event stored and processed exactly once; the counts are printed.
//
// Environment: FAULTS_KEEP_LOGS=1 keeps the run's directory (logs of API, worker, PostgreSQL, Redis; kept anyway
// on failure); FAULTS_API_LOG_LEVEL=info logs every request of the API. One scenario: npm run test:faults -- -t "b\."
// FAULTS_REDIS_LOOPS (default 3) and FAULTS_BUSY_LOOPS (default 2) size scenario a2: Redis stopped and restarted that
// many times in a row while that many busy-loop processes take the CPU (the promise must not depend on the host's
// speed). A long rehearsal: FAULTS_REDIS_LOOPS=20 npm run test:faults -- -t "a2\."
//
// "Processed once" is measured: a test-only trigger records every committed claim of an event (and every
// message status change), so an event applied twice, or a status moved twice, shows up in the counts.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  appEnv,
  build,
  httpStatus,
  startApi,
  startWorker,
  type NodeProcessOptions,
  type Served,
} from '../../scripts/stack/app.js';
import type { Postgres } from '../../scripts/stack/postgres.js';
import { stopAll, tail } from '../../scripts/stack/process.js';
import type { Redis as RedisServer } from '../../scripts/stack/redis.js';
import { Db, progress, startDataServices } from './db.js';
import { rebatch, send, steady, type Scheduled } from './load.js';
import { Scenarios, type Scenario } from './scenario.js';
import { poll } from '../utils/poll.js';
const SECRET = 'fault-suite-9f3c2a7b1e6d4c8a0b5f2e7d9c1a3b6e';
/**
 * A ceiling, not a budget: the wait after the load ends stops as soon as every delivery is processed and every event
 * stored and processed, which on a quiet host takes 1-15 s (a killed worker's jobs are taken over after their 15 s
 * lock). The sweeper's bound after Redis answers again is SWEEP_MIN_AGE_MS (5 s) + one interval (2 s here), plus one
 * more interval for a delivery whose batch job ended without it; only a real loss, or a host many times slower, gets
 * near this.
 */
const SETTLE_CEILING_MS = 180_000;
/** The sender stops retrying after this (each scenario's load itself takes about 10 s). */
const SEND_DEADLINE_MS = 30_000;
/** Per attempt: an answer slower than this counts as lost (Meta gives up on a request after a while too). */
const ATTEMPT_TIMEOUT_MS = 20_000;
/** Duplicate storm: each delivery posted this many times, this many of them at the same instant. */
const COPIES = 6;
const COPIES_AT_ONCE = 4;

// A scenario takes 10-25 s on a quiet host; the bound only matters when something hangs (send deadline + settle
// ceiling + checks).
jest.setTimeout(360_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const out = (line: string) => process.stdout.write(`[faults] ${line}\n`);

let dir: string;
let pgServer: Postgres;
let redis: RedisServer;
let api: Served;
let worker: Served;
let workerOpts: NodeProcessOptions;
let db: Db;
let failed = false;
let scenarios: Scenarios;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bmapi-faults-'));
  await guard(startStack);
}, 240_000);

async function startStack(): Promise<void> {
  const t = Date.now();
  const built = await build();
  const data = await startDataServices(dir);
  ({ pgServer, redis } = data);
  const databaseUrl = data.databaseUrl;
  db = new Db(databaseUrl);
  scenarios = new Scenarios({ db, secret: SECRET, out, stragglers, settleCeilingMs: SETTLE_CEILING_MS });
  // Ids above 2^31, as in the main suite: a 32-bit id anywhere on the webhook path fails a scenario.
  await db.moveIdsAboveInt32();
  await db.installAudit();
  const env = {
    // Nothing upstream is called by the webhook path; a closed loopback port makes any accidental call fail fast.
    ...appEnv({
      databaseUrl,
      redisUrl: redis.url,
      appSecret: SECRET,
      encryptionKey: randomBytes(32).toString('hex'),
      queuePrefix: 'faults',
      upstreamBaseUrl: 'http://127.0.0.1:9/v25.0',
    }),
    WEBHOOK_SWEEP_INTERVAL_MS: '2000',
  };
  workerOpts = { name: 'worker', logDir: dir, env: { ...env, LOG_LEVEL: 'info' } };
  [api, worker] = await Promise.all([
    startApi({ name: 'api', logDir: dir, env: { ...env, LOG_LEVEL: process.env.FAULTS_API_LOG_LEVEL ?? 'warn' } }),
    startWorker(workerOpts),
  ]);
  // Warm-up (first queries, JIT), so that the scenarios' latencies are the steady state's.
  const warm = await scenarios.prepare('warmup', 10, { inbound: 5 });
  const warmStats = await send(steady(warm.workload.deliveries, 50), {
    url: api.url,
    retry: true,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    deadlineMs: 30_000,
  });
  await scenarios.settle(warm);
  if (warmStats.acked !== warm.workload.deliveries.length)
    throw new Error(`warm-up: ${JSON.stringify(warmStats.answers)}`);
  out(
    `stack up in ${secs(Date.now() - t)}${built.built ? ` (built dist in ${secs(built.ms)})` : ''}: PostgreSQL 127.0.0.1:${pgServer.port}, ` +
      `Redis 127.0.0.1:${redis.port}, API ${api.url} (pid ${api.proc.pid}), worker pid ${worker.proc.pid}; logs in ${dir}`,
  );
}

afterAll(async () => {
  if (scenarios?.summary.length) {
    out('summary:');
    for (const line of scenarios.summary) out(`  ${line}`);
  }
  await db?.close().catch(() => undefined);
  // Worker and API first (they hold connections), then Redis, PostgreSQL last.
  const rank: Record<string, number> = { worker: 0, api: 1, redis: 2, postgres: 3 };
  await stopAll((c) => rank[c.name] ?? 0);
  if (dir) {
    if (failed || process.env.FAULTS_KEEP_LOGS)
      out(`logs kept in ${dir} (api.log, worker.log, postgres.log, redis.log)`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

/** The deliveries of this scenario still `received`, each with the state of the job the sweeper gives it. */
async function stragglers(s: Scenario): Promise<string> {
  const rows = await db.query<{ id: string; batch_id: string | null; received_at: Date }>(
    `SELECT id, batch_id, received_at FROM webhook_inbox WHERE $1 = ANY (waba_ids) AND status = 'received' ORDER BY id LIMIT 20`,
    [s.tenant.wabaId],
  );
  const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const described: string[] = [];
    for (const r of rows) {
      const jobId = r.batch_id ? `batch-${r.batch_id}` : `delivery-${r.id}`;
      const key = `faults:webhook-deliveries:${jobId}`;
      const [exists, finished] = [await client.exists(key), await client.hget(key, 'finishedOn')];
      described.push(
        `${r.id} (received ${r.received_at.toISOString()}, job ${jobId} ${exists ? (finished ? 'ended' : 'live') : 'missing'})`,
      );
    }
    return described.join(', ') || 'none';
  } catch (err) {
    return `${rows.map((r) => r.id).join(', ')} (Redis not asked: ${String(err)})`;
  } finally {
    client.disconnect();
  }
}

/** Processes that only burn CPU, one per core by default, as a busy host's neighbours would. */
function busyLoops(count: number): { stop(): void } {
  const procs: ChildProcess[] = [];
  for (let i = 0; i < count; i++)
    procs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore', detached: false }));
  return { stop: () => procs.forEach((p) => p.kill('SIGKILL')) };
}

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    failed = true;
    out(
      `failure; last lines of the API log:\n${tail(path.join(dir, 'api.log'), 15)}\n[faults] last lines of the worker log:\n${tail(path.join(dir, 'worker.log'), 15)}`,
    );
    throw err;
  }
}

/** Jobs BullMQ holds as active for the worker right now (0 when Redis is unreachable). */
async function activeJobs(): Promise<number> {
  const client = new Redis(redis.url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 1000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.llen('faults:webhook-deliveries:active');
  } catch {
    return 0;
  } finally {
    client.disconnect();
  }
}

/** Scenario a2's size: rounds of Redis restarts, and busy-loop processes beside them (see the file's header). */
const REDIS_LOOPS = Number(process.env.FAULTS_REDIS_LOOPS ?? 3);
const BUSY_LOOPS = Number(process.env.FAULTS_BUSY_LOOPS ?? 2);

/**
 * Deliveries posted at 40/s; Redis stopped `upAfterMs` into the load and started again (empty: every queued job gone)
 * `downMs` later. Every POST is answered 200 (the receiver never needs Redis), and once Redis answers the sweeper gives
 * every stored delivery without a live job one: each event stored and processed exactly once.
 */
async function redisRestart(
  name: string,
  label: string,
  opts: { messages: number; inbound: number; upAfterMs: number; downMs: number },
): Promise<void> {
  const t = Date.now();
  const s = await scenarios.prepare(label, opts.messages, { inbound: opts.inbound });
  const sending = send(steady(s.workload.deliveries, 40), {
    url: api.url,
    retry: true,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    deadlineMs: SEND_DEADLINE_MS,
  });
  await sleep(opts.upAfterMs);
  await redis.stop();
  const downAt = Date.now();
  await sleep(opts.downMs);
  const atRestart = await progress(db, s.tenant.wabaId);
  await redis.start();
  const downMs = Date.now() - downAt;
  const stats = await sending;
  const o = await scenarios.conclude(
    name,
    s,
    stats,
    t,
    `Redis down ${secs(downMs)} (restarted empty: every queued job gone), ${atRestart.received} deliveries waiting for the sweeper when it returned`,
  );
  // Nothing but 200: the receiver never needs Redis to acknowledge.
  expect(stats.answers).toEqual({ '200': stats.posts });
  expect(atRestart.received).toBeGreaterThan(0);
  scenarios.expectExactlyOnce(o);
  expect(await httpStatus(`${api.url}/health/ready`)).toBe(200);
}

describe('Fault suite: webhook ingest and processing under failures', () => {
  it('a. Redis stopped during ingest and restarted: every POST answered 200, the sweeper re-enqueues, each event processed once', () =>
    guard(() =>
      redisRestart('a. Redis stopped', 'redis', { messages: 150, inbound: 60, upAfterMs: 2500, downMs: 4000 }),
    ));

  it(`a2. Redis stopped and restarted ${REDIS_LOOPS} times in a row with ${BUSY_LOOPS} busy loops taking the CPU: exact every time`, () =>
    guard(async () => {
      const busy = busyLoops(BUSY_LOOPS);
      try {
        for (let round = 1; round <= REDIS_LOOPS; round++) {
          await redisRestart(`a2. Redis restart ${round}/${REDIS_LOOPS} under load`, `redis-loop-${round}`, {
            messages: 60,
            inbound: 20,
            // Stopped at varying points of the load: before, during and near the end of a job window's writes.
            upAfterMs: 500 + ((round * 700) % 2500),
            downMs: 2000 + ((round * 900) % 3000),
          });
        }
      } finally {
        busy.stop();
      }
    }));

  it('b. worker killed (SIGKILL) mid-batch and restarted: each event processed once', () =>
    guard(async () => {
      const t = Date.now();
      const s = await scenarios.prepare('worker', 200, { inbound: 60, bigDeliveries: { count: 6, size: 60 } });
      const n = s.workload.expected.length;
      const sending = send(steady(s.workload.deliveries, 60), {
        url: api.url,
        retry: true,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
        deadlineMs: SEND_DEADLINE_MS,
      });
      // Kill while it is busy: some events applied, more stored and waiting, jobs active. The worker keeps up
      // with this load, so once a quarter is processed the tenant's messages are locked: every job that reaches
      // a status then waits inside its transaction, and the kill lands in the middle of those jobs.
      const deadline = Date.now() + 10_000;
      await poll(() => progress(db, s.tenant.wabaId), { done: (p) => p.processed >= n * 0.25, timeoutMs: 10_000 });
      const blocker = await db.pool.connect();
      await blocker.query('BEGIN');
      await blocker.query('SELECT id FROM messages WHERE business_account_id = $1::uuid ORDER BY id FOR UPDATE', [
        s.tenant.businessAccountId,
      ]);
      const active = await poll(activeJobs, {
        done: (active) => active >= 4,
        timeoutMs: deadline + 10_000 - Date.now(),
      });
      const killedPid = worker.proc.pid;
      await worker.proc.kill();
      await blocker.query('ROLLBACK');
      blocker.release();
      const after = await progress(db, s.tenant.wabaId);
      await sleep(1500);
      worker = await startWorker(workerOpts);
      const stats = await sending;
      const o = await scenarios.conclude(
        'b. worker SIGKILL',
        s,
        stats,
        t,
        `killed pid ${killedPid} with ${active} jobs active, ${after.processed}/${after.events} stored events processed at the kill; restarted as pid ${worker.proc.pid}`,
      );
      expect(stats.answers).toEqual({ '200': stats.posts });
      // Killed mid-batch: jobs were running (waiting on the locked messages) and events were still to process.
      expect(active).toBeGreaterThanOrEqual(4);
      expect(after.processed).toBeLessThan(n);
      scenarios.expectExactlyOnce(o);
    }));

  it('c. PostgreSQL restarted during ingest: 503 (never 200) while down, Meta-style retries, API and worker recover by themselves', () =>
    guard(async () => {
      const t = Date.now();
      const apiPid = api.proc.pid;
      const workerPid = worker.proc.pid;
      const s = await scenarios.prepare('postgres', 150, { inbound: 60 });
      const sending = send(steady(s.workload.deliveries, 40), {
        url: api.url,
        retry: true,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
        deadlineMs: SEND_DEADLINE_MS,
      });
      await sleep(3000);
      const stoppingAt = Date.now();
      await pgServer.stop();
      const downFrom = Date.now();
      await sleep(3000);
      const downTo = Date.now();
      await pgServer.start();
      const downMs = Date.now() - stoppingAt;
      const stats = await sending;
      // Attempts made and answered entirely while PostgreSQL was stopped: each must be a 503.
      const whileDown: Record<string, number> = {};
      for (const a of stats.attempts) {
        if (a.startedAt >= downFrom && a.endedAt <= downTo) whileDown[a.status] = (whileDown[a.status] ?? 0) + 1;
      }
      const o = await scenarios.conclude(
        'c. PostgreSQL restarted',
        s,
        stats,
        t,
        `PostgreSQL down ${secs(downMs)} (stopping and starting included); 503s ${stats.answers['503'] ?? 0} between ${secs(stats.firstNon200At ?? 0)} and ${secs(stats.lastNon200At ?? 0)} of the load; ` +
          `answers to attempts made entirely while it was stopped: ${JSON.stringify(whileDown)}; ` +
          `API pid ${api.proc.pid} and worker pid ${worker.proc.pid} not restarted`,
      );
      // While PostgreSQL is down the answer is 503 (Meta retries it), never 200 and nothing else.
      expect(Object.keys(stats.answers).sort()).toEqual(['200', '503']);
      expect(stats.answers['503']).toBeGreaterThan(0);
      expect(Object.keys(whileDown)).toEqual(['503']);
      scenarios.expectExactlyOnce(o);
      expect({
        api: api.proc.pid,
        apiAlive: api.proc.alive(),
        worker: worker.proc.pid,
        workerAlive: worker.proc.alive(),
      }).toEqual({
        api: apiPid,
        apiAlive: true,
        worker: workerPid,
        workerAlive: true,
      });
      expect(await httpStatus(`${api.url}/health/ready`)).toBe(200);
    }));

  it('c2. PostgreSQL connections killed repeatedly during ingest (pg_terminate_backend): no crash, no loss, each event once', () =>
    guard(async () => {
      const t = Date.now();
      const apiPid = api.proc.pid;
      const workerPid = worker.proc.pid;
      const s = await scenarios.prepare('terminate', 150, { inbound: 60, bigDeliveries: { count: 4, size: 40 } });
      const sending = send(steady(s.workload.deliveries, 50), {
        url: api.url,
        retry: true,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
        deadlineMs: SEND_DEADLINE_MS,
      });
      // Every connection of the API and the worker cut, ten times, while both are busy.
      let killed = 0;
      await sleep(1000);
      for (let round = 0; round < 10; round++) {
        const rows = await db.queryRetrying<{ n: string }>(
          `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = 'bmapi' AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
        );
        killed += Number(rows[0]!.n);
        await sleep(600);
      }
      const stats = await sending;
      const o = await scenarios.conclude(
        'c2. connections killed',
        s,
        stats,
        t,
        `${killed} PostgreSQL connections terminated in 10 rounds; API pid ${api.proc.pid} and worker pid ${worker.proc.pid} not restarted`,
      );
      // A cut connection may fail an insert (503, which Meta retries); nothing else.
      expect(Object.keys(stats.answers).filter((k) => k !== '200' && k !== '503')).toEqual([]);
      expect(killed).toBeGreaterThan(0);
      scenarios.expectExactlyOnce(o);
      expect({
        api: api.proc.pid,
        apiAlive: api.proc.alive(),
        worker: worker.proc.pid,
        workerAlive: worker.proc.alive(),
      }).toEqual({
        api: apiPid,
        apiAlive: true,
        worker: workerPid,
        workerAlive: true,
      });
    }));

  it('d. a storm of duplicates: one event per distinct item, effects applied once, event_counts exact', () =>
    guard(async () => {
      const t = Date.now();
      const s = await scenarios.prepare('storm', 70, { inbound: 30 });
      const base = s.workload.deliveries;
      // Meta may also batch an item it already delivered into a new delivery: different bytes, same items.
      const rebatched: typeof base = [];
      for (let i = 0; i + 2 < 60; i += 3) rebatched.push(rebatch(s.tenant, base.slice(i, i + 3), SECRET));
      const all = [...base, ...rebatched];
      const schedule: Scheduled[] = [];
      all.forEach((delivery, i) => {
        const at = (i * 1000) / 60;
        // 4 identical copies at the same instant, then 2 late redeliveries within the next 3 s.
        for (let c = 0; c < COPIES_AT_ONCE; c++) schedule.push({ delivery, at });
        for (let c = 0; c < COPIES - COPIES_AT_ONCE; c++) schedule.push({ delivery, at: at + Math.random() * 3000 });
      });
      const stats = await send(schedule, {
        url: api.url,
        retry: true,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
        deadlineMs: SEND_DEADLINE_MS,
        maxInFlight: 48,
      });
      const o = await scenarios.conclude(
        'd. duplicate storm',
        s,
        stats,
        t,
        `${base.length} distinct deliveries + ${rebatched.length} re-batched, each posted ${COPIES} times (${COPIES_AT_ONCE} at once)`,
      );
      expect(stats.answers).toEqual({ '200': stats.posts });
      expect(stats.acked).toBe(all.length * COPIES);
      scenarios.expectExactlyOnce(o);
    }));
});
