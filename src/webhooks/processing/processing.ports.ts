import type { BusinessAccountsRepository } from '../../accounts/business-accounts/business-accounts.repository.js';
import type { PhoneNumbersRepository } from '../../accounts/phone-numbers/phone-numbers.repository.js';
import type { TemplatesRepository } from '../../accounts/templates/templates.repository.js';
import type { BlockedUsersRepository } from '../../accounts/users/blocked-users.repository.js';
import type { MarketingPreferencesRepository } from '../../accounts/users/marketing-preferences.repository.js';
import type { AppConfig } from '../../core/config/app-config.js';
import type { UnitOfWork } from '../../core/db/unit-of-work.js';
import type { ConversationWindowsRepository } from '../../messages/conversation-windows.repository.js';
import type { MessagesRepository } from '../../messages/messages.repository.js';
import type { WebhookDeliveriesRepository } from '../deliveries/webhook-deliveries.repository.js';
import type { DeliveryQueue } from '../delivery-queue.js';
import type { EventsRepository } from '../../events/events.repository.js';
import type { PartitionMaintenance } from '../storage/partition-maintenance.js';

/*
 * What webhook processing (DeliveryProcessor and its effects) uses of each collaborator: the methods it calls,
 * picked from the real classes, which therefore implement them by construction. Nest still injects the real
 * classes (`@Inject(Class)`); the service tier (test/service) runs the processor and the effects over the
 * in-memory stand-ins of test/utils/in-memory, which implement the same types.
 */

export type ProcessingDeliveries = Pick<
  WebhookDeliveriesRepository,
  'findForProcessing' | 'markProcessed' | 'recordFailure' | 'markDeadLetter'
>;
export type ProcessingEvents = Pick<EventsRepository, 'insert' | 'pendingOf' | 'claim' | 'countWait'>;
export type ProcessingUnitOfWork = Pick<UnitOfWork, 'run'>;
export type RerunQueue = Pick<DeliveryQueue, 'enqueue'>;
export type PartitionsAhead = Pick<PartitionMaintenance, 'ensureAhead'>;
export type ProcessingConfig = Pick<AppConfig, 'webhookEventChunk'>;

export type StatusMessages = Pick<MessagesRepository, 'lockForStatuses' | 'writeStatuses'>;
export type InboundMessages = Pick<MessagesRepository, 'insertInbound' | 'followUsers'>;
export type InboundWindows = Pick<ConversationWindowsRepository, 'openOrRenew' | 'followUsers'>;
export type PreferenceMoves = Pick<MarketingPreferencesRepository, 'followUsers'>;
export type BlockedUserMoves = Pick<BlockedUsersRepository, 'followUsers'>;
export type TemplateDecisions = Pick<TemplatesRepository, 'applyDecisions'>;
export type AccountStandings = Pick<
  BusinessAccountsRepository,
  'lockStandings' | 'writeStandings' | 'markMarketingMessagesOnboarded'
>;
export type NumberUpdates = Pick<PhoneNumbersRepository, 'applyQualityUpdates' | 'applyNameDecisions'>;
export type PreferenceChanges = Pick<MarketingPreferencesRepository, 'record'>;
