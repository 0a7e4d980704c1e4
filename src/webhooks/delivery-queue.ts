import { Injectable } from '@nestjs/common';
import type { JobsOptions } from 'bullmq';
import { AppConfig } from '../core/config/app-config.js';
import { JOBS, QUEUES, jobIds, type ProcessDeliveryJob } from '../core/queue/queue.constants.js';
import { QueueService } from '../core/queue/queue.service.js';

/** A delivery job; `rerun` counts the delayed re-runs that wait for messages a status refers to. */
export interface DeliveryJobData extends ProcessDeliveryJob {
  rerun?: number;
}

/** Re-runs for statuses whose message is not stored yet: 0.5 s, 1 s, 2 s … capped at 2 min, ≈ 8 min in all. */
export const MAX_PENDING_RERUNS = 11;
export function pendingRerunDelayMs(rerun: number): number {
  return Math.min(500 * 2 ** (rerun - 1), 120_000);
}

export const deliveryJobIds = {
  /** The one id the receiver and the sweeper use: adding it again while the job exists is a no-op. */
  first: (deliveryId: number) => jobIds.delivery(deliveryId),
  pending: (deliveryId: number, rerun: number) => `delivery-${deliveryId}-pending-${rerun}`,
  replay: (deliveryId: number, at = Date.now()) => `delivery-${deliveryId}-replay-${at}`,
  /** A second chance for a delivery stuck in `received` long after its job ended (see DeliverySweeper). */
  sweep: (deliveryId: number, bucket: number) => `delivery-${deliveryId}-sweep-${bucket}`,
  /** Another run for a delivery whose statuses still wait for their message (one per minute bucket). */
  pendingSweep: (deliveryId: number, bucket: number) => `delivery-${deliveryId}-pending-sweep-${bucket}`,
};

/** Producer side of the webhook-deliveries queue, shared by the receiver, the console replay and the worker. */
@Injectable()
export class DeliveryQueue {
  constructor(
    private readonly queues: QueueService,
    private readonly config: AppConfig,
  ) {}

  jobOptions(jobId: string, delayMs?: number): JobsOptions {
    return {
      jobId,
      attempts: this.config.webhookMaxAttempts,
      backoff: { type: 'exponential', delay: 1000 },
      ...(delayMs ? { delay: delayMs } : {}),
    };
  }

  /** Bounded in time: when Redis is down the caller relies on the sweeper instead of waiting. */
  async enqueue(data: DeliveryJobData, jobId: string, opts: { delayMs?: number; timeoutMs?: number } = {}): Promise<void> {
    await this.queues.add(QUEUES.webhookDeliveries, JOBS.processDelivery, data, this.jobOptions(jobId, opts.delayMs), opts.timeoutMs ?? 1000);
  }

  /** One round trip for many deliveries; ids that already exist are left as they are. */
  async enqueueMany(jobs: { deliveryId: number; jobId: string }[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.queues.queue(QUEUES.webhookDeliveries).addBulk(
      jobs.map((j) => ({ name: JOBS.processDelivery, data: { deliveryId: j.deliveryId } satisfies DeliveryJobData, opts: this.jobOptions(j.jobId) })),
    );
  }
}
