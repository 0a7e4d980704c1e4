import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { WebhookDeliveriesRepository } from './deliveries/webhook-deliveries.repository.js';
import { DeliveryQueue } from './delivery-queue.js';
import { PartitionMaintenance } from './storage/partition-maintenance.js';

/**
 * The webhooks domain: the deliveries table (Meta's payloads as received), the queue that hands them to the worker,
 * and the storage partitions of deliveries and events (every process makes sure of the weeks ahead when it starts).
 * Provided here once for the API (WebhooksApiModule) and the worker (WebhooksWorkerModule).
 */
@Module({
  imports: [EventsModule],
  providers: [WebhookDeliveriesRepository, DeliveryQueue, PartitionMaintenance],
  exports: [WebhookDeliveriesRepository, DeliveryQueue, PartitionMaintenance],
})
export class WebhooksModule {}
