import { Module } from '@nestjs/common';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import { PhoneNumbersRepository } from '../accounts/phone-numbers/phone-numbers.repository.js';
import { TemplatesRepository } from '../accounts/templates/templates.repository.js';
import { MarketingPreferencesRepository } from '../accounts/users/marketing-preferences.repository.js';
import { ConversationWindowsRepository } from '../messages/conversation-windows.repository.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { WebhookDeliveriesRepository } from './deliveries/webhook-deliveries.repository.js';
import { DeliveryQueue } from './delivery-queue.js';
import { EventsRepository } from './events/events.repository.js';
import { DeliveryProcessor } from './processing/delivery.processor.js';
import { DeliverySweeper } from './processing/delivery.sweeper.js';
import { DeliveryWorker } from './processing/delivery.worker.js';
import { AccountUpdateEffect } from './processing/effects/account-update.effect.js';
import { InboundMessageEffect } from './processing/effects/inbound-message.effect.js';
import { StatusUpdateEffect } from './processing/effects/status-update.effect.js';
import { TemplateStatusEffect } from './processing/effects/template-status.effect.js';
import { PartitionMaintenance } from './storage/partition-maintenance.js';

/** Worker side of webhooks: the delivery consumer, its effects, the sweeper and the storage partitions (creation ahead, retention). */
@Module({
  // The worker needs only repositories of the accounts domain (no upstream client, no console): templates, phone
  // numbers and business accounts (their quality, limits and standing from account-level webhooks), and the users'
  // marketing preferences (user_preferences webhooks, 131050 failures).
  providers: [
    TemplatesRepository,
    PhoneNumbersRepository,
    BusinessAccountsRepository,
    MarketingPreferencesRepository,
    DeliveryQueue,
    DeliveryProcessor,
    WebhookDeliveriesRepository,
    EventsRepository,
    ConversationWindowsRepository,
    MessagesRepository,
    DeliveryWorker,
    DeliverySweeper,
    PartitionMaintenance,
    StatusUpdateEffect,
    InboundMessageEffect,
    TemplateStatusEffect,
    AccountUpdateEffect,
  ],
  // Run as scheduled tasks by the worker module (worker.schedules.ts).
  exports: [DeliverySweeper, PartitionMaintenance],
})
export class WebhooksWorkerModule {}
