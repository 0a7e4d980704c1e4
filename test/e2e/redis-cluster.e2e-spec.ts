import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RedisCluster } from '../../scripts/stack/redis-cluster.js';
import { eventually, helloWorld, onboard, recipient, type OnboardedTenant } from '../utils/factories.js';
import { deliveriesOf } from '../utils/messaging-rows.js';
import { startStack, type Stack } from '../utils/stack.js';

interface Answer {
  status: number;
  id?: number;
  retryAfter?: string;
  to: string;
}

/**
 * The API and the worker on a real Redis Cluster (3 masters, a replica each; REDIS_CLUSTER_NODES), the way a managed
 * cluster (ElastiCache, Memorystore) is used: queues under one hash tag, the pacer's and the rate limiter's scripts on
 * slots of their own, and a crash of the master that holds the queues while sends and Meta's status webhooks flow.
 */
describe('On a Redis Cluster', () => {
  let dir: string;
  let cluster: RedisCluster;
  let stack: Stack;
  let t: OnboardedTenant;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'bmapi-redis-cluster-'));
    cluster = new RedisCluster({ dir });
    await cluster.start();
    stack = await startStack({
      worker: true,
      // Meta retries a webhook the receiver did not take for hours; the simulator's test default gives up quickly.
      sim: { webhookRetry: { maxAttempts: 10, baseDelayMs: 250 } },
      env: {
        // test.sh exports the run's one Redis as REDIS_URL: the cluster replaces it (both set would stop the start).
        REDIS_URL: '',
        REDIS_CLUSTER_NODES: cluster.seeds,
        // Jobs whose enqueue met the failover get theirs from the sweeper: within 5 s + this interval.
        WEBHOOK_SWEEP_INTERVAL_MS: '1000',
        // As pacing.e2e-spec: a margin over Meta's second that a busy host's jitter on the way cannot eat (at 1.3 s,
        // one of the 150 below was answered 429 in a CI run of 2026-12-03: sends held up together arrive together).
        PACING_WINDOW_MS: '1500',
        PACING_LATE_MS: '100',
      },
    });
    t = await onboard(stack, 'Cluster Org');
  }, 180_000);

  afterAll(async () => {
    // Bounded: a worker whose Redis commands never settle must not hold the run (the cluster is stopped regardless).
    await Promise.race([stack?.close(), new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const send = async (to = recipient()): Promise<Answer> => {
    const res = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, to));
    return {
      status: res.status,
      id: res.body?.data?.id as number | undefined,
      retryAfter: res.headers['retry-after'],
      to,
    };
  };
  const statusOf = async (id: number) =>
    ((await stack.http.get(`/messages/${id}`).set(t.key.headers)).body.data?.status as string | undefined) ?? '';

  it("keeps BullMQ's keys under one hash tag, sends, applies Meta's status webhooks, rate limits and paces", async () => {
    const res = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, recipient()));
    expect(res.status).toBe(200);
    expect(Number(res.headers['ratelimit-remaining'])).toBeGreaterThan(0);
    expect(res.headers['ratelimit-limit']).toBe(String(stack.config.rateLimitBurst));
    const id = res.body.data.id as number;
    expect(await eventually(async () => ((await statusOf(id)) === 'read' ? 'read' : null), { timeoutMs: 60_000 })).toBe(
      'read',
    );

    // Every queue key is on the slot of {QUEUE_PREFIX}, on one master.
    const slot = await cluster.slotOf(`{${stack.config.queuePrefix}}`);
    const master = await cluster.masterOf(slot);
    const keys = (await cluster.command(master.port, ['KEYS', `{${stack.config.queuePrefix}}:*`])).split('\n');
    expect(keys).toEqual(expect.arrayContaining([`{${stack.config.queuePrefix}}:webhook-deliveries:meta`]));
    expect(await cluster.command(master.port, ['KEYS', `${stack.config.queuePrefix}:webhook-deliveries:*`])).toBe('');

    // 150 sends at once on a STANDARD number (80/s; one slot every PACING_WINDOW_MS / 80 = 19 ms), 2 s of waiting
    // allowed: the pacer (its script on the number's slot) spreads those it accepts and refuses the rest with 429 +
    // Retry-After (how many depends on the host's speed), so Meta refuses none.
    const before = stack.sim.sends().length;
    const burst = await Promise.all(Array.from({ length: 150 }, () => send()));
    expect(burst.every((a) => a.status === 200 || (a.status === 429 && Number(a.retryAfter) >= 1))).toBe(true);
    const upstream = stack.sim.sends().slice(before);
    expect(upstream.filter((s) => s.response.status !== 200)).toEqual([]);
    const times = upstream.map((s) => Date.parse(s.at)).sort((a, b) => a - b);
    const busiest = Math.max(...times.map((at, i) => times.slice(i).filter((x) => x < at + 1000).length));
    expect(busiest).toBeLessThanOrEqual(80);
  });

  it('loses no acknowledged webhook and no send when the master holding the queues dies: sends answer 200 or 503, never 500', async () => {
    const slot = await cluster.slotOf(`{${stack.config.queuePrefix}}`);
    const answers: Answer[] = [];
    let sending = true;
    // Two clients sending one message after another, with Meta's sent/delivered/read webhooks flowing back for each.
    const loops = Array.from({ length: 2 }, async () => {
      while (sending) answers.push(await send());
    });
    await eventually(async () => (answers.filter((a) => a.status === 200).length >= 10 ? true : null), {
      timeoutMs: 30_000,
    });
    const killedAfter = answers.length;
    const { killed, promoted } = await cluster.killMasterOf(slot);
    expect(promoted).not.toBe(killed);
    // Traffic on the promoted replica for a while.
    const promotedAt = answers.length;
    await eventually(async () => (answers.length >= promotedAt + 20 ? true : null), { timeoutMs: 30_000 });
    sending = false;
    await Promise.all(loops);

    expect(answers.length).toBeGreaterThan(killedAfter);
    const unexpected = answers.filter((a) => a.status !== 200 && a.status !== 503);
    expect(unexpected).toEqual([]);
    expect(answers.filter((a) => a.status === 503 && !(Number(a.retryAfter) >= 1))).toEqual([]);

    // Every accepted send went to Meta exactly once and is stored once.
    const accepted = answers.filter((a) => a.status === 200);
    for (const a of accepted) expect([a.to, stack.sim.sends({ to: a.to }).length]).toEqual([a.to, 1]);
    expect(new Set(accepted.map((a) => a.id)).size).toBe(accepted.length);

    // Every status webhook the receiver acknowledged is processed by the worker (through the promoted replica, or the
    // sweeper for those whose enqueue met the failover), and every accepted send shows Meta's last status.
    const settled = await eventually(
      async () => {
        const rows = await deliveriesOf(stack, t.account.wabaId);
        if (rows.some((r) => r.status !== 'processed')) return null;
        const statuses = await Promise.all(accepted.map((a) => statusOf(a.id!)));
        return statuses.every((s) => s === 'read') ? rows.length : null;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(settled).toBeGreaterThan(0);
  });
});
