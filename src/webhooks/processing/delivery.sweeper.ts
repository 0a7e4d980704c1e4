import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { WebhookDeliveriesRepository } from '../deliveries/webhook-deliveries.repository.js';
import { DeliveryQueue, deliveryJobIds } from '../delivery-queue.js';
import { EventsRepository } from '../../events/events.repository.js';

/** A delivery younger than this is still in the receiver's hands (its job may be on its way). */
const MIN_AGE_MS = 5_000;
/** Longer than any job's retries take (8 attempts with exponential backoff ≈ 2 min); see sweep(). */
const STUCK_AFTER_MS = 10 * 60_000;
const BATCH = 1000;
/** Pending statuses are swept once the regular delayed re-runs are over, for this long, this many tries. */
const PENDING_AFTER_MS = 9 * 60_000;
const PENDING_FOR_MS = 2 * 3600_000;
const PENDING_MAX_ATTEMPTS = 140;
const MAX_BATCHES_PER_SWEEP = 20;

/**
 * Nothing acknowledged is lost: every delivery still `received` a few seconds after it arrived is
 * (re-)enqueued under its deterministic job id: the receiver's batch job (`batch-<batchId>`, re-added with
 * the batch's deliveries still received), or the delivery's own. That recovers deliveries acknowledged while
 * Redis was down and jobs lost with Redis's data; for a delivery whose job is queued, running or retrying,
 * the add is a no-op. Run every WEBHOOK_SWEEP_INTERVAL_MS as the `webhook-sweep` scheduled task (worker/worker-schedules.ts):
 * once per interval across all workers. Should two passes overlap (one outlasting its interval), the job ids make
 * that harmless.
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
    const olderThan = new Date(now - MIN_AGE_MS);
    const stuckBefore = now - STUCK_AFTER_MS;
    let cursor: { receivedAt: Date; id: number } | undefined;
    let total = 0;
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
      // Still `received` long after every retry would have ended: its job finished without updating the row
      // (a replay whose enqueue was lost, a crash between the job's end and the row's update). A fresh job id
      // per 10-minute bucket gives it another run; processing is idempotent, and a real failure dead-letters it.
      const bucket = Math.floor(now / STUCK_AFTER_MS);
      for (const r of rows) {
        if (r.receivedAt.getTime() < stuckBefore)
          jobs.push({ deliveryIds: [r.id], jobId: deliveryJobIds.sweep(r.id, bucket) });
      }
      await this.queue.enqueueMany(jobs);
      total += rows.length;
      if (rows.length < BATCH) break;
      const last = rows[rows.length - 1]!;
      cursor = { receivedAt: last.receivedAt, id: last.id };
    }
    // Debug only: a delivery whose job is running or backing off is seen (and skipped by its job id) every pass.
    if (total > 0) this.logger.debug({ deliveries: total }, 'sweeper handed deliveries still received to the queue');
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
    await this.queue.enqueueMany(
      ids.map((id) => ({ deliveryIds: [id], jobId: deliveryJobIds.pendingSweep(id, bucket) })),
    );
    return ids.length;
  }
}
