import { AuditModule } from '../audit/audit.module.js';
import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { DeliveriesController } from './deliveries/deliveries.controller.js';
import { DeliveriesService } from './deliveries/deliveries.service.js';
import { DeliveryMetrics } from './deliveries/delivery-metrics.js';
import { EventsController } from '../events/events.controller.js';
import { EventsFeedModule } from '../events/events-feed.module.js';
import { WebhookReceiverController } from './receiver/webhook-receiver.controller.js';
import { ReceiverPressure } from './receiver/receiver-pressure.js';
import { WebhookReceiverService } from './receiver/webhook-receiver.service.js';
import { WebhooksModule } from './webhooks.module.js';

/** API side of webhooks: Meta's receiver, the events routes (over EventsFeedModule) and the console's deliveries (dead letters, replay). */
@Module({
  imports: [AccountsModule, AuditModule, WebhooksModule, EventsFeedModule],
  controllers: [WebhookReceiverController, EventsController, DeliveriesController],
  providers: [WebhookReceiverService, ReceiverPressure, DeliveriesService, DeliveryMetrics],
})
export class WebhooksApiModule {}
