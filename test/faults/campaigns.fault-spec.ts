// Fault suite, campaigns (issue 27): the real API, two worker processes and the simulator as node processes on this
// suite's own PostgreSQL and Redis. A campaign on a HIGH number (1,000 sends per PACING_WINDOW_MS) while (a) a worker
// is SIGKILLed mid-run and another takes over, (b) runs are queued several times over on two workers, (c) Redis is
// stopped mid-run and comes back empty, (d) PostgreSQL is restarted mid-run. Afterwards Meta (the simulator) must have
// received no recipient twice, and every recipient shows what happened to it.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  appEnv,
  build,
  startApi,
  startSimulator,
  startWorker,
  type NodeProcessOptions,
  type Served,
} from '../../scripts/stack/app.js';
import type { Postgres } from '../../scripts/stack/postgres.js';
import { freePort, stopAll, tail } from '../../scripts/stack/process.js';
import type { Redis as RedisServer } from '../../scripts/stack/redis.js';
import { apiAt, onboardOver } from '../utils/factories.js';
import { poll } from '../utils/poll.js';
import { startDataServices } from './db.js';
import { call as httpCall, type Json } from './http.js';

const SECRET = 'fault-suite-campaigns-7c1e9a3b5d2f4e6a8b0c';
const PREFIX = 'faultsc';
// Ceilings, not budgets (a slow, busy host may take several times as long; every wait ends when its condition holds).
jest.setTimeout(600_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const out = (line: string) => process.stdout.write(`[faults:campaigns] ${line}\n`);

let dir: string;
let pgServer: Postgres;
let redis: RedisServer;
let sim: Served;
let api: Served;
let workers: Served[] = [];
let workerOpts: (name: string) => NodeProcessOptions;
let pool: pg.Pool;
let failed = false;
let cookie = '';
let wabaId = '';
let phoneNumberId = '';

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    failed = true;
    for (const name of ['api', 'worker-1', 'worker-2', 'worker-3'])
      out(`last lines of ${name}.log:\n${tail(path.join(dir, `${name}.log`), 12)}`);
    throw err;
  }
}

/** A call with the operator's session, once logged in. */
const call = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
  httpCall(method, url, body, { ...(cookie ? { cookie } : {}), ...headers });

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bmapi-faults-campaigns-'));
  await guard(async () => {
    await build();
    const data = await startDataServices(dir);
    ({ pgServer, redis } = data);
    const databaseUrl = data.databaseUrl;
    pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    // Scenario d stops PostgreSQL: the suite's idle connections end with it, which must not fail the suite.
    pool.on('error', () => undefined);
    await pool.query(fs.readFileSync(new URL('../../scripts/lib/ids-above-int32.sql', import.meta.url), 'utf8'));
    const [simPort, apiPort] = [await freePort(), await freePort()];
    sim = await startSimulator({
      name: 'simulator',
      logDir: dir,
      port: simPort,
      env: {
        WHATSAPP_APP_SECRET: SECRET,
        SIMULATOR_WEBHOOK_URL: `http://127.0.0.1:${apiPort}/webhooks/whatsapp`,
        SIMULATOR_STATUS_DELAYS_MS: '20,40,60',
      },
    });
    const env = {
      ...appEnv({
        databaseUrl,
        redisUrl: redis.url,
        appSecret: SECRET,
        encryptionKey: randomBytes(32).toString('hex'),
        queuePrefix: PREFIX,
        upstreamBaseUrl: `${sim.url}/v25.0`,
      }),
      SIGNUP_MODE: 'open',
      CAMPAIGN_LEASE_MS: '3000',
      CAMPAIGN_UNCONFIRMED_AFTER_MS: '5000',
      // A status webhook is processed at most WEBHOOK_HOLD_PROCESSING_MAX_MS late (acknowledgements first), and a send
      // whose status has not come within CAMPAIGN_UNCONFIRMED_AFTER_MS is failed as unconfirmed: the defaults keep the
      // first well below the second (10 s, 60 s), and so does this shortened run (docs/operations-and-scaling.md).
      WEBHOOK_HOLD_PROCESSING_MAX_MS: '2000',
      // As the e2e stacks: the pacer's margin over Meta's second for a host where the simulator, the API, three workers
      // and PostgreSQL share two cores (default 1,040 ms). At 1,000/s a send is 1 ms from the next, and a simulator
      // kept off the CPU for 40 ms stamps a second's sends into less than a second: with two busy loops beside the
      // suite (2026-12-04), 16 sends of scenario c were refused 130429 before Redis was even stopped.
      PACING_WINDOW_MS: '1300',
      LOG_LEVEL: 'info',
    };
    workerOpts = (name) => ({ name, logDir: dir, env });
    [api, ...workers] = await Promise.all([
      startApi({ name: 'api', logDir: dir, port: apiPort, env: { ...env, LOG_LEVEL: 'warn' } }),
      startWorker(workerOpts('worker-1')),
      startWorker(workerOpts('worker-2')),
    ]);

    // The console's onboarding, over HTTP (test/utils/factories.ts): signup, login, a simulator account connected
    // and synced, its number HIGH.
    const tenant = await onboardOver(apiAt(api.url), sim.url, { organizationName: 'Faults Org', level: 'HIGH' });
    ({ cookie } = tenant.operator);
    ({ wabaId, phoneNumberId } = tenant.account);
    out(
      `stack up: PostgreSQL ${pgServer.port}, Redis ${redis.url}, simulator ${sim.url}, API ${api.url}, workers ${workers.map((w) => w.proc.pid).join(', ')}; logs in ${dir}`,
    );
  });
}, 240_000);

afterAll(async () => {
  await pool?.end().catch(() => undefined);
  const rank: Record<string, number> = {
    'worker-1': 0,
    'worker-2': 0,
    'worker-3': 0,
    api: 1,
    simulator: 2,
    redis: 3,
    postgres: 4,
  };
  await stopAll((c) => rank[c.name] ?? 0);
  if (dir) {
    if (failed || process.env.FAULTS_KEEP_LOGS) out(`logs kept in ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

/**
 * Each campaign's 3-digit tag: one past the last, from a random start (Date.now() % 1000 per campaign gave two of a run
 * the same tag now and then: the second's recipients then counted the first's sends as theirs, "sent twice").
 */
let lastTag = Math.floor(Math.random() * 1000);

/** A campaign of `n` fresh recipients of hello_world; its id and the recipients. */
async function startCampaign(label: string, n: number): Promise<{ id: number; tos: string[] }> {
  lastTag = (lastTag + 1) % 1000;
  const tag = String(lastTag).padStart(3, '0');
  const tos = Array.from({ length: n }, (_, i) => `4479${tag}${String(i).padStart(5, '0')}`);
  const res = await call('POST', `${api.url}/business-accounts/${wabaId}/campaigns`, {
    name: label,
    phoneNumberId,
    templateName: 'hello_world',
    templateLanguage: 'en_US',
    recipients: tos.map((to) => ({ to })),
  });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, tos };
}

/** What the simulator received per recipient of this list: accepted (200) answers and all attempts. */
async function upstreamOf(
  tos: string[],
): Promise<{ accepted: Map<string, number>; attempts: Map<string, number>; refused130429: number; times: number[] }> {
  const wanted = new Set(tos);
  const { data } = (await call('GET', `${sim.url}/_sim/sends`)).body as {
    data: { at: string; body: { to?: string }; response: { status: number; body: { error?: { code?: number } } } }[];
  };
  const accepted = new Map<string, number>();
  const attempts = new Map<string, number>();
  const times: number[] = [];
  let refused130429 = 0;
  for (const s of data) {
    const to = (s.body?.to ?? '').replace(/\D/g, '');
    if (!wanted.has(to)) continue;
    attempts.set(to, (attempts.get(to) ?? 0) + 1);
    times.push(Date.parse(s.at));
    if (s.response.status === 200) accepted.set(to, (accepted.get(to) ?? 0) + 1);
    if (s.response.body?.error?.code === 130429) refused130429++;
  }
  return { accepted, attempts, refused130429, times };
}

/** Sends of these recipients that reached the simulator between two instants (its clock is this host's). */
async function sendsBetween(tos: string[], from: number, to: number): Promise<number> {
  return (await upstreamOf(tos)).times.filter((t) => t >= from && t < to).length;
}

/** Recipients accepted by Meta so far (sent, delivered or read). */
const sentOf = (c: { counts: Record<string, number> }) => c.counts.sent! + c.counts.delivered! + c.counts.read!;

/** The campaign as the console shows it (waiting out an API that is still reconnecting to PostgreSQL). */
async function campaign(id: number): Promise<Json> {
  const res = await poll(
    () => call('GET', `${api.url}/business-accounts/${wabaId}/campaigns/${id}`).catch(() => null),
    {
      done: (r) => r?.status === 200,
      timeoutMs: 90_000,
      intervalMs: 250,
    },
  );
  return res?.body?.data;
}

/** The campaign once `done` holds (or as it is when the time is up: the caller's expect shows it). */
function until(id: number, done: (c: Json) => boolean, timeoutMs: number): Promise<Json> {
  return poll(() => campaign(id), { done, timeoutMs, intervalMs: 250 });
}

/** Every recipient's status and error title, from the database (the recipients list, unpaged). */
async function recipientStates(
  id: number,
): Promise<Map<string, { status: string; title: string | null; category: string | null }>> {
  const { rows } = await pool.query<{ to: string; status: string; title: string | null; category: string | null }>(
    `SELECT r."to", CASE WHEN r.state <> 'claimed' THEN r.state WHEN m.status = 'pending' THEN 'sending' ELSE m.status END AS status,
            m.error_title AS title, m.error_category AS category
       FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id WHERE r.campaign_id = $1`,
    [id],
  );
  return new Map(rows.map((r) => [r.to, { status: r.status, title: r.title, category: r.category }]));
}

/**
 * Nobody twice at Meta; every recipient Meta accepted shows it; the others were never sent, each failed with an
 * unknown outcome (category retryable: unconfirmed after its runner died, or a connection reset before any answer),
 * which the service never resends by itself.
 */
async function expectEachOnce(
  id: number,
  tos: string[],
  label: string,
  extra: string,
): Promise<{ accepted: number; unconfirmed: number }> {
  const up = await upstreamOf(tos);
  const states = await recipientStates(id);
  const twice = tos.filter((to) => (up.attempts.get(to) ?? 0) > 1);
  const acceptedButNotShown = tos.filter(
    (to) => up.accepted.get(to) === 1 && !['sent', 'delivered', 'read'].includes(states.get(to)!.status),
  );
  const notSent = tos.filter((to) => !up.accepted.has(to));
  const inDoubt = notSent.filter(
    (to) => states.get(to)!.status === 'failed' && states.get(to)!.category === 'retryable',
  );
  const unconfirmed = inDoubt.filter((to) => /^Unconfirmed/.test(states.get(to)!.title ?? ''));
  const reasons = [...new Set(inDoubt.map((to) => states.get(to)!.title))].join(' | ');
  const line = `${label}: ${tos.length} recipients, accepted by Meta ${up.accepted.size}, sent twice ${twice.length}, accepted but not shown ${acceptedButNotShown.length}, never sent ${notSent.length} (outcome unknown ${inDoubt.length}, of which unconfirmed ${unconfirmed.length}: ${reasons || '-'}), 130429 ${up.refused130429}; ${extra}`;
  out(line);
  expect({
    twice: twice.length,
    acceptedButNotShown: acceptedButNotShown.length,
    notSentNotInDoubt: notSent.length - inDoubt.length,
    refused130429: up.refused130429,
  }).toEqual({
    twice: 0,
    acceptedButNotShown: 0,
    notSentNotInDoubt: 0,
    refused130429: 0,
  });
  return { accepted: up.accepted.size, unconfirmed: inDoubt.length };
}

describe('campaigns under faults', () => {
  it('a. a worker SIGKILLed mid-campaign: another takes over after the lease; nobody is sent twice', () =>
    guard(async () => {
      const { id, tos } = await startCampaign('killed worker', 6000);
      // Kill the worker that holds it while it sends (about a third done).
      const first = await until(id, (c) => c.counts.sent + c.counts.delivered + c.counts.read >= 1500, 90_000);
      const { rows } = await pool.query<{ owner: string }>(`SELECT lease_owner AS owner FROM campaigns WHERE id = $1`, [
        id,
      ]);
      const pid = Number(rows[0]!.owner.split(':')[1]);
      const victim = workers.find((w) => w.proc.pid === pid);
      expect(victim).toBeDefined();
      await victim!.proc.kill();
      workers = workers.filter((w) => w !== victim);
      const atKill = first.counts;
      workers.push(await startWorker(workerOpts('worker-3')));
      const done = await until(id, (c) => c.status === 'completed', 270_000);
      expect(done.status).toBe('completed');
      const r = await expectEachOnce(
        id,
        tos,
        'a. worker SIGKILL',
        `killed pid ${pid} at ${JSON.stringify(atKill)}; final counts ${JSON.stringify(done.counts)}`,
      );
      // Only the sends in flight at the kill can be in doubt: at most about half a second of the pace.
      expect(r.unconfirmed).toBeLessThanOrEqual(600);
      expect(r.accepted).toBeGreaterThanOrEqual(tos.length - 600);
    }));

  it('b. the same campaign run several times at once (duplicate jobs on two workers): each recipient once', () =>
    guard(async () => {
      const { id, tos } = await startCampaign('duplicate runs', 4000);
      const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
      const queue = new Queue('campaigns', { connection, prefix: PREFIX });
      await Promise.all(
        [1, 2, 3, 4].map((i) => queue.add('run-campaign', { campaignId: id }, { jobId: `campaign-${id}-dup-${i}` })),
      );
      await queue.close();
      connection.disconnect();
      const done = await until(id, (c) => c.status === 'completed', 180_000);
      expect(done.status).toBe('completed');
      const r = await expectEachOnce(id, tos, 'b. duplicate runs', `final counts ${JSON.stringify(done.counts)}`);
      // Nothing was killed here: only a connection reset before any answer can leave a recipient in doubt.
      expect(r.unconfirmed).toBeLessThanOrEqual(20);
      expect(done.counts.sent + done.counts.delivered + done.counts.read).toBe(r.accepted);
    }));

  it('c. Redis stopped mid-campaign (it comes back empty: the pacer, the hold and the queued run gone): no send while it is away, the campaign goes on by itself, each recipient once', () =>
    guard(async () => {
      const { id, tos } = await startCampaign('redis stopped', 5000);
      await until(id, (c) => sentOf(c) >= 1200, 90_000);
      await redis.stop();
      const downAt = Date.now();
      await sleep(5500);
      const atRestart = await campaign(id);
      const upAt = Date.now();
      await redis.start();
      const done = await until(id, (c) => c.status === 'completed', 270_000);
      expect(done.status).toBe('completed');
      // No pace, no send: past the slots reserved before the stop (50 ms ahead) and the calls then in flight, nothing.
      // Calls in flight at the stop can take long to reach Meta on a busy host (1.0–1.4 s for 7 of them in CI on
      // 2026-12-03, started before the stop, while the API and the workers reconnected): 3 s of the 5.5 s are checked.
      const whileDown = await sendsBetween(tos, downAt + 2500, upAt);
      const r = await expectEachOnce(
        id,
        tos,
        'c. Redis stopped',
        `Redis down ${((upAt - downAt) / 1000).toFixed(1)} s, ${whileDown} sends reached Meta while it was down (after its first 2.5 s); counts at its restart ${JSON.stringify(atRestart.counts)}; final ${JSON.stringify(done.counts)}`,
      );
      expect(whileDown).toBe(0);
      expect(atRestart.status).toBe('running');
      expect(atRestart.counts.pending).toBeGreaterThan(0);
      expect(r.unconfirmed).toBeLessThanOrEqual(20);
      expect(sentOf(done)).toBe(r.accepted);
    }));

  it('d. PostgreSQL restarted mid-campaign: claims wait for it (no more than was claimed goes out meanwhile), results are written once it is back, each recipient once', () =>
    guard(async () => {
      const { id, tos } = await startCampaign('postgres restarted', 5000);
      await until(id, (c) => sentOf(c) >= 1200, 90_000);
      const stoppingAt = Date.now();
      await pgServer.stop();
      const downFrom = Date.now();
      await sleep(3000);
      const downTo = Date.now();
      await pgServer.start();
      const done = await until(id, (c) => c.status === 'completed', 360_000);
      expect(done.status).toBe('completed');
      // At the tier's pace, 3 s would be 2,300 sends: only recipients claimed before the stop (a quarter second ahead)
      // may go.
      const whileDown = await sendsBetween(tos, downFrom, downTo);
      const r = await expectEachOnce(
        id,
        tos,
        'd. PostgreSQL restarted',
        `PostgreSQL down ${((downTo - stoppingAt) / 1000).toFixed(1)} s (stop included), ${whileDown} sends reached Meta while it was stopped; final ${JSON.stringify(done.counts)}`,
      );
      expect(whileDown).toBeLessThanOrEqual(600);
      expect(r.unconfirmed).toBeLessThanOrEqual(20);
      expect(sentOf(done)).toBe(r.accepted);
    }));
});
