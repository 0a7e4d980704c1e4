import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { EventsModule } from './events.module.js';
import { EventsService } from './events.service.js';
import { FeedCursorCodec } from './feed-cursor.js';
import { FeedWaiters } from './feed-waiters.js';

/**
 * The events' reads of the API process (EventsService, for the events routes of WebhooksApiModule) and its long-poll
 * machinery, one instance shared by the events feed and the messages feed: one LISTEN on `events_feed`, one horizon
 * poller and one process-wide cap of waiting requests for both. API process only (the worker has no long polls).
 */
@Module({
  imports: [EventsModule, AccountsModule],
  providers: [EventsService, FeedCursorCodec, FeedWaiters],
  exports: [EventsService, FeedCursorCodec, FeedWaiters],
})
export class EventsFeedModule {}
