import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { AppConfig } from '../config/app-config.js';
import { ApiError } from '../http/api-error.js';
import { APP_LOGGER } from '../logging/app-logger.js';
import { KeyedScript } from '../redis/keyed-script.js';
import { groupedKey } from '../redis/redis-keys.js';
import { RedisService } from '../redis/redis.service.js';

export const RATE_LIMIT_EXCEEDED = 'Rate limit exceeded';

/**
 * Token bucket in Redis (one Lua call per request), so the limit holds across every API process. Redis's
 * own clock is used, not the callers'. Returns whether the request may pass and what the headers say.
 */
const TOKEN_BUCKET = `
local key = KEYS[1]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', key, 'tokens', 'ts')
local tokens = tonumber(state[1]) or burst
local ts = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', key, 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', key, math.ceil(burst / rate * 1000) + 1000)
return { allowed, tostring(tokens) }
`;

/**
 * Several buckets at once (a key pair and its business account): a token is taken from every one of them or
 * from none, so a request refused by one bucket does not spend the others. ARGV: rate and burst per key, in
 * KEYS order. Returns per key: allowed (this bucket had a token) and the tokens left.
 */
const TOKEN_BUCKETS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tokens = {}
local all = 1
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local state = redis.call('HMGET', key, 'tokens', 'ts')
  local n = tonumber(state[1]) or burst
  local ts = tonumber(state[2]) or now
  tokens[i] = math.min(burst, n + math.max(0, now - ts) * rate / 1000)
  if tokens[i] < 1 then all = 0 end
end
local out = {}
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local allowed = tokens[i] >= 1 and 1 or 0
  if all == 1 then tokens[i] = tokens[i] - 1 end
  redis.call('HSET', key, 'tokens', tostring(tokens[i]), 'ts', tostring(now))
  redis.call('PEXPIRE', key, math.ceil(burst / rate * 1000) + 1000)
  out[2 * i - 1] = allowed
  out[2 * i] = tostring(tokens[i])
end
return out
`;

/** The most buckets one request takes together (a key pair's and its account's). */
const MAX_BUCKETS = 4;

/** A bucket's refill rate and size. */
export interface RateLimitRule {
  perSecond: number;
  burst: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one request may pass (when refused). */
  retryAfterSeconds: number;
}

/**
 * The service's one rate limiter (key pairs on the message routes, sessions and client addresses on the
 * console routes): a named bucket per caller, `<QUEUE_PREFIX>:rate:<bucket>` in Redis (on a Redis Cluster, buckets
 * taken together carry their group's hash tag: `<QUEUE_PREFIX>:{rate:<group>}:rate:<bucket>`).
 */
@Injectable()
export class RateLimiterService {
  private readonly buckets: KeyedScript<(number | string)[]>;

  constructor(
    private readonly redis: RedisService,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    this.redis.client.defineCommand('tokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET });
    this.buckets = new KeyedScript(redis.client, 'tokenBuckets', TOKEN_BUCKETS, MAX_BUCKETS);
  }

  /**
   * One token from each bucket, or from none when any is empty (all evaluated in one Lua call). A decision per
   * bucket, in order; null when Redis is unreachable (fail open, as take()). `group` names what the buckets share (the
   * business account): on a Redis Cluster it is their keys' hash tag, so the one script finds them on one slot.
   */
  async takeAll(
    group: string,
    buckets: { bucket: string; rule: RateLimitRule }[],
  ): Promise<(RateLimitDecision | null)[]> {
    try {
      const keys = buckets.map((b) => groupedKey(this.config, `rate:${group}`, `rate:${b.bucket}`));
      const out = await this.buckets.run(
        keys,
        buckets.flatMap((b) => [b.rule.perSecond, b.rule.burst]),
      );
      return buckets.map(({ rule }, i) => decision(rule, Number(out[2 * i]) === 1, Number(out[2 * i + 1])));
    } catch (error) {
      this.logger.warn({ err: error }, 'rate limiter unavailable; allowing the request');
      return buckets.map(() => null);
    }
  }

  /** null when Redis is unreachable: the limiter fails open rather than refusing all traffic. */
  async take(bucket: string, rule: RateLimitRule): Promise<RateLimitDecision | null> {
    const { perSecond: rate, burst } = rule;
    try {
      const client = this.redis.client as unknown as {
        tokenBucket(key: string, rate: number, burst: number): Promise<[number, string]>;
      };
      const [allowed, tokensText] = await client.tokenBucket(`${this.config.queuePrefix}:rate:${bucket}`, rate, burst);
      return decision(rule, allowed === 1, Number(tokensText));
    } catch (error) {
      this.logger.warn({ err: error }, 'rate limiter unavailable; allowing the request');
      return null;
    }
  }
}

function decision(rule: RateLimitRule, allowed: boolean, tokens: number): RateLimitDecision {
  return {
    allowed,
    limit: rule.burst,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.ceil((rule.burst - tokens) / rule.perSecond),
    retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / rule.perSecond)),
  };
}

/**
 * RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset on the answer, and 429 + Retry-After when refused.
 * Several buckets (a session and its address): the headers describe the one closest to refusing.
 */
export function enforceRateLimit(res: Response, decisions: (RateLimitDecision | null)[]): void {
  const known = decisions.filter((d): d is RateLimitDecision => d !== null);
  if (known.length === 0) return;
  const refused = known.filter((d) => !d.allowed);
  const shown =
    refused.length > 0
      ? refused.reduce((a, b) => (b.retryAfterSeconds > a.retryAfterSeconds ? b : a))
      : known.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  res.setHeader('RateLimit-Limit', String(shown.limit));
  res.setHeader('RateLimit-Remaining', String(shown.remaining));
  res.setHeader('RateLimit-Reset', String(shown.resetSeconds));
  if (!shown.allowed) {
    throw new ApiError(429, RATE_LIMIT_EXCEEDED, { headers: { 'Retry-After': String(shown.retryAfterSeconds) } });
  }
}
