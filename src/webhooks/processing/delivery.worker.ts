import { inspect } from 'node:util';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { UnrecoverableError, type Job } from 'bullmq';
import { AppConfig } from '../../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { logContext } from '../../core/logging/log-context.js';
import { Metrics } from '../../core/metrics/metrics.js';
import { ManagedWorker, type JobLocks } from '../../core/queue/managed-worker.js';
import { QUEUES } from '../../core/queue/queue.constants.js';
import { RedisService } from '../../core/redis/redis.service.js';
import { queueKeyPrefix } from '../../core/redis/redis-keys.js';
import { receiversSaturatedKey } from '../acks-first.js';
import { deliveriesOf, type DeliveryJobData } from '../delivery-queue.js';
import { DeliveryProcessor, ProcessingAborted, type ProcessResult } from './delivery.processor.js';
import { ProcessingHold } from './processing-hold.js';

/**
 * A job whose worker died is retried by another worker after its lock expires (15 s, checked every 5 s), at most 3
 * times; a graceful stop waits 10 s for running jobs, after that they are left to be retried elsewhere.
 */
const LOCKS: JobLocks = { lockDurationMs: 15_000, stalledIntervalMs: 5_000, maxStalledCount: 3, graceMs: 10_000 };

/** The BullMQ consumer of webhook deliveries (worker process only). */
@Injectable()
export class DeliveryWorker implements OnModuleInit, OnModuleDestroy {
  private worker?: ManagedWorker<DeliveryJobData, ProcessResult | null>;
  private hold?: ProcessingHold;
  private readonly abort = new AbortController();

  constructor(
    private readonly processor: DeliveryProcessor,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly redis: RedisService,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onModuleInit(): void {
    this.worker = new ManagedWorker<DeliveryJobData, ProcessResult | null>(
      {
        queue: QUEUES.webhookDeliveries,
        name: 'webhook worker',
        concurrency: this.config.workerConcurrency,
        ...LOCKS,
        // Every line logged while a job runs (processor, effects, repositories) carries its job id and deliveries.
        // The webhook requests that stored them too (reqIds), when the receiver enqueued the job.
        logContextOf: (job) => ({
          deliveryIds: deliveriesOf(job.data),
          ...(job.data.reqIds?.length ? { reqIds: job.data.reqIds } : {}),
        }),
      },
      {
        redisUrl: this.config.redisUrl,
        redisCluster: this.config.redisCluster,
        prefix: queueKeyPrefix(this.config),
        logger: this.logger,
        metrics: this.metrics,
      },
      (job) => this.run(job),
    );
    const hold = new ProcessingHold(this.worker, {
      redis: this.redis.client,
      key: receiversSaturatedKey(this.config),
      maxMs: this.config.webhookHoldMaxMs,
      logger: this.logger,
      metrics: this.metrics,
    });
    this.worker
      .start()
      .on('failed', (job, err) => void this.onFailed(job, err))
      .on('drained', () => hold.drained());
    hold.start();
    this.hold = hold;
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  /**
   * Stops taking jobs. `force` leaves running jobs where they are, as a crash would: each stops at the next
   * event, keeps what it committed, and is taken over by another worker once its lock expires. Without
   * `force` running jobs finish first (up to a grace period, then as with `force`).
   */
  async stop(opts: { force?: boolean } = {}): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    this.hold?.stop();
    if (opts.force) this.abort.abort();
    await worker.close({
      force: opts.force,
      beforeForce: () => {
        if (!opts.force)
          this.logger.warn('webhook jobs still running at shutdown; leaving them to be retried by another worker');
        this.abort.abort();
      },
    });
  }

  /**
   * A job carries a batch of deliveries, processed together. When the batch fails, each delivery is run on
   * its own, so that one bad payload never holds up (or dead-letters) the others: those that fail have the
   * attempt recorded, and the job is retried for them (a retry skips what is already processed) or, on its
   * last attempt or for a permanent error, they become dead letters.
   */
  private async run(job: Job<DeliveryJobData>): Promise<ProcessResult | null> {
    await this.hold?.released();
    const ids = deliveriesOf(job.data);
    const started = performance.now();
    try {
      const result = await this.processor.process(ids, job.data.rerun, this.abort.signal);
      this.counted(result, started);
      return result;
    } catch (err) {
      // Stopped hard: whatever failed after that is the stop itself, not the deliveries' fault.
      if (err instanceof ProcessingAborted || this.abort.signal.aborted) throw err;
      if (ids.length === 1) {
        await this.recordFailure(job, ids, err);
        throw err;
      }
      this.logger.warn({ err }, 'webhook batch failed; processing its deliveries one by one');
    }
    let retry: Error | undefined;
    for (const id of ids) {
      // Its own lines name this delivery only.
      await logContext.run({ jobId: job.id, deliveryIds: [id], reqIds: job.data.reqIds }, async () => {
        try {
          const alone = performance.now();
          this.counted(await this.processor.process([id], job.data.rerun, this.abort.signal), alone);
        } catch (err) {
          if (err instanceof ProcessingAborted || this.abort.signal.aborted) throw err;
          if (!(await this.recordFailure(job, [id], err))) retry = err instanceof Error ? err : new Error(inspect(err));
        }
      });
    }
    if (retry) throw retry instanceof UnrecoverableError ? new Error(retry.message) : retry;
    return null;
  }

  /** Records a failed attempt of these deliveries; true when it was their last (they are dead letters now). */
  private async recordFailure(job: Job<DeliveryJobData>, ids: number[], err: unknown): Promise<boolean> {
    const message = err instanceof Error ? err.message : String(err);
    const final = err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    this.logger.warn({ err, attempt: job.attemptsMade + 1, final }, 'webhook delivery processing failed');
    await this.processor.recordFailure(ids, message, final).then(
      () => final && this.metrics.deliveriesDeadLettered.inc(ids.length),
      (e: unknown) => this.logger.error({ err: e }, 'could not record the failure'),
    );
    return final;
  }

  /** Counted, and one info line per run naming each delivery with its items (the job's context adds jobId, reqIds). */
  private counted(result: ProcessResult, started: number): void {
    this.logger.info(
      {
        deliveryIds: result.deliveryIds,
        items: result.items,
        events: result.inserted,
        applied: result.applied,
        waiting: result.waiting,
        ms: Math.round((performance.now() - started) * 10) / 10,
      },
      'webhook deliveries processed',
    );
    this.metrics.deliveriesProcessed.inc(result.deliveryIds.length);
    this.metrics.eventsStored.inc(result.inserted);
  }

  /** Catches jobs that failed for good without the processor seeing it (taken from dead workers too often). */
  private async onFailed(job: Job<DeliveryJobData> | undefined, err: Error): Promise<void> {
    if (!job || err instanceof ProcessingAborted) return;
    try {
      if (await job.isFailed())
        this.metrics.deliveriesDeadLettered.inc(
          await this.processor.markDeadLetter(deliveriesOf(job.data), err.message),
        );
    } catch (e) {
      this.logger.warn(
        { err: e, jobId: job.id, deliveryIds: deliveriesOf(job.data) },
        'could not check a failed webhook job',
      );
    }
  }
}
