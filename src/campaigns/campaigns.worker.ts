import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { AppConfig } from '../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { logContext } from '../core/logging/log-context.js';
import { closeWorker } from '../core/queue/close-worker.js';
import { QUEUES, type RunCampaignJob } from '../core/queue/queue.constants.js';
import { createRedisConnection } from '../core/redis/redis.service.js';
import { CampaignQueue } from './campaign-queue.js';
import { CampaignRunner, type RunOutcome } from './campaign-runner.js';
import { CampaignsRepository } from './campaigns.repository.js';

/** A job whose worker died is taken back after its lock expires, checked this often; as often as that happens. */
const LOCK_DURATION_MS = 30_000;
const STALLED_INTERVAL_MS = 10_000;
const MAX_STALLED_COUNT = 1000;
/** A graceful stop waits this long for running campaigns to write what is in flight. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * The BullMQ consumer of campaign runs (worker process only), and a sweep of running campaigns no runner holds
 * (their job lost with Redis, never enqueued, or their runner dead): every CAMPAIGN_LEASE_MS, on every worker (a
 * duplicate run only finds the lease taken).
 */
@Injectable()
export class CampaignsWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private worker?: Worker<RunCampaignJob, RunOutcome>;
  private connection?: Redis;
  private sweeper?: NodeJS.Timeout;
  private readonly abort = new AbortController();

  constructor(
    private readonly runner: CampaignRunner,
    private readonly campaigns: CampaignsRepository,
    private readonly queue: CampaignQueue,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.connection = createRedisConnection(this.config.redisUrl, { failFast: false });
    const run = (job: Job<RunCampaignJob>) => logContext.run({ jobId: job.id, campaignId: job.data.campaignId }, () => this.runner.run(job.data.campaignId, this.abort.signal));
    this.worker = new Worker<RunCampaignJob, RunOutcome>(QUEUES.campaigns, run, {
      connection: this.connection,
      prefix: this.config.queuePrefix,
      concurrency: this.config.campaignConcurrency,
      lockDuration: LOCK_DURATION_MS,
      stalledInterval: STALLED_INTERVAL_MS,
      maxStalledCount: MAX_STALLED_COUNT,
    });
    this.worker.on('error', (err) => this.logger.warn({ err }, 'campaign worker connection error'));
    this.worker.on('failed', (job, err) => this.logger.error({ err, jobId: job?.id }, 'campaign run failed'));
    this.sweeper = setInterval(() => void this.sweep(), this.config.campaignLeaseMs);
    this.sweeper.unref();
  }

  /** Queues a run of every running campaign whose lease is free or expired. */
  async sweep(): Promise<number> {
    try {
      const orphaned = await this.campaigns.orphaned(this.config.campaignLeaseMs);
      const slot = Math.floor(Date.now() / this.config.campaignLeaseMs);
      for (const c of orphaned) await this.queue.enqueue(c.id, c.run, slot);
      return orphaned.length;
    } catch (err) {
      this.logger.warn({ err }, 'campaign sweep failed');
      return 0;
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    // Running campaigns stop claiming at once; their in-flight sends are written; the lease is released for the next worker.
    this.abort.abort();
    const worker = this.worker;
    this.worker = undefined;
    if (worker) {
      await closeWorker(worker, {
        graceMs: SHUTDOWN_GRACE_MS,
        beforeForce: () => this.logger.warn('campaign runs still going at shutdown; leaving them (their leases expire and another worker takes over)'),
      });
    }
    this.connection?.disconnect();
  }
}
