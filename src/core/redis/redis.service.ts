import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { withTimeout } from '../async/with-timeout.js';
import { createRedisConnection, type RedisClient } from './redis-connection.js';

/**
 * Shared Redis connection for request-path work (rate limits, caches, readiness). Commands fail fast while
 * Redis is unreachable (no offline queue), so a Redis outage never stalls an HTTP request. One Redis or a Redis
 * Cluster (REDIS_CLUSTER_NODES): callers build the keys a script touches together with `groupedKey`.
 */
@Injectable()
export class RedisService implements OnModuleDestroy {
  readonly client: RedisClient;

  constructor(config: AppConfig) {
    this.client = createRedisConnection(config, { failFast: true, autoPipelining: true });
  }

  async ping(timeoutMs = 1000): Promise<void> {
    await withTimeout(this.client.ping(), timeoutMs, 'Redis ping timed out');
  }

  onModuleDestroy(): void {
    this.client.disconnect();
  }
}
