import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { UpstreamModule } from '../upstream/upstream.module.js';
import { MessagesModule } from './messages.module.js';
import { ConsoleMessagesController } from './console-messages.controller.js';
import { MessagesController } from './messages.controller.js';
import { AnalyticsService } from './query/analytics.service.js';
import { MessageDetails } from './query/message-details.service.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { EventsFeedModule } from '../events/events-feed.module.js';
import { EventsModule } from '../events/events.module.js';
import { FeedActivity } from './feed/feed-activity.js';
import { MessagesFeedCursors } from './feed/messages-feed-cursors.js';
import { InboundMediaController } from './inbound-media/inbound-media.controller.js';
import { InboundMediaDownloads } from './inbound-media/inbound-media-downloads.js';
import { InboundMediaLinks } from './inbound-media/inbound-media-links.js';
import { MessagesList } from './query/messages-list.service.js';
import { IdempotencyService } from './send/idempotency.service.js';
import { PreSendChecks } from './send/pre-send-checks.js';
import { SendContextCache } from './send/send-context.cache.js';
import { SendMessageService } from './send/send-message.service.js';

/**
 * Messages: the API-key routes (send, list and feed, get, analytics), the inbound-media links they hand out, and
 * the console's read-only views of them. API process only; the tables are the messages domain's (MessagesModule).
 */
@Module({
  imports: [UpstreamModule, AccountsModule, MessagesModule, EventsModule, EventsFeedModule],
  controllers: [MessagesController, ConsoleMessagesController, InboundMediaController],
  providers: [
    SendMessageService,
    PreSendChecks,
    SendContextCache,
    IdempotencyService,
    MessageDetails,
    AnalyticsService,
    RateLimitGuard,
    MessagesList,
    MessagesFeedCursors,
    FeedActivity,
    InboundMediaLinks,
    InboundMediaDownloads,
  ],
})
export class MessagesApiModule {}
