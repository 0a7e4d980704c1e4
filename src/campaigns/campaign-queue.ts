import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { JOBS, QUEUES, jobIds, type RunCampaignJob } from '../core/queue/queue.constants.js';
import { QueueService } from '../core/queue/queue.service.js';

/** Producer of campaign runs (API: start, resume, retry-failed; worker: the sweep). */
@Injectable()
export class CampaignQueue {
  constructor(
    private readonly queues: QueueService,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /**
   * A run of the campaign. Fails soft: with Redis away the campaign is stored running anyway and a worker's sweep
   * queues it once Redis is back.
   */
  async enqueue(campaignId: number, run: number, sweep?: number): Promise<void> {
    try {
      await this.queues.add<RunCampaignJob>(
        QUEUES.campaigns,
        JOBS.runCampaign,
        { campaignId },
        {
          jobId: jobIds.campaign(campaignId, run, sweep),
          removeOnComplete: { age: 3600 },
          removeOnFail: { age: 24 * 3600 },
        },
      );
    } catch (err) {
      this.logger.warn({ err, campaignId }, 'campaign run not queued (Redis); a worker sweep will start it');
    }
  }

  /**
   * The next time slice of a run, behind every job waiting (other campaigns get their turn first), running as `owner`
   * (the lease handed over to it). Fails soft: the lease expires and a worker's sweep queues the campaign again.
   */
  async enqueueSlice(campaignId: number, run: number, slice: number, owner: string): Promise<void> {
    try {
      await this.queues.add<RunCampaignJob>(
        QUEUES.campaigns,
        JOBS.runCampaign,
        { campaignId, owner, slice },
        {
          jobId: jobIds.campaignSlice(campaignId, run, slice, owner),
          removeOnComplete: { age: 3600 },
          removeOnFail: { age: 24 * 3600 },
        },
      );
    } catch (err) {
      this.logger.warn({ err, campaignId }, 'campaign slice not queued (Redis); a worker sweep will go on with it');
    }
  }
}
