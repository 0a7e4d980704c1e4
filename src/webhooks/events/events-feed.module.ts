import { Module } from '@nestjs/common';
import { EventsRepository } from './events.repository.js';
import { FeedCursorCodec } from './feed-cursor.js';
import { FeedWaiters } from './feed-waiters.js';

/**
 * The long-poll machinery of the API process, one instance shared by the events feed and the messages feed: one
 * LISTEN on `events_feed`, one horizon poller and one process-wide cap of waiting requests for both.
 */
@Module({
  providers: [EventsRepository, FeedCursorCodec, FeedWaiters],
  exports: [FeedCursorCodec, FeedWaiters],
})
export class EventsFeedModule {}
