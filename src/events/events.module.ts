import { Module } from '@nestjs/common';
import { EventsRepository } from './events.repository.js';

/**
 * The events table (every change a webhook reported, classified): its repository, provided once here for the API
 * (events routes, message details, the feeds) and the worker (storage, sweeper, partitions).
 */
@Module({
  providers: [EventsRepository],
  exports: [EventsRepository],
})
export class EventsModule {}
