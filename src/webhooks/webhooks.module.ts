import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { DeliveriesController } from './deliveries/deliveries.controller.js';
import { DeliveriesService } from './deliveries/deliveries.service.js';
import { DeliveryMetrics } from './deliveries/delivery-metrics.js';
import { WebhookDeliveriesRepository } from './deliveries/webhook-deliveries.repository.js';
import { DeliveryQueue } from './delivery-queue.js';
import { EventsController } from './events/events.controller.js';
import { EventsRepository } from './events/events.repository.js';
import { EventsFeedModule } from './events/events-feed.module.js';
import { EventsService } from './events/events.service.js';
import { WebhookReceiverController } from './receiver/webhook-receiver.controller.js';
import { WebhookReceiverService } from './receiver/webhook-receiver.service.js';
import { PartitionMaintenance } from './storage/partition-maintenance.js';

/** API side of webhooks: Meta's receiver, the events API and the console's deliveries (dead letters, replay). */
@Module({
  imports: [AccountsModule, EventsFeedModule],
  controllers: [WebhookReceiverController, EventsController, DeliveriesController],
  providers: [DeliveryQueue, WebhookDeliveriesRepository, WebhookReceiverService, EventsRepository, EventsService, DeliveriesService, DeliveryMetrics, PartitionMaintenance],
})
export class WebhooksModule {}
