/** Every queue, job name and payload in one place. Producers live in the API, processors in the worker. */
export const QUEUES = {
  webhookDeliveries: 'webhook-deliveries',
  /** The worker's periodic work, one BullMQ job scheduler per task (core/scheduling/task-scheduler.ts). */
  scheduledTasks: 'scheduled-tasks',
  /** One job per campaign run (start, resume, retry-failed, or a sweep of a campaign whose runner is gone). */
  campaigns: 'campaigns',
} as const;

export const JOBS = {
  processDelivery: 'process-delivery',
  runCampaign: 'run-campaign',
} as const;

/**
 * What a job carries of the traces that queued it (W3C `traceparent` values; none when tracing is off): the worker's
 * span for the job joins the first of them and links the others (core/tracing/job-trace.ts). QueueService.add fills
 * it in from the span running when it is not given.
 */
export interface TracedJob {
  traces?: string[];
}

/**
 * Runs a campaign for one time slice (CAMPAIGN_SLICE_MS), until it is done, paused or cancelled (the campaign's lease
 * decides who runs it). A slice that ends with recipients left hands its lease to the next slice's job (`owner`) and
 * queues it behind the campaigns waiting, so campaigns take turns on the worker's slots.
 */
export interface RunCampaignJob extends TracedJob {
  campaignId: number;
  /** The lease the previous slice handed over: this job runs as that owner. */
  owner?: string;
  /** How many slices of this run came before. */
  slice?: number;
}

/** Webhook deliveries to process together (one receiver batch, or what the sweeper found). */
export interface ProcessDeliveryJob extends TracedJob {
  deliveryIds: number[];
  /** The ids of the webhook requests that stored them (their lines' reqId), on every line of the job. */
  reqIds?: string[];
  /** Jobs queued by a build before batches carried one delivery each. */
  deliveryId?: number;
}

/** Deterministic job ids make re-enqueueing (sweeper, replays, Meta retries) idempotent. */
export const jobIds = {
  delivery: (deliveryId: number, generation = 0) => `delivery-${deliveryId}-${generation}`,
  /** One job per run of a campaign; a sweep adds `sweep` and its time slot (a duplicate run finds the lease taken). */
  campaign: (campaignId: number, run: number, sweep?: number) =>
    `campaign-${campaignId}-${run}${sweep === undefined ? '' : `-sweep-${sweep}`}`,
  /** The next slice of a campaign's run, queued by the slice before it. */
  campaignSlice: (campaignId: number, run: number, slice: number, owner: string) =>
    `campaign-${campaignId}-${run}-slice-${slice}-${owner.slice(-12)}`,
};
