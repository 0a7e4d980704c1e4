import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { ConversationWindowsRepository } from './conversation-windows.repository.js';
import { MessagesRepository } from './messages.repository.js';
import { NumberPacer } from './pacing/number-pacer.js';
import { IdempotencyKeysRepository } from './send/idempotency-keys.repository.js';
import { SendContextReader } from './send/send-context.reader.js';

/**
 * The messages domain: its tables' repositories (messages, conversation windows, Idempotency-Keys) and what every
 * sender shares (a number's pacing, the send context read from the accounts domain), provided here once. The API
 * (MessagesApiModule), the webhook effects, campaign runs and the worker's purges import it.
 */
@Module({
  imports: [AccountsModule],
  providers: [
    MessagesRepository,
    ConversationWindowsRepository,
    IdempotencyKeysRepository,
    NumberPacer,
    SendContextReader,
  ],
  exports: [
    MessagesRepository,
    ConversationWindowsRepository,
    IdempotencyKeysRepository,
    NumberPacer,
    SendContextReader,
  ],
})
export class MessagesModule {}
