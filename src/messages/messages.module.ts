import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { UpstreamModule } from '../upstream/upstream.module.js';
import { ConsoleMessagesController } from './console-messages.controller.js';
import { MessagesController } from './messages.controller.js';
import { AnalyticsService } from './query/analytics.service.js';
import { ConversationWindowsRepository } from './conversation-windows.repository.js';
import { MessagesRepository } from './messages.repository.js';
import { MessageDetails } from './query/message-details.service.js';
import { EventsRepository } from '../webhooks/events/events.repository.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { IdempotencyKeysRepository } from './send/idempotency-keys.repository.js';
import { IdempotencyService } from './send/idempotency.service.js';
import { PreSendChecks } from './send/pre-send-checks.js';
import { SendContextCache } from './send/send-context.cache.js';
import { SendContextReader } from './send/send-context.reader.js';
import { SendMessageService } from './send/send-message.service.js';

/** Messages: the API-key routes (send, list, get, analytics) and the console's read-only views of them. */
@Module({
  imports: [UpstreamModule, AccountsModule],
  controllers: [MessagesController, ConsoleMessagesController],
  providers: [
    SendMessageService,
    PreSendChecks,
    SendContextReader,
    ConversationWindowsRepository,
    SendContextCache,
    IdempotencyService,
    IdempotencyKeysRepository,
    MessagesRepository,
    MessageDetails,
    EventsRepository,
    AnalyticsService,
    RateLimitGuard,
  ],
})
export class MessagesModule {}
