// Fault suite, the hosted topology (issue 39): the service as it runs once it outgrows one machine, every engine real
// and started by this suite (scripts/stack/scaled.ts, as `./scripts/dev.sh --scaled` starts them): PgBouncer 1.21+ in
// transaction pooling before a PostgreSQL primary (DATABASE_URL, named statements kept by the pooler; Debian's 1.18 with
// unnamed ones when no newer one can be built), the primary itself for what is
// session-bound (DATABASE_DIRECT_URL), a streaming replica for the reads that tolerate lag (DATABASE_READ_URL), a Redis
// Cluster of 3 masters and 3 replicas (REDIS_CLUSTER_NODES), two API processes behind the simulator's round robin (the
// stand-in for a load balancer: Meta's webhooks reach both) and two workers. Sends, webhooks, the lists, the events
// feed, a campaign; then the Redis master that holds the queues is killed mid-traffic (its replica is promoted): every
// acknowledged webhook processed once, every accepted send at Meta once, and sends answer 503 with Retry-After, never
// 500, while Redis cannot answer.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appEnv, build, migrate, startApi, startSimulator, startWorker, type Served } from '../../scripts/stack/app.js';
import { freePort, stopAll, tail } from '../../scripts/stack/process.js';
import { startServices, type Services } from '../../scripts/stack/services.js';
import { apiAt, onboardOver, recipient, type OnboardedTenant } from '../utils/factories.js';
import { poll } from '../utils/poll.js';
import { Db } from './db.js';
import { call, type Json } from './http.js';
import { send, steady } from './load.js';
import { Scenarios, type Scenario } from './scenario.js';

const SECRET = 'fault-suite-scaled-3b8e1f6a9c2d4e7b0a5c8f1e3d6b9a2c';
const PREFIX = 'scaled';
const METRICS_TOKEN = randomBytes(24).toString('base64url');
jest.setTimeout(300_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const out = (line: string) => process.stdout.write(`[faults:scaled] ${line}\n`);

let dir: string;
let services: Services;
let sim: Served;
let apis: Served[] = [];
let workers: Served[] = [];
let db: Db;
let scenarios: Scenarios;
let tenant: OnboardedTenant;
let failed = false;

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    failed = true;
    for (const name of ['api-1', 'api-2', 'worker-1', 'worker-2'])
      out(`last lines of ${name}.log:\n${tail(path.join(dir, `${name}.log`), 12)}`);
    throw err;
  }
}

const keyHeaders = () => tenant.key.headers as Record<string, string>;
const console_ = () => ({ cookie: tenant.operator.cookie });
const sendTo = (api: Served, to: string) =>
  call(
    'POST',
    `${api.url}/messages`,
    {
      phoneNumberId: tenant.account.phoneNumberId,
      to,
      type: 'template',
      templateName: 'hello_world',
      templateLanguage: 'en_US',
    },
    keyHeaders(),
  );

/** What the simulator (Meta) accepted, per recipient. */
async function acceptedAtMeta(): Promise<Map<string, number>> {
  const { data } = (await call('GET', `${sim.url}/_sim/sends`)).body as {
    data: { body: { to?: string }; response: { status: number } }[];
  };
  const accepted = new Map<string, number>();
  for (const s of data) {
    if (s.response.status !== 200) continue;
    const to = (s.body?.to ?? '').replace(/\D/g, '');
    accepted.set(to, (accepted.get(to) ?? 0) + 1);
  }
  return accepted;
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bmapi-faults-scaled-'));
  fs.chmodSync(dir, 0o755);
  await guard(async () => {
    const t = Date.now();
    const [built] = await Promise.all([
      build(),
      (async () => {
        services = await startServices({
          dir,
          dbName: 'bmapi',
          scaled: true,
          // This suite's own engines, whatever the main suite was given.
          env: {},
          postgresSettings: ['fsync=off', 'full_page_writes=off'],
          log: out,
        });
      })(),
    ]);
    const scaled = services.scaled!;
    await migrate(scaled.directUrl);
    db = new Db(scaled.directUrl);
    await db.moveIdsAboveInt32();
    await db.installAudit();
    scenarios = new Scenarios({
      db,
      secret: SECRET,
      out,
      // The job states live in the cluster; the deliveries still received are named by id.
      stragglers: async (s: Scenario) =>
        (
          await db.query<{ id: string }>(
            `SELECT id FROM webhook_inbox WHERE $1 = ANY (waba_ids) AND status = 'received' ORDER BY id LIMIT 20`,
            [s.tenant.wabaId],
          )
        )
          .map((r) => r.id)
          .join(', ') || 'none',
      settleCeilingMs: 180_000,
    });

    const apiPorts = [await freePort(), await freePort()];
    sim = await startSimulator({
      name: 'simulator',
      logDir: dir,
      env: {
        WHATSAPP_APP_SECRET: SECRET,
        SIMULATOR_WEBHOOK_URL: apiPorts.map((p) => `http://127.0.0.1:${p}/webhooks/whatsapp`).join(','),
        SIMULATOR_STATUS_DELAYS_MS: '20,40,60',
      },
    });
    const env: NodeJS.ProcessEnv = {
      ...appEnv({
        databaseUrl: scaled.databaseUrl,
        redisUrl: '',
        appSecret: SECRET,
        encryptionKey: randomBytes(32).toString('hex'),
        queuePrefix: PREFIX,
        upstreamBaseUrl: `${sim.url}/v25.0`,
      }),
      ...scaled.env,
      METRICS_TOKEN,
      SIGNUP_MODE: 'open',
      WEBHOOK_SWEEP_INTERVAL_MS: '2000',
      LOG_LEVEL: 'warn',
    };
    delete env.REDIS_URL;
    [apis, workers] = await Promise.all([
      Promise.all(apiPorts.map((port, i) => startApi({ name: `api-${i + 1}`, logDir: dir, port, env }))),
      Promise.all([1, 2].map((i) => startWorker({ name: `worker-${i}`, logDir: dir, env }))),
    ]);
    tenant = await onboardOver(apiAt(apis[0]!.url), sim.url, { organizationName: 'Scaled Org', level: 'HIGH' });
    out(
      `stack up in ${((Date.now() - t) / 1000).toFixed(1)} s${built.built ? ' (built dist)' : ''}: ${scaled.readyLines.join('; ')}; APIs ${apis.map((a) => a.url).join(', ')}, workers ${workers.map((w) => w.proc.pid).join(', ')}; logs in ${dir}`,
    );
  });
}, 300_000);

afterAll(async () => {
  await db?.close().catch(() => undefined);
  const rank = (name: string) =>
    /^(api|worker)/.test(name) ? 0 : name === 'simulator' ? 1 : name === 'pgbouncer' ? 2 : name === 'postgres' ? 4 : 3;
  await stopAll((c) => rank(c.name));
  if (dir) {
    if (failed || process.env.FAULTS_KEEP_LOGS) out(`logs kept in ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

describe('the hosted topology: PgBouncer, a streaming replica, a Redis Cluster, two APIs and two workers', () => {
  it('sends through both APIs; Meta’s status webhooks reach both; each API reads back what the other took; lists from the replica; the feed shows every status once', () =>
    guard(async () => {
      const tos = Array.from({ length: 20 }, () => recipient());
      const ids: number[] = [];
      for (const [i, to] of tos.entries()) {
        const res = await sendTo(apis[i % 2]!, to);
        expect(res.status).toBe(200);
        ids.push(res.body.data.id);
      }
      // Read back through the other API, from the primary: each ends read (sent → delivered → read came by webhook).
      for (const [i, id] of ids.entries()) {
        const msg = await poll(
          async () => (await call('GET', `${apis[(i + 1) % 2]!.url}/messages/${id}`, undefined, keyHeaders())).body,
          { done: (b) => b?.data?.status === 'read', timeoutMs: 90_000, intervalMs: 200 },
        );
        expect(msg.data.status).toBe('read');
      }
      for (const api of apis)
        expect(await metric(api.url, 'bmapi_webhook_deliveries_received_total')).toBeGreaterThan(0);

      // The list (a read that tolerates lag: the replica) shows all of them once the replica has replayed them.
      const listed = await poll(
        async () =>
          (await call('GET', `${apis[1]!.url}/messages?limit=100`, undefined, keyHeaders())).body?.data
            ?.items as Json[],
        {
          done: (items) =>
            Array.isArray(items) && ids.every((id) => items.some((m) => m.id === id && m.status === 'read')),
          timeoutMs: 60_000,
          intervalMs: 250,
        },
      );
      expect(ids.filter((id) => listed.some((m) => m.id === id))).toEqual(ids);
      // Each API reads its lists from the replica (it answers within the lag bound).
      for (const api of apis) expect(await metric(api.url, 'bmapi_db_replica_serving')).toBe(1);

      // The events feed, page by page from the oldest: sent, delivered and read of each message, each once.
      const seen = new Map<string, number>();
      let cursor = '0';
      for (let page = 0; page < 50; page++) {
        const res = await call(
          'GET',
          `${apis[page % 2]!.url}/webhooks/events?wabaId=${tenant.account.wabaId}&after=${encodeURIComponent(cursor)}&limit=25`,
          undefined,
          console_(),
        );
        expect(res.status).toBe(200);
        for (const e of res.body.data.items as Json[]) {
          if (e.kind !== 'status_update') continue;
          const key = `${e.messageId}|${e.status}`;
          seen.set(key, (seen.get(key) ?? 0) + 1);
        }
        if (res.body.data.items.length === 0) break;
        cursor = res.body.data.nextCursor;
      }
      expect(seen.size).toBe(ids.length * 3);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
    }));

  it('runs a campaign on the two workers: every recipient sent once', () =>
    guard(async () => {
      const tos = numbers('4478', 300);
      const created = await call(
        'POST',
        `${apis[1]!.url}/business-accounts/${tenant.account.wabaId}/campaigns`,
        {
          name: 'scaled campaign',
          phoneNumberId: tenant.account.phoneNumberId,
          templateName: 'hello_world',
          templateLanguage: 'en_US',
          recipients: tos.map((to) => ({ to })),
        },
        console_(),
      );
      expect(created.status).toBe(201);
      const id = created.body.data.id as number;
      const done = await poll(
        async () =>
          (
            await call(
              'GET',
              `${apis[0]!.url}/business-accounts/${tenant.account.wabaId}/campaigns/${id}`,
              undefined,
              console_(),
            )
          ).body?.data,
        { done: (c) => c?.status === 'completed', timeoutMs: 120_000, intervalMs: 250 },
      );
      expect(done.status).toBe('completed');
      const accepted = await acceptedAtMeta();
      expect(tos.filter((to) => accepted.get(to) !== 1)).toEqual([]);
    }));

  it('loses nothing when the Redis master holding the queues is killed mid-traffic: webhooks processed once, sends 200 or 503 with Retry-After (never 500), each accepted send at Meta once', () =>
    guard(async () => {
      const cluster = services.scaled!.cluster!;
      const s = await scenarios.prepare('scaled-failover', 120, { inbound: 40 });
      const t = Date.now();
      const webhooks = send(steady(s.workload.deliveries, 30), {
        url: apis.map((a) => a.url),
        retry: true,
        timeoutMs: 20_000,
        deadlineMs: 60_000,
      });

      // Sends in a loop through both APIs until told to stop.
      const sends: { to: string; status: number; retryAfter: string | null; id?: number }[] = [];
      let sending = true;
      const tos = numbers('4479', 10_000);
      const sender = (async () => {
        for (let i = 0; sending && i < tos.length; i++) {
          const to = tos[i]!;
          const res = await sendTo(apis[i % 2]!, to).catch(() => ({ status: 0, body: null, headers: new Headers() }));
          sends.push({ to, status: res.status, retryAfter: res.headers.get('retry-after'), id: res.body?.data?.id });
          await sleep(40);
        }
      })();

      await sleep(1500);
      const slot = await cluster.slotOf(`{${PREFIX}}`);
      const { killed, promoted } = await cluster.killMasterOf(slot);
      const promotedAfter = Date.now() - t;
      await sleep(3000);
      // Redis answers again: a send goes through (the loop keeps going meanwhile).
      await poll(async () => sends.slice(-5), {
        done: (last) => last.length === 5 && last.every((x) => x.status === 200),
        timeoutMs: 60_000,
        intervalMs: 250,
      });
      sending = false;
      await sender;
      const stats = await webhooks;
      const o = await scenarios.conclude(
        'scaled: Redis master killed',
        s,
        stats,
        t,
        `killed the master of slot ${slot} (127.0.0.1:${killed}); 127.0.0.1:${promoted} promoted ${(promotedAfter / 1000).toFixed(1)} s into the load; sends ${JSON.stringify(count(sends.map((x) => x.status)))}`,
      );
      // The receiver never needs Redis to acknowledge: every POST answered 200.
      expect(stats.answers).toEqual({ '200': stats.posts });
      scenarios.expectExactlyOnce(o);

      // Sends: 200, or 503 with Retry-After while Redis could not answer; never a 500.
      expect(sends.filter((x) => x.status !== 200 && x.status !== 503)).toEqual([]);
      expect(sends.filter((x) => x.status === 503 && !x.retryAfter)).toEqual([]);
      const ok = sends.filter((x) => x.status === 200);
      expect(ok.length).toBeGreaterThan(0);
      // Each accepted send is stored and reached Meta exactly once; a refused one changed nothing.
      const accepted = await acceptedAtMeta();
      expect(ok.filter((x) => accepted.get(x.to) !== 1).map((x) => x.to)).toEqual([]);
      expect(sends.filter((x) => x.status === 503 && accepted.has(x.to)).map((x) => x.to)).toEqual([]);
      for (const x of ok) {
        const res = await call('GET', `${apis[0]!.url}/messages/${x.id}`, undefined, keyHeaders());
        expect(res.status).toBe(200);
      }
      // The killed node rejoins as a replica.
      await cluster.restart(killed);
    }));
});

/** `n` numbers of their own (a prefix no other test of this file uses), from a random base. */
function numbers(prefix: string, n: number): string[] {
  const base = 10_000 + Math.floor(Math.random() * 80_000);
  return Array.from({ length: n }, (_, i) => `${prefix}${base}${String(i).padStart(5, '0')}`);
}

function count(values: number[]): Record<string, number> {
  const c: Record<string, number> = {};
  for (const v of values) c[v] = (c[v] ?? 0) + 1;
  return c;
}
