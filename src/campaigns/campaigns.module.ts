import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { CampaignQueue } from './campaign-queue.js';
import { CampaignRecipientsRepository } from './campaign-recipients.repository.js';
import { CampaignsOnTakeover } from './campaigns-on-takeover.js';
import { CampaignsRepository } from './campaigns.repository.js';
import { CampaignsService } from './campaigns.service.js';

/**
 * Campaigns (a domain module): the tables' repositories, the console's use cases (CampaignsService, for the console's
 * controller) and the producer of runs, provided here once. The worker's runs are CampaignsWorkerModule's.
 */
@Module({
  imports: [AccountsModule, AuditModule, MessagesModule],
  providers: [CampaignsRepository, CampaignRecipientsRepository, CampaignsService, CampaignQueue, CampaignsOnTakeover],
  exports: [CampaignsRepository, CampaignRecipientsRepository, CampaignsService, CampaignQueue],
})
export class CampaignsModule {}
