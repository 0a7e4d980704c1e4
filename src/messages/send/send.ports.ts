import type { Logger } from 'pino';
import type { AccountCredentials } from '../../accounts/business-accounts/account-credentials.js';
import type { CredentialChecks } from '../../accounts/credentials/credential-checks.js';
import type { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import type { MessagesRepository } from '../messages.repository.js';
import type { NumberPacer } from '../pacing/number-pacer.js';
import type { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import type { PreSendChecks } from './pre-send-checks.js';

/*
 * What the send use case (SendMessageService, IdempotencyService) uses of each collaborator: the methods it calls,
 * picked from the real classes, which therefore implement them by construction. Nest still injects the real classes
 * (`@Inject(Class)`); the service tier (test/service/send-message.service.spec.ts) runs the use case over the
 * in-memory stand-ins of test/utils/in-memory/sends.ts and small fakes, which implement the same types.
 */

export type SendMessages = Pick<
  MessagesRepository,
  | 'insertPending'
  | 'insertPendingClaimingKey'
  | 'markSent'
  | 'markSentCompletingKey'
  | 'recordLateAcceptance'
  | 'markFailed'
>;
export type IdempotencyKeys = Pick<IdempotencyKeysRepository, 'find' | 'complete' | 'release'>;
export type SendChecks = Pick<PreSendChecks, 'assertSendable' | 'forget'>;
export type SendTokens = Pick<AccountCredentials, 'tokenFor'>;
export type RejectedTokens = Pick<CredentialChecks, 'recordRejectedBySend'>;
export type SendUpstream = Pick<WhatsAppClient, 'sendMessage' | 'sendMarketingMessage'>;
export type SendPacer = Pick<NumberPacer, 'acquire' | 'until' | 'holdBack'>;
/** The send counter (Metrics.sends): one increment per outcome. */
export interface SendCounter {
  sends: { inc(labels: { outcome: string }): void };
}
export type SendLogger = Pick<Logger, 'info' | 'warn' | 'error'>;
