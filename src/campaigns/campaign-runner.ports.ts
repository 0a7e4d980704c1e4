import type { AccountCredentials } from '../accounts/business-accounts/account-credentials.js';
import type { PhoneNumbersRepository } from '../accounts/phone-numbers/phone-numbers.repository.js';
import type { BlockedUsersRepository } from '../accounts/users/blocked-users.repository.js';
import type { MarketingPreferencesRepository } from '../accounts/users/marketing-preferences.repository.js';
import type { AppConfig } from '../core/config/app-config.js';
import type { UnitOfWork } from '../core/db/unit-of-work.js';
import type { MessagesRepository } from '../messages/messages.repository.js';
import type { NumberPacer } from '../messages/pacing/number-pacer.js';
import type { WhatsAppClient } from '../upstream/whatsapp.client.js';
import type { CampaignQueue } from './campaign-queue.js';
import type { CampaignRecipientsRepository } from './campaign-recipients.repository.js';
import type { CampaignsRepository } from './campaigns.repository.js';

/*
 * What the campaign runner (CampaignRunner) uses of each collaborator: the methods it calls, picked from the real
 * classes, which therefore implement them by construction. Nest still injects the real classes (`@Inject(Class)`);
 * the service tier (test/service/campaign-runner.spec.ts) runs the runner over the in-memory stand-ins of
 * test/utils/in-memory, which implement the same types.
 */

export type RunnerCampaigns = Pick<
  CampaignsRepository,
  | 'acquireLease'
  | 'renewLease'
  | 'handOverLease'
  | 'releaseLease'
  | 'lockRunning'
  | 'statusOf'
  | 'statusForShare'
  | 'pauseByRunner'
  | 'complete'
>;
export type RunnerRecipients = Pick<
  CampaignRecipientsRepository,
  'claim' | 'skip' | 'attachMessages' | 'requeue' | 'hasPending' | 'unsettled'
>;
export type RunnerMessages = Pick<MessagesRepository, 'insertCampaignMessages' | 'markSentMany' | 'markFailedMany'>;
export type RunnerNumbers = Pick<PhoneNumbersRepository, 'sendState'>;
export type RunnerPreferences = Pick<MarketingPreferencesRepository, 'stoppedAmong'>;
export type RunnerBlocked = Pick<BlockedUsersRepository, 'blockedAmong'>;
export type RunnerCredentials = Pick<AccountCredentials, 'tokenFor'>;
export type RunnerUnitOfWork = Pick<UnitOfWork, 'run'>;
export type RunnerPacer = Pick<NumberPacer, 'reserve' | 'until' | 'holdBack'>;
export type RunnerUpstream = Pick<WhatsAppClient, 'sendMessage' | 'sendMarketingMessage'>;
export type SliceQueue = Pick<CampaignQueue, 'enqueueSlice'>;
export type RunnerConfig = Pick<
  AppConfig,
  'campaignSliceMs' | 'campaignLeaseMs' | 'campaignChunkSize' | 'campaignMaxInFlight' | 'campaignUnconfirmedAfterMs'
>;
