import { Worker, type Job } from 'bullmq';
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
    const worker = new Worker<D, R>(spec.queue, run, {
      connection: this.connection,
      prefix: runtime.prefix,
      concurrency: spec.concurrency,
      lockDuration: spec.lockDurationMs,
      stalledInterval: spec.stalledIntervalMs,
      maxStalledCount: spec.maxStalledCount,
    });
    worker.on('error', (err) => runtime.logger.warn({ err }, `${spec.name}: connection error`));
    this.worker = worker;
    return worker;
  }

  /**
   * Stops taking jobs. Running jobs get the grace period to finish (`force`: none), then are left where they are;
   * `beforeForce` runs just before that (a warning, aborting the jobs' work). Resolves whether they finished. A
   * graceful close that fails counts as closed (logged). The worker's own connection is closed last.
   */
  async close(options: { force?: boolean; beforeForce?: () => void } = {}): Promise<boolean> {
    const worker = this.worker;
    this.worker = undefined;
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
