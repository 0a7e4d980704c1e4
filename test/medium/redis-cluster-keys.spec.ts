import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { RedisCluster } from '../../scripts/stack/redis-cluster.js';
import { LoginThrottle } from '../../src/console/operators/login-throttle.js';
import { AppConfig } from '../../src/core/config/app-config.js';
import { TooManyAttempts } from '../../src/core/errors/domain-errors.js';
import { Metrics } from '../../src/core/metrics/metrics.js';
import { RateLimiterService } from '../../src/core/rate-limit/rate-limiter.service.js';
import { AttemptBudget } from '../../src/core/redis/attempt-budget.js';
import { RedisService } from '../../src/core/redis/redis.service.js';
import { NumberPacer } from '../../src/messages/pacing/number-pacer.js';
import { testEnv } from '../utils/test-env.js';

/**
 * Every multi-key script of the service (the pacer's reservation, the key pair + account buckets, the login budgets)
 * against a real Redis Cluster: a script whose keys spread over slots fails there with CROSSSLOT, which one Redis
 * never says. Many numbers, accounts and addresses, so the keys land on every master.
 */
describe('Multi-key scripts on a Redis Cluster', () => {
  let dir: string;
  let cluster: RedisCluster;
  let config: AppConfig;
  let redis: RedisService;
  const logger = pino({ level: 'silent' });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'bmapi-cluster-keys-'));
    cluster = new RedisCluster({ dir });
    await cluster.start();
    config = AppConfig.fromEnv(
      testEnv({ REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.seeds, LOGIN_MAX_FAILURES: '2', PACING_WINDOW_MS: '1000' }),
    );
    redis = new RedisService(config);
    if (redis.client.status !== 'ready') await new Promise((resolve) => redis.client.once('ready', resolve));
  }, 120_000);

  afterAll(async () => {
    redis?.onModuleDestroy();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('paces every number on a slot of its own: two sends one interval apart, then its back-off holds', async () => {
    const pacer = new NumberPacer(redis, config, new Metrics());
    for (let n = 0; n < 12; n++) {
      const id = `10${n}555`;
      // 2 per second: one slot every 500 ms.
      const grant = await pacer.reserve(id, 2, 2, 1000);
      expect(grant.slots).toHaveLength(2);
      expect(grant.slots[1]!.notBefore - grant.slots[0]!.notBefore).toBeCloseTo(500, -1);
      await pacer.holdBack(id, 5000);
      const held = await pacer.acquire(id, 2, 100);
      expect(held).toMatchObject({ ok: false, held: true });
    }
  });

  it('takes a token from a key pair and its account together, and refuses both once one is empty', async () => {
    const limiter = new RateLimiterService(redis, config, logger);
    for (let account = 0; account < 12; account++) {
      const buckets = [
        { bucket: `key-${account}`, rule: { perSecond: 0.01, burst: 2 } },
        { bucket: `account:${account}`, rule: { perSecond: 0.01, burst: 5 } },
      ];
      const first = await limiter.takeAll(`account:${account}`, buckets);
      // null would be the limiter failing open: a CROSSSLOT answer is swallowed that way.
      expect(first.map((d) => d?.allowed)).toEqual([true, true]);
      await limiter.takeAll(`account:${account}`, buckets);
      const third = await limiter.takeAll(`account:${account}`, buckets);
      expect(third.map((d) => d?.allowed)).toEqual([false, true]);
      expect(third[1]!.remaining).toBe(3);
    }
  });

  it('counts the three login budgets in one script and refuses past the pair budget', async () => {
    const throttle = new LoginThrottle(new AttemptBudget(redis), config, logger);
    for (let n = 0; n < 12; n++) {
      const address = `10.0.0.${n}`;
      await throttle.begin(`ana${n}@example.test`, address);
      await throttle.begin(`ana${n}@example.test`, address);
      await expect(throttle.begin(`ana${n}@example.test`, address)).rejects.toBeInstanceOf(TooManyAttempts);
      // A success gives its unit back on all three keys (one script too).
      await (await throttle.begin(`bo${n}@example.test`, address)).succeeded();
    }
  });

  it("runs them all in one tick: auto-pipelining groups each by its first key, so none joins another master's pipeline", async () => {
    // The request path's client auto-pipelines: commands issued in one tick go out as one pipeline per master, grouped
    // by their first argument. A script called as (number of keys, ...keys) was grouped by the number: in a burst it
    // joined the pipeline of another master and ioredis refused that whole pipeline (the pacer's reservations in it
    // too), so sends went unpaced and the limiter failed open (a CI run of 2026-12-04: Meta answered 130429 to ~70
    // sends).
    const limiter = new RateLimiterService(redis, config, logger);
    const pacer = new NumberPacer(redis, config, new Metrics());
    const throttle = new LoginThrottle(new AttemptBudget(redis), config, logger);
    const ids = Array.from({ length: 24 }, (_, n) => n);
    const [decisions, grants, logins] = await Promise.all([
      Promise.all(
        ids.map((n) =>
          limiter.takeAll(`tick:${n}`, [
            { bucket: `tick-key-${n}`, rule: { perSecond: 100, burst: 100 } },
            { bucket: `tick:${n}`, rule: { perSecond: 100, burst: 100 } },
          ]),
        ),
      ),
      Promise.all(ids.map((n) => pacer.reserve(`20${n}555`, 80, 1, 1000))),
      Promise.allSettled(ids.map((n) => throttle.begin(`tick${n}@example.test`, `10.1.0.${n}`))),
    ]);
    // null: the limiter failed open.
    expect(decisions.flat().filter((d) => d?.allowed !== true)).toEqual([]);
    expect(grants.map((g) => g.slots.length)).toEqual(ids.map(() => 1));
    expect(logins.filter((l) => l.status === 'rejected')).toEqual([]);
  });

  it('would have failed: the same script with keys on two slots is refused (by ioredis, or by Redis: CROSSSLOT)', async () => {
    const client = redis.client as unknown as { tokenBuckets2(...a: (string | number)[]): Promise<unknown> };
    new RateLimiterService(redis, config, logger);
    const [a, b] = ['untagged:a', 'untagged:b'];
    expect(await cluster.slotOf(a)).not.toBe(await cluster.slotOf(b));
    await expect(client.tokenBuckets2(a, b, 1, 1, 1, 1)).rejects.toThrow(/CROSSSLOT|same slot/);
  });
});
