import { once } from 'node:events';
import { Injectable } from '@nestjs/common';
import { withTimeout } from '../async/with-timeout.js';
import { KeyedScript } from './keyed-script.js';
import { RedisService } from './redis.service.js';

/** How long a request waits for a Redis connection that is still being made (the shared client queues nothing). */
const CONNECT_WAIT_MS = 1000;

/**
 * Fixed-window attempt counters in Redis, checked and taken in one Lua call: the check and the increment are
 * one atomic step, so a burst of concurrent requests cannot all see "0 so far" (which is what reading the
 * counters, doing the slow work, then writing them allowed). Either every counter has room and each is
 * incremented, or none is touched and the caller learns which one is full and for how long.
 */
const TAKE = `
for i = 1, #KEYS do
  local used = tonumber(redis.call('GET', KEYS[i]) or '0')
  if used >= tonumber(ARGV[i]) then
    local ttl = redis.call('TTL', KEYS[i])
    if ttl < 1 then ttl = 1 end
    return { i, ttl }
  end
end
local window = tonumber(ARGV[#KEYS + 1])
for i = 1, #KEYS do
  redis.call('INCR', KEYS[i])
  if redis.call('TTL', KEYS[i]) < 0 then redis.call('EXPIRE', KEYS[i], window) end
end
return { 0, 0 }
`;

/** Gives back one attempt on each key that still exists (an attempt that turned out not to count). */
const GIVE_BACK = `
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
`;

export interface Budget {
  key: string;
  limit: number;
}

export type TakeResult = { taken: true } | { taken: false; exhausted: string; retryAfterSeconds: number };

/** The most budgets one attempt takes (the login throttle's three). */
const MAX_BUDGETS = 4;

@Injectable()
export class AttemptBudget {
  private readonly takeScript: KeyedScript<[number, number]>;
  private readonly giveBackScript: KeyedScript<number>;

  constructor(private readonly redis: RedisService) {
    this.takeScript = new KeyedScript(redis.client, 'attemptTake', TAKE, MAX_BUDGETS);
    this.giveBackScript = new KeyedScript(redis.client, 'attemptGiveBack', GIVE_BACK, MAX_BUDGETS);
  }

  /**
   * Takes one attempt from every budget, or from none when one of them is spent. Rejects when Redis is
   * unreachable: callers guarding a secret (login) must then refuse, not let the attempt through uncounted.
   */
  async take(budgets: Budget[], windowSeconds: number): Promise<TakeResult> {
    await this.connected();
    const keys = budgets.map((b) => b.key);
    const [index, ttl] = await this.takeScript.run(keys, [...budgets.map((b) => b.limit), windowSeconds]);
    return index === 0 ? { taken: true } : { taken: false, exhausted: keys[index - 1]!, retryAfterSeconds: ttl };
  }

  /** Right after start-up the shared connection may still be opening; wait briefly rather than fail the first requests. */
  private async connected(): Promise<void> {
    const client = this.redis.client;
    if (client.status === 'connecting' || client.status === 'connect' || client.status === 'reconnecting') {
      await withTimeout(once(client, 'ready'), CONNECT_WAIT_MS, 'Redis not ready').catch(() => undefined);
    }
  }

  async giveBack(keys: string[]): Promise<void> {
    await this.giveBackScript.run(keys, []);
  }

  /** Whether `key` was marked (and its mark has not expired). Rejects when Redis is unreachable, like `take`. */
  async isMarked(key: string): Promise<boolean> {
    await this.connected();
    return (await this.redis.client.exists(key)) === 1;
  }

  /** Marks `key` for `ttlSeconds` (a later mark renews it). */
  async mark(key: string, ttlSeconds: number): Promise<void> {
    await this.redis.client.set(key, '1', 'EX', ttlSeconds);
  }
}
