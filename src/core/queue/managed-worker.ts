import { Worker, type Job } from 'bullmq';
import { Cluster } from 'ioredis';
import type { AppLogger } from '../logging/app-logger.js';
import { logContext, type LogContext } from '../logging/log-context.js';
import type { Metrics } from '../metrics/metrics.js';
import { createRedisConnection, type RedisClient, type RedisEndpoint } from '../redis/redis-connection.js';
import { inJobSpan } from '../tracing/job-trace.js';
import type { TracedJob } from './queue.constants.js';

/** Where and with what a worker runs: the same for every consumer of a process. */
export interface WorkerRuntime extends RedisEndpoint {
  /** BullMQ's prefix: queueKeyPrefix(config) (QUEUE_PREFIX, hash-tagged on a Redis Cluster). */
  prefix: string;
  logger: AppLogger;
  metrics: Metrics;
}

/**
 * After a node leaves a Redis Cluster (its master died and a replica is being promoted), how long before the worker is
 * replaced: a few times a short cluster-node-timeout, so the new worker meets the promoted master.
 */
const REPLACE_AFTER_NODE_LOSS_MS = 5000;

/** How a job is held: a job whose worker died is taken over by another once its lock (renewed while it runs) expires. */
export interface JobLocks {
  lockDurationMs: number;
  /** How often expired locks are looked for... */
  stalledIntervalMs: number;
  /** ...and how often a job may be taken back before it counts as failed. */
  maxStalledCount: number;
  /** A graceful close waits this long for running jobs, then leaves them where they are (a forced close). */
  graceMs: number;
}

export interface ManagedWorkerSpec<D> extends JobLocks {
  /** The queue consumed (a QUEUES name); also the `queue` label of bmapi_queue_job_duration_seconds. */
  queue: string;
  /** How the worker's own log lines name it: `webhook worker`. */
  name: string;
  concurrency: number;
  /** What every line logged while a job runs carries besides the job's id (its deliveries, its campaign). */
  logContextOf?: (job: Job<D>) => Omit<LogContext, 'jobId'>;
  /** A connection owned by the caller (it also serves the caller's queue); by default the worker opens its own. */
  connection?: RedisClient;
}

/**
 * A BullMQ Worker as every consumer of this project runs one (the webhook deliveries, the campaign runs, the
 * scheduled tasks): its own blocking Redis connection that waits for Redis rather than failing, each job run inside
 * its trace span (tracing on) and its log context and timed in bmapi_queue_job_duration_seconds{queue,outcome},
 * connection errors logged as warnings, and one bounded close: running jobs get the grace period, then a forced close leaves them as a crash
 * would (their locks expire and another worker takes them over).
 */
export class ManagedWorker<D, R> {
  private worker?: Worker<D, R>;
  private connection?: RedisClient;
  private replacing?: NodeJS.Timeout;
  private paused = false;

  constructor(
    private readonly spec: ManagedWorkerSpec<D>,
    private readonly runtime: WorkerRuntime,
    private readonly processJob: (job: Job<D>) => Promise<R>,
  ) {}

  /** Starts taking jobs; returns the BullMQ worker for listeners of its own (`failed`). */
  start(): Worker<D, R> {
    const { spec, runtime } = this;
    this.connection = spec.connection ?? createRedisConnection(runtime, { failFast: false });
    const timed = runtime.metrics.queueJobs;
    const run = (job: Job<D>): Promise<R> =>
      inJobSpan(spec.queue, job.id, (job.data as TracedJob | undefined)?.traces, () =>
        logContext.run({ jobId: job.id, ...spec.logContextOf?.(job) }, async () => {
          const timer = timed.startTimer({ queue: spec.queue });
          try {
            const result = await this.processJob(job);
            timer({ outcome: 'ok' });
            return result;
          } catch (err) {
            timer({ outcome: 'failed' });
            throw err;
          }
        }),
      );
    this.worker = this.newWorker(run);
    if (this.connection instanceof Cluster) this.connection.on('-node', () => this.replaceSoon(run));
    return this.worker;
  }

  private newWorker(run: (job: Job<D>) => Promise<R>): Worker<D, R> {
    const { spec, runtime } = this;
    const worker = new Worker<D, R>(spec.queue, run, {
      connection: this.connection!,
      prefix: runtime.prefix,
      concurrency: spec.concurrency,
      lockDuration: spec.lockDurationMs,
      stalledInterval: spec.stalledIntervalMs,
      maxStalledCount: spec.maxStalledCount,
    });
    worker.on('error', (err) => runtime.logger.warn({ err }, `${spec.name}: connection error`));
    return worker;
  }

  /**
   * A node left the Redis Cluster (a master died; its replica is being promoted). A BullMQ worker that was waiting for
   * jobs on that master may never take one again (bullmq 6.7 with ioredis 5.11: its connections sit idle on the
   * promoted master; test/e2e/redis-cluster.e2e-spec.ts), so once the promotion has had time, a new worker takes over
   * with the same listeners. The old one is closed without waiting: a job it still runs completes or, like a crash's,
   * is taken over once its lock lapses.
   */
  private replaceSoon(run: (job: Job<D>) => Promise<R>): void {
    if (this.replacing || !this.worker) return;
    this.replacing = setTimeout(() => {
      this.replacing = undefined;
      const old = this.worker;
      if (!old) return;
      const fresh = this.newWorker(run);
      for (const event of ['failed', 'drained'] as const)
        for (const listener of old.listeners(event)) fresh.on(event, listener as (...args: unknown[]) => void);
      if (this.paused) void fresh.pause(true);
      this.worker = fresh;
      void old.close(true).catch(() => undefined);
      this.runtime.logger.warn(`${this.spec.name}: a Redis Cluster node left; worker replaced`);
    }, REPLACE_AFTER_NODE_LOSS_MS);
    this.replacing.unref();
  }

  /** Takes no new job until `resume` (running jobs go on). */
  async pause(): Promise<void> {
    this.paused = true;
    await this.worker?.pause(true);
  }

  resume(): void {
    this.paused = false;
    void this.worker?.resume();
  }

  /**
   * Stops taking jobs. Running jobs get the grace period to finish (`force`: none), then are left where they are;
   * `beforeForce` runs just before that (a warning, aborting the jobs' work). Resolves whether they finished. A
   * graceful close that fails counts as closed (logged). The worker's own connection is closed last.
   */
  async close(options: { force?: boolean; beforeForce?: () => void } = {}): Promise<boolean> {
    const worker = this.worker;
    this.worker = undefined;
    clearTimeout(this.replacing);
    this.replacing = undefined;
    if (!worker) return true;
    let finished = false;
    if (!options.force) {
      const graceful = worker.close().then(
        () => true,
        (err: unknown) => {
          this.runtime.logger.warn({ err }, `${this.spec.name}: did not close cleanly`);
          return true;
        },
      );
      const timedOut = new Promise<false>((resolve) => setTimeout(() => resolve(false), this.spec.graceMs).unref());
      finished = await Promise.race([graceful, timedOut]);
    }
    if (!finished) {
      options.beforeForce?.();
      await worker.close(true).catch(() => undefined);
    }
    if (!this.spec.connection) this.connection?.disconnect();
    return finished;
  }
}
