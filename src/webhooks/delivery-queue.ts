import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { JobsOptions } from 'bullmq';
import { AppConfig } from '../core/config/app-config.js';
import { JOBS, QUEUES, jobIds, type ProcessDeliveryJob } from '../core/queue/queue.constants.js';
import { QueueService } from '../core/queue/queue.service.js';

/** A delivery job; `rerun` counts the delayed re-runs that wait for messages a status refers to. */
export interface DeliveryJobData extends ProcessDeliveryJob {
  rerun?: number;
}

/** The deliveries a job carries (jobs queued by an older build carry one `deliveryId`). */
export function deliveriesOf(job: DeliveryJobData): number[] {
  return job.deliveryIds ?? (job.deliveryId !== undefined ? [job.deliveryId] : []);
}

/** Re-runs for statuses whose message is not stored yet: 0.5 s, 1 s, 2 s … capped at 2 min, ≈ 8 min in all. */
export const MAX_PENDING_RERUNS = 11;
export function pendingRerunDelayMs(rerun: number): number {
  return Math.min(500 * 2 ** (rerun - 1), 120_000);
}

export const deliveryJobIds = {
  /** One delivery on its own (stored without a batch, or split off a failing batch). */
  first: (deliveryId: number) => jobIds.delivery(deliveryId),
  /** The receiver's job for one group commit; the sweeper re-adds the same id, a no-op while the job exists. */
  batch: (batchId: string) => `batch-${batchId}`,
  /** The n-th delayed re-run of these deliveries (one id per set of deliveries and re-run). */
  pending: (deliveryIds: number[], rerun: number) =>
    `pending-${createHash('sha1')
      .update([...deliveryIds].sort((a, b) => a - b).join(','))
      .digest('base64url')
      .slice(0, 20)}-${rerun}`,
  replay: (deliveryId: number, at = Date.now()) => `delivery-${deliveryId}-replay-${at}`,
  /** Another run for deliveries whose statuses still wait for their message (one per set and minute bucket). */
  pendingSweep: (deliveryIds: number[], bucket: number) =>
    `pending-sweep-${createHash('sha1')
      .update([...deliveryIds].sort((a, b) => a - b).join(','))
      .digest('base64url')
      .slice(0, 20)}-${bucket}`,
};

/**
 * BullMQ priorities of the queue's jobs (lower runs first; a job without one, priority 0, before any of them): a
 * delivery Meta just sent never waits behind re-runs of statuses still waiting for their message, however many
 * there are (statuses of messages other tools sent never match, and on a busy or slow host thousands of re-runs
 * queued ahead of fresh deliveries held the latter for minutes: slow-host rehearsal of 2026-12-02).
 */
export const RERUN_PRIORITY = { delayed: 5, sweep: 10 } as const;

/** Producer side of the webhook-deliveries queue, shared by the receiver, the console replay and the worker. */
@Injectable()
export class DeliveryQueue {
  constructor(
    private readonly queues: QueueService,
    private readonly config: AppConfig,
  ) {}

  jobOptions(jobId: string, delayMs?: number, priority?: number): JobsOptions {
    return {
      jobId,
      attempts: this.config.webhookMaxAttempts,
      backoff: { type: 'exponential', delay: 1000 },
      ...(delayMs ? { delay: delayMs } : {}),
      ...(priority ? { priority } : {}),
    };
  }

  /** Bounded in time: when Redis is down the caller relies on the sweeper instead of waiting. */
  async enqueue(
    data: DeliveryJobData,
    jobId: string,
    opts: { delayMs?: number; timeoutMs?: number; priority?: number } = {},
  ): Promise<void> {
    await this.queues.add(
      QUEUES.webhookDeliveries,
      JOBS.processDelivery,
      data,
      this.jobOptions(jobId, opts.delayMs, opts.priority),
      opts.timeoutMs ?? 1000,
    );
  }

  /** One round trip for many jobs; ids that already exist are left as they are. */
  async enqueueMany(jobs: { deliveryIds: number[]; jobId: string; priority?: number }[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.queues.queue(QUEUES.webhookDeliveries).addBulk(
      jobs.map((j) => ({
        name: JOBS.processDelivery,
        data: { deliveryIds: j.deliveryIds } satisfies DeliveryJobData,
        opts: this.jobOptions(j.jobId, undefined, j.priority),
      })),
    );
  }

  /**
   * Makes sure each of these jobs is live (waiting, delayed, active or retrying) and returns how many were not:
   * an id Redis does not know is added; an id whose job has ended (completed or failed) while the caller still
   * sees its deliveries unprocessed is removed and added again under the same id, so that it runs once more.
   * A job that ends between the look-up and the add is seen ended by the caller's next pass.
   */
  async ensureLive(jobs: { deliveryIds: number[]; jobId: string }[]): Promise<number> {
    if (jobs.length === 0) return 0;
    const queue = this.queues.queue(QUEUES.webhookDeliveries);
    const states = await Promise.all(jobs.map((j) => queue.getJobState(j.jobId)));
    const ended = (state: string) => state === 'completed' || state === 'failed';
    await Promise.all(jobs.filter((_, i) => ended(states[i]!)).map((j) => queue.remove(j.jobId)));
    const notLive = jobs.filter((_, i) => ended(states[i]!) || states[i] === 'unknown');
    await this.enqueueMany(notLive);
    return notLive.length;
  }
}
