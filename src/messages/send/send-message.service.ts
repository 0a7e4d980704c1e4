import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { Message } from '../../generated/prisma/client.js';
import type { ApiKeyScope } from '../../auth/request-scope.js';

import { envelope, SUCCESS, type Envelope } from '../../core/http/envelope.js';
import { APP_LOGGER } from '../../core/logging/app-logger.js';
import { UpstreamError } from '../../upstream/upstream.error.js';
import type { SendPayload } from '../../upstream/upstream.types.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import type { SendMessageDto } from '../dto/send-message.dto.js';
import { errorCategoryOf } from '../message-status.js';
import { MessagesRepository } from '../messages.repository.js';
import { toMessageView, type MessageView } from '../message.view.js';
import { AccountCredentials } from './account-credentials.js';
import { IdempotencyService } from './idempotency.service.js';
import { PreSendChecks } from './pre-send-checks.js';

/** A complete HTTP answer: the send route writes it as is, and idempotent replays return it unchanged. */
export interface SendOutcome {
  statusCode: number;
  body: Envelope<MessageView>;
  headers: Record<string, string>;
  /** Whether the outcome may be replayed for the same Idempotency-Key (retryable ones may not). */
  final: boolean;
}

/** Correlation echoed by Meta in status webhooks: lets a status find its message before we know the wamid. */
export const callbackDataFor = (messageId: number) => `bm:${messageId}`;

/**
 * POST /messages: checks, then one stored message per attempt, whatever happens upstream.
 * Stages: request received → stored as `pending` → sent to the network → accepted (`sent` + wamid in one
 * write) or rejected (`failed` + the upstream error in one write).
 */
@Injectable()
export class SendMessageService {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly checks: PreSendChecks,
    private readonly idempotency: IdempotencyService,
    private readonly credentials: AccountCredentials,
    private readonly upstream: WhatsAppClient,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  async send(scope: ApiKeyScope, dto: SendMessageDto, idempotencyKey?: string): Promise<SendOutcome> {
    if (!idempotencyKey) {
      await this.checks.assertSendable(scope.businessAccountId, dto);
      return this.deliver(scope, dto);
    }
    const claim = await this.idempotency.claim(scope.apiKeyId, idempotencyKey, IdempotencyService.fingerprint(dto));
    if (claim.kind === 'replay') {
      const { statusCode, body } = claim.response;
      return { statusCode, body: body as Envelope<MessageView>, headers: { 'Idempotent-Replayed': 'true' }, final: true };
    }
    let outcome: SendOutcome | undefined;
    try {
      await this.checks.assertSendable(scope.businessAccountId, dto);
      outcome = await this.deliver(scope, dto);
      return outcome;
    } finally {
      if (outcome?.final) await this.idempotency.complete(scope.apiKeyId, idempotencyKey, { statusCode: outcome.statusCode, body: outcome.body });
      else await this.idempotency.release(scope.apiKeyId, idempotencyKey);
    }
  }

  private async deliver(scope: ApiKeyScope, dto: SendMessageDto): Promise<SendOutcome> {
    const token = await this.credentials.tokenFor(scope);
    const message = await this.messages.insertPending(scope.businessAccountId, {
      apiKeyId: scope.apiKeyId,
      phoneNumberId: dto.phoneNumberId,
      to: dto.to,
      type: dto.type,
      templateName: dto.type === 'template' ? dto.templateName! : null,
      templateLanguage: dto.type === 'template' ? dto.templateLanguage! : null,
      content: contentOf(dto),
    });
    try {
      const result = await this.upstream.sendMessage(token, dto.phoneNumberId, payloadOf(dto, message.id));
      return { statusCode: 200, body: envelope(200, SUCCESS, { data: toMessageView(await this.markAccepted(scope.businessAccountId, message, result.wamid)) }), headers: {}, final: true };
    } catch (error) {
      if (!(error instanceof UpstreamError)) {
        await this.messages.markFailed(scope.businessAccountId, message.id, { code: null, title: 'Internal error before the upstream platform answered', detail: null, category: 'retryable' }).catch(() => undefined);
        throw error;
      }
      const stored = await this.messages.markFailed(scope.businessAccountId, message.id, { code: error.code ?? null, title: error.title, detail: error.detail ?? null, category: errorCategoryOf(error.code, error.errorClass) });
      if (stored.status !== 'failed') {
        // While the call was failing (a timeout), a status for this very message arrived (found by its callback
        // data): the upstream platform accepted it. That is the outcome; the failed call is not.
        return { statusCode: 200, body: envelope(200, SUCCESS, { data: toMessageView(stored) }), headers: {}, final: true };
      }
      return this.rejected(stored, error);
    }
  }

  /** One write: status sent + wamid. If a webhook already moved the message on (it found it by callback data), only the wamid is set. */
  private async markAccepted(businessAccountId: string, message: Message, wamid: string): Promise<Message> {
    const now = new Date();
    // Whatever else writes a message moves it off `pending` (a webhook that found it by callback data), so a row
    // that was still pending is now exactly the stored one plus this write: no need to read it back.
    if (await this.messages.markSent(businessAccountId, message.id, wamid, now)) {
      return { ...message, status: 'sent', upstreamMessageId: wamid, acceptedAt: now, sentAt: now, updatedAt: now };
    }
    return this.messages.recordLateAcceptance(businessAccountId, message.id, wamid, now);
  }

  /** How a synchronous upstream rejection is answered; the stored (failed) message is in `data`. */
  private rejected(message: Message, error: UpstreamError): SendOutcome {
    const data = toMessageView(message);
    const reason = `${error.title}${error.code !== undefined ? ` (${error.code})` : ''}`;
    this.logger.info({ messageId: message.id, code: error.code, errorClass: error.errorClass, httpStatus: error.httpStatus }, 'send rejected upstream');
    switch (error.errorClass) {
      case 'credential':
        return { statusCode: 424, body: envelope(424, `The upstream platform rejected the business account's credential (${reason}); reconnect it in the console`, { data }), headers: {}, final: true };
      case 'account_blocked':
        return { statusCode: 424, body: envelope(424, `The upstream platform has blocked this business account: ${reason}`, { data }), headers: {}, final: true };
      case 'retryable':
        if (isRateLimit(error.code)) {
          const retryAfter = String(error.retryAfterSeconds ?? (error.code === 131056 ? 60 : 1));
          return { statusCode: 429, body: envelope(429, `Upstream rate limit: ${reason}`, { data }), headers: { 'Retry-After': retryAfter }, final: false };
        }
        return { statusCode: 502, body: envelope(502, `Upstream platform unavailable: ${reason}${error.isTimeout ? '; the outcome is unknown, the message stays failed unless a status arrives' : ''}`, { data }), headers: {}, final: false };
      case 'permanent':
        return { statusCode: 422, body: envelope(422, `Upstream rejected the message: ${reason}`, { data }), headers: {}, final: true };
    }
  }
}

const isRateLimit = (code: number | undefined) => code === 130429 || code === 131056 || code === 4 || code === 80007;

function payloadOf(dto: SendMessageDto, messageId: number): SendPayload {
  if (dto.type === 'text') {
    return { type: 'text', to: dto.to, text: { body: dto.text!.body, preview_url: dto.text!.previewUrl ?? false }, bizOpaqueCallbackData: callbackDataFor(messageId) };
  }
  return {
    type: 'template',
    to: dto.to,
    template: { name: dto.templateName!, language: { code: dto.templateLanguage! }, components: dto.components as never },
    bizOpaqueCallbackData: callbackDataFor(messageId),
  };
}

function contentOf(dto: SendMessageDto): unknown {
  if (dto.type === 'text') return { text: { body: dto.text!.body, previewUrl: dto.text!.previewUrl ?? false } };
  return { components: dto.components ?? [] };
}

