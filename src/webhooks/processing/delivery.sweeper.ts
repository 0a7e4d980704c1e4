import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { WebhookDeliveriesRepository } from '../deliveries/webhook-deliveries.repository.js';
import { DeliveryQueue, RERUN_PRIORITY, deliveryJobIds } from '../delivery-queue.js';
import { EventsRepository } from '../../events/events.repository.js';

/** A delivery younger than this is still in the receiver's hands (its job may be on its way). */
export const SWEEP_MIN_AGE_MS = 5_000;
const BATCH = 1000;
/** Pending statuses are swept once the regular delayed re-runs are over, for this long, this many tries. */
const PENDING_AFTER_MS = 9 * 60_000;
const PENDING_FOR_MS = 2 * 3600_000;
const PENDING_MAX_ATTEMPTS = 140;
/** Deliveries one pending-sweep job runs together. */
const SWEEP_JOB_DELIVERIES = 50;
const MAX_BATCHES_PER_SWEEP = 20;

/**
 * Nothing acknowledged is lost: every delivery still `received` SWEEP_MIN_AGE_MS after it arrived gets a live job
 * under its deterministic id: the receiver's batch job (`batch-<batchId>`, carrying the batch's deliveries still
 * received), or the delivery's own. A job that is waiting, delayed, running or retrying is left alone; an id Redis
 * does not know (Redis was down at the enqueue, or came back empty) is added; an id whose job has ended while some
 * of its deliveries are still `received` (a batch job that carried only the part of its batch old enough at an
 * earlier pass, a crash between a job's end and its rows' update) is removed and added again. Run every
 * WEBHOOK_SWEEP_INTERVAL_MS as the `webhook-sweep` scheduled task (worker/worker-schedules.ts), once per interval
 * across all workers, and at once when a worker's Redis connection is ready again (the schedule is re-created).
 *
 * The bound (docs/operations-and-scaling.md, "The sweeper's promise"): once Redis answers, a delivery without a live
 * job gets one within SWEEP_MIN_AGE_MS + WEBHOOK_SWEEP_INTERVAL_MS (+ one pass), and one whose job ended without it
 * within one more interval after that end. A pass looks at up to MAX_BATCHES_PER_SWEEP × BATCH deliveries, oldest
 * first. Should two passes overlap (one outlasting its interval), the job ids make that harmless.
 */
@Injectable()
export class DeliverySweeper implements OnModuleDestroy {
  private stopped = false;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly events: EventsRepository,
    private readonly queue: DeliveryQueue,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** Shutting down: a pass under way stops after its current batch. */
  onModuleDestroy(): void {
    this.stopped = true;
  }

  /** One pass; returns how many deliveries were handed to the queue. */
  async sweep(now = Date.now()): Promise<number> {
    const olderThan = new Date(now - SWEEP_MIN_AGE_MS);
    let cursor: { receivedAt: Date; id: number } | undefined;
    let total = 0;
    let enqueued = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_SWEEP && !this.stopped; batch++) {
      const rows = await this.deliveries.stillReceived(olderThan, cursor, BATCH);
      if (rows.length === 0) break;
      const byBatch = new Map<string, number[]>();
      const jobs: { deliveryIds: number[]; jobId: string }[] = [];
      for (const r of rows) {
        if (r.batchId === null) jobs.push({ deliveryIds: [r.id], jobId: deliveryJobIds.first(r.id) });
        else byBatch.set(r.batchId, [...(byBatch.get(r.batchId) ?? []), r.id]);
      }
      for (const [batchId, ids] of byBatch) jobs.push({ deliveryIds: ids, jobId: deliveryJobIds.batch(batchId) });
      enqueued += await this.queue.ensureLive(jobs);
      total += rows.length;
      if (rows.length < BATCH) break;
      const last = rows[rows.length - 1]!;
      cursor = { receivedAt: last.receivedAt, id: last.id };
    }
    // Info when the pass gave jobs to deliveries that had none (a recovery); a delivery whose job is running or
    // backing off is seen (and left alone) every pass, which is only worth a debug line.
    if (enqueued > 0)
      this.logger.info(
        { deliveries: total, jobs: enqueued },
        'sweeper gave jobs to deliveries still received that had none',
      );
    else if (total > 0)
      this.logger.debug({ deliveries: total }, 'sweeper saw deliveries still received, every one with a live job');
    return total + (this.stopped ? 0 : await this.sweepPendingStatuses(now));
  }

  /**
   * Statuses still waiting for their message once the delayed re-runs are over (≈ 8 min): those re-runs live
   * only in Redis, so a Redis wipe would strand them. Their deliveries get one more run per minute for two
   * hours (bounded by the events' attempt count); a run applies what has become applicable and skips the rest.
   */
  private async sweepPendingStatuses(now: number): Promise<number> {
    const ids = await this.events.deliveriesWithWaitingStatuses({
      maxAttempts: PENDING_MAX_ATTEMPTS,
      createdBefore: new Date(now - PENDING_AFTER_MS),
      createdAfter: new Date(now - PENDING_FOR_MS),
      limit: BATCH,
    });
    const bucket = Math.floor(now / 60_000);
    // Groups of deliveries a job (as the receiver's batches), behind every fresh delivery (RERUN_PRIORITY).
    const jobs = [];
    for (let i = 0; i < ids.length; i += SWEEP_JOB_DELIVERIES) {
      const deliveryIds = ids.slice(i, i + SWEEP_JOB_DELIVERIES);
      jobs.push({
        deliveryIds,
        jobId: deliveryJobIds.pendingSweep(deliveryIds, bucket),
        priority: RERUN_PRIORITY.sweep,
      });
    }
    await this.queue.enqueueMany(jobs);
    return ids.length;
  }
}
