import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { EventsModule } from '../events/events.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { DeliveryProcessor } from './processing/delivery.processor.js';
import { DeliverySweeper } from './processing/delivery.sweeper.js';
import { DeliveryWorker } from './processing/delivery.worker.js';
import { AccountUpdateEffect } from './processing/effects/account-update.effect.js';
import { CallEffect } from './processing/effects/call.effect.js';
import { InboundMessageEffect } from './processing/effects/inbound-message.effect.js';
import { StatusUpdateEffect } from './processing/effects/status-update.effect.js';
import { TemplateStatusEffect } from './processing/effects/template-status.effect.js';
import { WebhooksModule } from './webhooks.module.js';

/**
 * Worker side of webhooks: the delivery consumer and its effects on the accounts domain (templates, phone numbers and
 * business accounts: their quality, limits and standing from account-level webhooks; the users' marketing
 * preferences) and on the messages domain (statuses, inbound messages, calls, conversation windows; a user's id change moves its windows, marketing stop and blocks), and the sweeper.
 */
@Module({
  imports: [WebhooksModule, EventsModule, MessagesModule, AccountsModule],
  providers: [
    DeliveryProcessor,
    DeliveryWorker,
    DeliverySweeper,
    StatusUpdateEffect,
    InboundMessageEffect,
    TemplateStatusEffect,
    AccountUpdateEffect,
    CallEffect,
  ],
  // Run as scheduled tasks by the worker (worker/worker-schedules.ts), with the domain's PartitionMaintenance.
  exports: [DeliverySweeper, WebhooksModule],
})
export class WebhooksWorkerModule {}
