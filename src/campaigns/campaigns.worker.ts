import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { Metrics } from '../core/metrics/metrics.js';
import { ManagedWorker, type JobLocks } from '../core/queue/managed-worker.js';
import { QUEUES, type RunCampaignJob } from '../core/queue/queue.constants.js';
import { queueKeyPrefix } from '../core/redis/redis-keys.js';
import { CampaignQueue } from './campaign-queue.js';
import { CampaignRunner, type RunOutcome } from './campaign-runner.js';
import { CampaignsRepository } from './campaigns.repository.js';

/**
 * A run whose worker died is taken back after its lock expires (30 s, checked every 10 s), as often as that happens;
 * a graceful stop waits 10 s for running campaigns to write what is in flight.
 */
const LOCKS: JobLocks = { lockDurationMs: 30_000, stalledIntervalMs: 10_000, maxStalledCount: 1000, graceMs: 10_000 };

/**
 * The BullMQ consumer of campaign runs (worker process only), and a sweep of running campaigns no runner holds
 * (their job lost with Redis, never enqueued, or their runner dead): every CAMPAIGN_LEASE_MS, on every worker (a
 * duplicate run only finds the lease taken).
 */
@Injectable()
export class CampaignsWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private worker?: ManagedWorker<RunCampaignJob, RunOutcome>;
  private sweeper?: NodeJS.Timeout;
  private readonly abort = new AbortController();

  constructor(
    private readonly runner: CampaignRunner,
    private readonly campaigns: CampaignsRepository,
    private readonly queue: CampaignQueue,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = new ManagedWorker<RunCampaignJob, RunOutcome>(
      {
        queue: QUEUES.campaigns,
        name: 'campaign worker',
        concurrency: this.config.campaignConcurrency,
        ...LOCKS,
        logContextOf: (job) => ({ campaignId: job.data.campaignId }),
      },
      {
        redisUrl: this.config.redisUrl,
        redisCluster: this.config.redisCluster,
        prefix: queueKeyPrefix(this.config),
        logger: this.logger,
        metrics: this.metrics,
      },
      (job) =>
        this.runner.run(job.data.campaignId, this.abort.signal, { owner: job.data.owner, slice: job.data.slice }),
    );
    this.worker.start().on('failed', (job, err) => this.logger.error({ err, jobId: job?.id }, 'campaign run failed'));
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
    await this.worker?.close({
      beforeForce: () =>
        this.logger.warn(
          'campaign runs still going at shutdown; leaving them (their leases expire and another worker takes over)',
        ),
    });
    this.worker = undefined;
  }
}
