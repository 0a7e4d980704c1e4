/** Every queue, job name and payload in one place. Producers live in the API, processors in the worker. */
export const QUEUES = {
  webhookDeliveries: 'webhook-deliveries',
  /** The worker's periodic work, one BullMQ job scheduler per task (core/scheduling/task-scheduler.ts). */
  scheduledTasks: 'scheduled-tasks',
} as const;

export const JOBS = {
  processDelivery: 'process-delivery',
} as const;

/** Webhook deliveries to process together (one receiver batch, or what the sweeper found). */
export interface ProcessDeliveryJob {
  deliveryIds: number[];
  /** Jobs queued by a build before batches carried one delivery each. */
  deliveryId?: number;
}

/** Deterministic job ids make re-enqueueing (sweeper, replays, Meta retries) idempotent. */
export const jobIds = {
  delivery: (deliveryId: number, generation = 0) => `delivery-${deliveryId}-${generation}`,
};
