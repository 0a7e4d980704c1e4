import { AppConfig } from '../../src/core/config/app-config.js';
import { Metrics } from '../../src/core/metrics/metrics.js';
import { RedisService } from '../../src/core/redis/redis.service.js';
import { NumberPacer, PacerUnavailable, type PaceSlot } from '../../src/messages/pacing/number-pacer.js';
import { testEnv } from '../utils/test-env.js';

/** A pacer as a process of its own would have it: its own config, Redis connection (connected) and metrics. */
async function processWith(env: Record<string, string> = {}, connected = true) {
  const config = AppConfig.fromEnv(testEnv({ QUEUE_PREFIX: prefix, ...env }));
  const redis = new RedisService(config);
  // The service's client fails fast (no offline queue): a process starts sending once it is connected.
  if (connected && redis.client.status !== 'ready') await new Promise((resolve) => redis.client.once('ready', resolve));
  const metrics = new Metrics();
  return { pacer: new NumberPacer(redis, config, metrics), redis, metrics };
}

/**
 * When each send leaves, as the service's callers do it: at its slot, or, when the process was late for the slot, at a
 * new one (on this process's clock).
 */
async function leave(pacer: NumberPacer, id: string, perSecond: number, slots: PaceSlot[]): Promise<number[]> {
  const times = await Promise.all(
    slots.map(async (first) => {
      for (let slot = first; ;) {
        if (await pacer.until(slot)) return performance.now();
        const again = await pacer.acquire(id, perSecond, 10_000);
        if (!again.ok) throw new Error('no new slot within 10 s');
        slot = again.slot;
      }
    }),
  );
  return times.sort((a, b) => a - b);
}

/** The most sends in any window of `spanMs` (as Meta counts them over its second). */
function busiest(times: number[], spanMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while (times[j]! - times[i]! >= spanMs) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

let prefix = '';
let n = 0;
/** A fresh phone number id per test: its keys are its own. */
const numberId = () => `4020000${String(++n).padStart(5, '0')}`;

describe('NumberPacer (Redis)', () => {
  const opened: RedisService[] = [];
  const open = async (env: Record<string, string> = {}, connected = true) => {
    const p = await processWith(env, connected);
    opened.push(p.redis);
    return p;
  };
  beforeAll(() => {
    prefix = `pace${Date.now().toString(36)}`;
  });
  afterAll(() => {
    for (const r of opened) r.client.disconnect();
  });

  it("spaces a number's slots evenly (PACING_WINDOW_MS / tier apart), from now, never in a burst", async () => {
    const { pacer } = await open({ PACING_WINDOW_MS: '1000' });
    const id = numberId();
    const asked = performance.now();
    const grant = await pacer.reserve(id, 80, 30, 2000);
    // How far this process may later correct its reading of Redis's clock (at most this round trip).
    const rtt = performance.now() - asked;
    expect(grant).toMatchObject({ waitMs: 0, held: false });
    expect(grant.slots).toHaveLength(30);
    // The first slot is due as soon as the answer is there (a number nobody sent on).
    expect(grant.slots[0]!.notBefore).toBeLessThanOrEqual(performance.now() + 1);
    const gaps = grant.slots.slice(1).map((s, i) => s.notBefore - grant.slots[i]!.notBefore);
    for (const gap of gaps) expect(gap).toBeCloseTo(12.5, 3);
    // The next reservation continues the schedule where this one ended.
    const next = await pacer.reserve(id, 80, 1, 2000);
    expect(next.slots[0]!.notBefore - grant.slots[29]!.notBefore).toBeGreaterThanOrEqual(12.5 - rtt - 0.01);
  });

  it('reserves no further ahead than the horizon, and says when to ask again', async () => {
    const { pacer } = await open({ PACING_WINDOW_MS: '1000' });
    const id = numberId();
    // HIGH: one slot per ms; 50 ms ahead holds 51 (now, and 50 after it).
    const asked = performance.now();
    const first = await pacer.reserve(id, 1000, 500, 50);
    const rtt = performance.now() - asked;
    expect(first.slots).toHaveLength(51);
    const last = first.slots.at(-1)!.notBefore;
    // A 20/s number (50 ms apart) asked for 3 slots within 60 ms: two now, the third is 100 ms out, 40 past the horizon.
    const slow = numberId();
    const two = await pacer.reserve(slow, 20, 3, 60);
    expect(two.slots).toHaveLength(2);
    const none = await pacer.reserve(slow, 20, 1, 0);
    expect(none.slots).toHaveLength(0);
    expect(none.waitMs).toBeGreaterThan(0);
    expect(none.waitMs).toBeLessThanOrEqual(101);
    expect(none.held).toBe(false);
    // The HIGH number's schedule went on from where the first reservation ended.
    const more = await pacer.reserve(id, 1000, 1, 1000);
    expect(more.slots[0]!.notBefore).toBeGreaterThanOrEqual(last + 1 - rtt - 0.01);
  });

  it('keeps a number at its tier across processes: concurrent sends of two processes leave at most 20 in any second of a 20/s number', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const id = numberId();
    // 45 sends asked for at once, by two processes, each waiting up to 3 s: about 2.3 s of the number's pace.
    const asks = Array.from({ length: 45 }, (_, i) => (i % 2 ? a : b).pacer.acquire(id, 20, 3000));
    const answers = await Promise.all(asks);
    const granted = answers.filter((x): x is { ok: true; slot: PaceSlot } => x.ok);
    expect(granted).toHaveLength(45);
    const times = await leave(
      a.pacer,
      id,
      20,
      granted.map((g) => g.slot),
    );
    expect(times).toHaveLength(45);
    expect(busiest(times, 1000)).toBeLessThanOrEqual(20);
    // 45 slots 52 ms apart: 2.3 s between the first and the last, whichever process reserved them.
    expect(times.at(-1)! - times[0]!).toBeGreaterThan(2000);
  });

  it('refuses past the wait with when to come back; a slot the process was late for is forfeited, never sent in a bunch', async () => {
    // 200 ms of grace: a timer on a busy test host may fire tens of ms late, which must not count here.
    const { pacer, metrics } = await open({ PACING_LATE_MS: '200' });
    const id = numberId();
    const first = await pacer.acquire(id, 20, 0);
    expect(first.ok).toBe(true);
    const refused = await pacer.acquire(id, 20, 0);
    expect(refused).toMatchObject({ ok: false, held: false });
    expect(refused.ok === false && refused.retryAfterMs).toBeGreaterThan(0);

    const grant = await pacer.reserve(id, 20, 2, 1000);
    const [onTime, late] = grant.slots as [PaceSlot, PaceSlot];
    expect(await pacer.until(onTime)).toBe(true);
    expect(performance.now()).toBeGreaterThanOrEqual(onTime.notBefore);
    // The event loop is blocked past the second slot and its 200 ms of grace.
    const busyUntil = late.notBefore + 250;
    while (performance.now() < busyUntil) {
      /* busy */
    }
    expect(await pacer.until(late)).toBe(false);
    const text = await metrics.registry.getSingleMetricAsString('bmapi_pacing_send_lateness_seconds');
    expect(text).toMatch(/bmapi_pacing_send_lateness_seconds_count\{outcome="sent"\} 1/);
    expect(text).toMatch(/bmapi_pacing_send_lateness_seconds_count\{outcome="forfeited"\} 1/);
  });

  it('holds a number back after a 130429, for every process: no slot before the hold ends; a caller that waits longer gets one after it', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const id = numberId();
    await a.pacer.holdBack(id, 2000);
    const held = await b.pacer.reserve(id, 1000, 10, 100);
    expect(held.slots).toHaveLength(0);
    expect(held.held).toBe(true);
    expect(held.waitMs).toBeGreaterThan(0);
    expect(held.waitMs).toBeLessThanOrEqual(1900);
    const asked = performance.now();
    const after = await b.pacer.reserve(id, 1000, 10, 3000);
    expect(after.slots).toHaveLength(10);
    // The first slot is where the hold ends: most of its 2 s are still to come (however slow this host).
    expect(after.slots[0]!.notBefore - asked).toBeGreaterThan(400);
  });

  it('with pacing off, grants what is asked at once without Redis; with Redis away, says so (PacerUnavailable)', async () => {
    const off = await open({ PACING_ENABLED: 'false', REDIS_URL: 'redis://127.0.0.1:9' }, false);
    const all = await off.pacer.reserve(numberId(), 20, 100, 0);
    expect(all.slots).toHaveLength(100);
    expect(await off.pacer.until(all.slots[99]!)).toBe(true);
    const away = await open({ REDIS_URL: 'redis://127.0.0.1:9' }, false);
    await expect(away.pacer.reserve(numberId(), 20, 1, 0)).rejects.toBeInstanceOf(PacerUnavailable);
    await expect(away.pacer.holdBack(numberId(), 1000)).rejects.toBeInstanceOf(PacerUnavailable);
  });
});
