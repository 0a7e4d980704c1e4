import { Module } from '@nestjs/common';
import { AccountsModule, secretBoxProvider } from '../accounts/accounts.module.js';
import { AccountCredentials } from '../accounts/credentials/account-credentials.js';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import { PhoneNumbersRepository } from '../accounts/phone-numbers/phone-numbers.repository.js';
import { TemplatesRepository } from '../accounts/templates/templates.repository.js';
import { BlockedUsersRepository } from '../accounts/users/blocked-users.repository.js';
import { MarketingPreferencesRepository } from '../accounts/users/marketing-preferences.repository.js';
import { AuditModule } from '../audit/audit.module.js';
import { ConversationWindowsRepository } from '../messages/conversation-windows.repository.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { NumberPacer } from '../messages/pacing/number-pacer.js';
import { SendContextReader } from '../messages/send/send-context.reader.js';
import { UpstreamModule } from '../upstream/upstream.module.js';
import { CampaignQueue } from './campaign-queue.js';
import { CampaignRecipientsRepository } from './campaign-recipients.repository.js';
import { CampaignRunner } from './campaign-runner.js';
import { CampaignsRepository } from './campaigns.repository.js';
import { CampaignsService } from './campaigns.service.js';
import { CampaignsWorker } from './campaigns.worker.js';

/**
 * Campaigns (a domain module): the tables' repositories, the console's use cases (CampaignsService, for the console's
 * controller) and the producer of runs. The worker imports CampaignsWorkerModule.
 */
@Module({
  imports: [AccountsModule, AuditModule],
  providers: [CampaignsRepository, CampaignRecipientsRepository, CampaignsService, CampaignQueue, SendContextReader, ConversationWindowsRepository],
  exports: [CampaignsService],
})
export class CampaignsModule {}

/** The worker's side: the runner (claims, pacing, upstream calls) and the BullMQ consumer with its sweep. */
@Module({
  imports: [UpstreamModule],
  providers: [
    CampaignsRepository,
    CampaignRecipientsRepository,
    CampaignQueue,
    CampaignRunner,
    CampaignsWorker,
    MessagesRepository,
    NumberPacer,
    PhoneNumbersRepository,
    TemplatesRepository,
    MarketingPreferencesRepository,
    BlockedUsersRepository,
    BusinessAccountsRepository,
    AccountCredentials,
    secretBoxProvider,
  ],
})
export class CampaignsWorkerModule {}
