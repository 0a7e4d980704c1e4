import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { withTimeout } from '../async/with-timeout.js';

/**
 * Shared Redis connection for request-path work (rate limits, caches, readiness). Commands fail fast while
 * Redis is unreachable (no offline queue), so a Redis outage never stalls an HTTP request.
 */
@Injectable()
export class RedisService implements OnModuleDestroy {
  readonly client: Redis;

  constructor(config: AppConfig) {
    this.client = createRedisConnection(config.redisUrl, { failFast: true, autoPipelining: true });
  }

  async ping(timeoutMs = 1000): Promise<void> {
    await withTimeout(this.client.ping(), timeoutMs, 'Redis ping timed out');
  }

  onModuleDestroy(): void {
    this.client.disconnect();
  }
}

export function createRedisConnection(url: string, opts: { failFast: boolean; autoPipelining?: boolean }): Redis {
  const client = new Redis(url, {
    // Commands issued in the same tick by concurrent requests (rate limits, mostly) go out in one write.
    enableAutoPipelining: opts.autoPipelining ?? false,
    // BullMQ workers need maxRetriesPerRequest: null (blocking commands); request-path clients fail fast.
    maxRetriesPerRequest: opts.failFast ? 1 : null,
    enableOfflineQueue: !opts.failFast,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    connectTimeout: 2000,
  });
  // Connection errors are reported through readiness and the callers; don't crash on 'error' events.
  client.on('error', () => undefined);
  return client;
}
