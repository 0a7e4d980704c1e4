import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { Metrics } from '../../core/metrics/metrics.js';
import { groupedKey } from '../../core/redis/redis-keys.js';
import { RedisService } from '../../core/redis/redis.service.js';

/** Meta's throughput tiers (`throughput.level` of a phone number), in messages per second. */
export const THROUGHPUT_TIERS: Readonly<Record<string, number>> = { STANDARD: 80, HIGH: 1000, COEXISTENCE: 20 };

/** A number's tier: its level as stored (sync, THROUGHPUT_UPGRADE webhooks), STANDARD when unknown. */
export function throughputOf(level: string | null | undefined): { level: string; perSecond: number } {
  const known = level && THROUGHPUT_TIERS[level] !== undefined ? level : 'STANDARD';
  return { level: known, perSecond: THROUGHPUT_TIERS[known]! };
}

/**
 * Even spacing per phone number (GCRA: a virtual schedule, Redis's own clock). KEYS[1] holds the number's next free
 * slot time (ms, microsecond precision); each slot is one emission interval (ARGV[1] ms: PACING_WINDOW_MS / tier)
 * after the previous one, never earlier than now, so the sends of a second are spread evenly over it and no burst
 * reaches Meta at the start of a window. Up to ARGV[3] slots are reserved whose times fall within the next ARGV[2] ms
 * (the horizon: how far ahead a caller will wait); none before a back-off (KEYS[2], after Meta's 130429) ends. Returns
 * {granted, the first slot's time (µs, Redis's clock), waitMs (when nothing was granted: until the next slot is within
 * the horizon), held: 1 when the back-off is what pushed the slot out, Redis's time now (µs)}.
 */
const RESERVE_SLOTS = `
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now = nowUs / 1000
local interval = tonumber(ARGV[1])
local horizon = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local start = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
local held = 0
local hold = redis.call('PTTL', KEYS[2])
if hold > 0 and now + hold > start then
  start = now + hold
  held = 1
end
local room = math.floor((now + horizon - start) / interval) + 1
if room < 1 then return {0, 0, math.max(1, math.ceil(start - horizon - now)), held, nowUs} end
local granted = math.min(want, room)
local after = start + granted * interval
redis.call('SET', KEYS[1], string.format('%.3f', after), 'PX', math.ceil(after - now) + 1000)
return {granted, math.floor(start * 1000), 0, 0, nowUs}
`;

/**
 * Redis's clock against this process's (performance.now()): each answer bounds their difference (Redis read its clock
 * between our call and its answer), and the tightest bounds seen (the quickest round trips) place a Redis time on our
 * clock within a fraction of a millisecond, however slow the current call was. Learnt again every 10 s, and at once if
 * the bounds contradict each other (a clock was set), so drift cannot accumulate.
 */
class ClockOffset {
  /** Bounds on (Redis ms − local ms). */
  private lo = -Infinity;
  private hi = Infinity;
  private since = -Infinity;

  learn(redisMs: number, asked: number, answered: number): void {
    const lo = redisMs - answered;
    const hi = redisMs - asked;
    if (answered - this.since > 10_000 || lo > this.hi || hi < this.lo) {
      [this.lo, this.hi, this.since] = [lo, hi, answered];
      return;
    }
    this.lo = Math.max(this.lo, lo);
    this.hi = Math.min(this.hi, hi);
  }

  /** The latest local instant a Redis time can be (never leave before it). */
  latest(redisMs: number): number {
    return redisMs - this.lo;
  }

  /** The earliest local instant a Redis time can be (lateness is counted from it). */
  earliest(redisMs: number): number {
    return redisMs - this.hi;
  }
}

/**
 * One reserved slot, on this process's monotonic clock (performance.now()). The send must not leave before
 * `notBefore` (Meta would see it early) and is forfeited past `lateAfter`: a send that leaves late bunches with the
 * sends of the slots after it, and Meta counts arrivals, not our schedule.
 */
export interface PaceSlot {
  notBefore: number;
  lateAfter: number;
}

/** What the pacer answered: slots reserved (in time order), or how long until one can be. */
export interface PaceGrant {
  slots: PaceSlot[];
  /** ms until a slot can be reserved (0 when some were). */
  waitMs: number;
  /** The number is backing off after Meta refused it with 130429. */
  held: boolean;
}

/** Redis did not answer: the caller decides (a send proceeds unpaced; a campaign waits). */
export class PacerUnavailable extends Error {}

/**
 * Keeps every phone number at or below its Meta tier, across every API and worker process (Redis), for POST /messages
 * and campaigns together: one slot per PACING_WINDOW_MS / tier, each send leaving at its slot and at most
 * PACING_LATE_MS after it (else it takes a new slot). Keys: `<QUEUE_PREFIX>:pace:<phone-number-id>:next` and `…:hold`
 * (the back-off after a 130429); on a Redis Cluster both carry the hash tag `{pace:<phone-number-id>}` (one slot per
 * number, so the script that reads both runs there).
 */
@Injectable()
export class NumberPacer {
  private readonly clock = new ClockOffset();

  constructor(
    private readonly redis: RedisService,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.redis.client.defineCommand('paceReserve', { numberOfKeys: 2, lua: RESERVE_SLOTS });
  }

  /**
   * Up to `want` slots on the number within the next `horizonMs` (one Lua call), evenly spaced. With pacing off,
   * `want` slots at once.
   */
  async reserve(phoneNumberId: string, perSecond: number, want: number, horizonMs: number): Promise<PaceGrant> {
    if (!this.config.pacingEnabled) {
      const now = performance.now();
      return {
        slots: Array.from({ length: Math.max(1, want) }, () => ({ notBefore: now, lateAfter: Infinity })),
        waitMs: 0,
        held: false,
      };
    }
    const client = this.redis.client as unknown as {
      paceReserve(k1: string, k2: string, interval: string, horizon: number, want: number): Promise<number[]>;
    };
    const interval = this.config.pacingWindowMs / perSecond;
    const asked = performance.now();
    let answer: number[];
    try {
      answer = await client.paceReserve(
        this.keyOf(phoneNumberId, 'next'),
        this.keyOf(phoneNumberId, 'hold'),
        interval.toFixed(3),
        Math.max(0, Math.floor(horizonMs)),
        Math.max(1, want),
      );
    } catch (err) {
      throw new PacerUnavailable(err instanceof Error ? err.message : String(err));
    }
    const [granted, startUs, waitMs, held, nowUs] = answer.map(Number) as [number, number, number, number, number];
    this.clock.learn(nowUs / 1000, asked, performance.now());
    const late = this.config.pacingLateMs;
    const slots = Array.from({ length: granted }, (_, i) => {
      const at = startUs / 1000 + i * interval;
      return { notBefore: this.clock.latest(at), lateAfter: this.clock.earliest(at) + late };
    });
    return { slots, waitMs, held: held === 1 };
  }

  /**
   * One slot within `maxWaitMs` (PACING_MAX_WAIT_MS by default). Refused: when a slot can be had again, and whether
   * the number is backing off.
   */
  async acquire(
    phoneNumberId: string,
    perSecond: number,
    maxWaitMs = this.config.pacingMaxWaitMs,
  ): Promise<{ ok: true; slot: PaceSlot } | { ok: false; retryAfterMs: number; held: boolean }> {
    const grant = await this.reserve(phoneNumberId, perSecond, 1, maxWaitMs);
    const slot = grant.slots[0];
    return slot ? { ok: true, slot } : { ok: false, retryAfterMs: grant.waitMs, held: grant.held };
  }

  /**
   * Waits for the slot; true when the send may leave now (call the upstream right away, in the same turn of the event
   * loop), false when this process was late for it (the slot is forfeited: take another).
   */
  async until(slot: PaceSlot): Promise<boolean> {
    // A timer may fire early by the time the current turn of the event loop has run: wait again for what is left (a
    // fraction of a ms waits a whole one: late by less than PACING_LATE_MS rather than early).
    for (let left = slot.notBefore - performance.now(); left > 0; left = slot.notBefore - performance.now())
      await sleep(Math.max(1, left));
    const now = performance.now();
    const onTime = now <= slot.lateAfter;
    this.metrics.pacedSends.observe(
      { outcome: onTime ? 'sent' : 'forfeited' },
      Math.max(0, now - slot.notBefore) / 1000,
    );
    return onTime;
  }

  /** Meta refused the number with 130429 (someone else sends on it too): no slot for `ms`. */
  async holdBack(phoneNumberId: string, ms: number): Promise<void> {
    try {
      await this.redis.client.set(this.keyOf(phoneNumberId, 'hold'), '1', 'PX', Math.max(1, Math.round(ms)));
    } catch (err) {
      throw new PacerUnavailable(err instanceof Error ? err.message : String(err));
    }
  }

  private keyOf(phoneNumberId: string, part: 'next' | 'hold'): string {
    return groupedKey(this.config, `pace:${phoneNumberId}`, `pace:${phoneNumberId}:${part}`);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
