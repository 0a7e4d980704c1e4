import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { UpstreamModule } from '../upstream/upstream.module.js';
import { CampaignRunner } from './campaign-runner.js';
import { CampaignsModule } from './campaigns.module.js';
import { CampaignsWorker } from './campaigns.worker.js';

/** The worker's side of campaigns: the runner (claims, pacing, upstream calls) and the BullMQ consumer with its sweep. */
@Module({
  imports: [CampaignsModule, MessagesModule, AccountsModule, UpstreamModule],
  providers: [CampaignRunner, CampaignsWorker],
})
export class CampaignsWorkerModule {}
