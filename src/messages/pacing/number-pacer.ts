import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { AppConfig } from '../../core/config/app-config.js';
import { RedisService } from '../../core/redis/redis.service.js';

/** Meta's throughput tiers (`throughput.level` of a phone number), in messages per second. */
export const THROUGHPUT_TIERS: Readonly<Record<string, number>> = { STANDARD: 80, HIGH: 1000, COEXISTENCE: 20 };

/** A number's tier: its level as stored (sync, THROUGHPUT_UPGRADE webhooks), STANDARD when unknown. */
export function throughputOf(level: string | null | undefined): { level: string; perSecond: number } {
  const known = level && THROUGHPUT_TIERS[level] !== undefined ? level : 'STANDARD';
  return { level: known, perSecond: THROUGHPUT_TIERS[known]! };
}

/**
 * A sliding window per phone number (a sorted set of grant times, Redis's own clock): up to ARGV[3] slots are granted
 * now while the number's last window (ARGV[2] ms) holds fewer than its tier (ARGV[1]) and its last tenth of a window
 * fewer than a tenth of the tier (so the slots of a second are spread over it: a burst of a whole second's sends
 * would reach Meta spread by the network and the queues on the way, and crowd Meta's next second); none while a
 * back-off (KEYS[2]) is on. Returns {granted, waitMs: when the next slot frees (0 when granted), held: 1 during a
 * back-off}.
 */
const TAKE_SLOTS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local hold = redis.call('PTTL', KEYS[2])
if hold > 0 then return {0, hold, 1} end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local slice = math.floor(window / 10)
local sliceLimit = math.max(1, math.ceil(limit / 10))
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local used = redis.call('ZCARD', KEYS[1])
local usedSlice = redis.call('ZCOUNT', KEYS[1], '(' .. (now - slice), '+inf')
local grant = math.min(want, limit - used, sliceLimit - usedSlice)
if grant <= 0 then
  local wait = window
  if used >= limit then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    if oldest[2] then wait = tonumber(oldest[2]) + window - now end
  else
    local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - slice), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if first[2] then wait = tonumber(first[2]) + slice - now end
  end
  return {0, math.max(1, math.ceil(wait)), 0}
end
local args = {}
for i = 1, grant do
  args[2 * i - 1] = now
  args[2 * i] = ARGV[4] .. ':' .. i
end
redis.call('ZADD', KEYS[1], unpack(args))
redis.call('PEXPIRE', KEYS[1], window + 1000)
return {grant, 0, 0}
`;

/** What the pacer answered: slots granted now, or how long until one frees. */
export interface PaceGrant {
  granted: number;
  /** ms until the next slot frees (0 when something was granted). */
  waitMs: number;
  /** The number is backing off after Meta refused it with 130429. */
  held: boolean;
}

/** Redis did not answer: the caller decides (a send proceeds unpaced; a campaign waits). */
export class PacerUnavailable extends Error {}

/**
 * Keeps every phone number at or below its Meta tier in any window of PACING_WINDOW_MS, across every API and worker
 * process (Redis), for POST /messages and campaigns together. Keys: `<QUEUE_PREFIX>:pace:<phone-number-id>` and
 * `…:hold` (the back-off after a 130429).
 */
@Injectable()
export class NumberPacer {
  private readonly nonce = randomBytes(6).toString('base64url');
  private calls = 0;

  constructor(
    private readonly redis: RedisService,
    private readonly config: AppConfig,
  ) {
    this.redis.client.defineCommand('paceTake', { numberOfKeys: 2, lua: TAKE_SLOTS });
  }

  /** Up to `want` slots on the number now (one Lua call). */
  async take(phoneNumberId: string, perSecond: number, want: number): Promise<PaceGrant> {
    if (!this.config.pacingEnabled) return { granted: Math.max(1, want), waitMs: 0, held: false };
    const client = this.redis.client as unknown as { paceTake(k1: string, k2: string, limit: number, window: number, want: number, member: string): Promise<[number, number, number]> };
    const key = this.keyOf(phoneNumberId);
    try {
      const [granted, waitMs, held] = await client.paceTake(key, `${key}:hold`, perSecond, this.config.pacingWindowMs, Math.max(1, want), `${this.nonce}:${++this.calls}`);
      return { granted: Number(granted), waitMs: Number(waitMs), held: Number(held) === 1 };
    } catch (err) {
      throw new PacerUnavailable(err instanceof Error ? err.message : String(err));
    }
  }

  /**
   * One slot, waiting up to `maxWaitMs` for it (PACING_MAX_WAIT_MS by default). Refused: when the next slot frees,
   * and whether the number is backing off.
   */
  async acquire(phoneNumberId: string, perSecond: number, maxWaitMs = this.config.pacingMaxWaitMs): Promise<{ ok: true } | { ok: false; retryAfterMs: number; held: boolean }> {
    const deadline = Date.now() + maxWaitMs;
    for (;;) {
      const grant = await this.take(phoneNumberId, perSecond, 1);
      if (grant.granted > 0) return { ok: true };
      const left = deadline - Date.now();
      if (grant.waitMs > left) return { ok: false, retryAfterMs: grant.waitMs, held: grant.held };
      // Waiters wake a little apart, so that they do not all ask Redis in the same millisecond.
      await sleep(grant.waitMs + Math.floor(Math.random() * 5));
    }
  }

  /** Meta refused the number with 130429 (someone else sends on it too): no slot for `ms`. */
  async holdBack(phoneNumberId: string, ms: number): Promise<void> {
    try {
      await this.redis.client.set(`${this.keyOf(phoneNumberId)}:hold`, '1', 'PX', Math.max(1, Math.round(ms)));
    } catch (err) {
      throw new PacerUnavailable(err instanceof Error ? err.message : String(err));
    }
  }

  private keyOf(phoneNumberId: string): string {
    return `${this.config.queuePrefix}:pace:${phoneNumberId}`;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
