import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Queue, type JobsOptions } from 'bullmq';
import { AppConfig } from '../config/app-config.js';
import { withTimeout } from '../async/with-timeout.js';
import { createRedisConnection, type RedisClient } from '../redis/redis-connection.js';
import { queueKeyPrefix } from '../redis/redis-keys.js';
import { currentTraceparent } from '../tracing/current-trace.js';
import type { TracedJob } from './queue.constants.js';

/**
 * Producer side of the queues. Enqueueing fails fast (bounded time) when Redis is unreachable, so callers
 * can rely on their durable fallback (e.g. the webhook sweeper) instead of hanging a request.
 */
@Injectable()
export class QueueService implements OnModuleDestroy {
  private readonly connection: RedisClient;
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly config: AppConfig) {
    this.connection = createRedisConnection(config, { failFast: true });
  }

  queue(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, {
        connection: this.connection,
        prefix: queueKeyPrefix(this.config),
        defaultJobOptions: { removeOnComplete: { age: 3600, count: 10000 }, removeOnFail: { age: 7 * 24 * 3600 } },
      });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Adds a job; with tracing on, it carries the trace context of the caller's span unless `data.traces` is given. */
  async add<T extends TracedJob>(
    queueName: string,
    jobName: string,
    data: T,
    opts: JobsOptions,
    timeoutMs = 1000,
  ): Promise<void> {
    const traceparent = data.traces ? undefined : currentTraceparent();
    const carried = traceparent ? { ...data, traces: [traceparent] } : data;
    await withTimeout(
      this.queue(queueName).add(jobName, carried, opts),
      timeoutMs,
      `enqueue to ${queueName} timed out`,
    );
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.connection.disconnect();
  }
}
