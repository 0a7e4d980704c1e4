import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyScope } from '../../auth/request-scope.js';

import { InvalidInput, TooManyAttempts } from '../../core/errors/domain-errors.js';
import { APP_LOGGER } from '../../core/logging/app-logger.js';
import { Metrics } from '../../core/metrics/metrics.js';
import { UpstreamError } from '../../upstream/upstream.error.js';
import { upstreamFailure } from '../../upstream/upstream-failure.js';
import type { SendPayload } from '../../upstream/upstream.types.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import type { SendMessageDto } from '../dto/send-message.dto.js';
import { errorCategoryOf } from '../message-status.js';
import { MessagesRepository, type PendingMessage, type StoredMessage } from '../messages.repository.js';
import { AccountCredentials } from '../../accounts/business-accounts/account-credentials.js';
import { CredentialChecks } from '../../accounts/credentials/credential-checks.js';
import { IdempotencyService, inProgress } from './idempotency.service.js';
import { PreSendChecks, type SendPlan } from './pre-send-checks.js';
import type {
  RejectedTokens,
  SendChecks,
  SendCounter,
  SendLogger,
  SendMessages,
  SendPacer,
  SendTokens,
  SendUpstream,
} from './send.ports.js';
import { defaultRetryAfterSeconds, isThroughputRefusal } from '../../upstream/meta-error-catalogue.js';
import { NumberPacer, PacerUnavailable, throughputOf, type PaceSlot } from '../pacing/number-pacer.js';
import {
  isFinal,
  outcomeLabel,
  rejectionOf,
  type FinalOutcome,
  type SendOutcome,
  type SendReplayed,
} from './send-outcome.js';
import { messageType } from '../types/catalogue.js';
import { callbackDataFor } from '../../events/callback-data.js';

/** What the pacer said for a send: its slot, a refusal (over the pace past the wait, or held back), or nothing (Redis away: unpaced). */
interface Paced {
  slot?: PaceSlot;
  refused?: { message: string; retryAfterSeconds: number };
}

/** A send with an Idempotency-Key: the key and the fingerprint of its body. */
interface KeyedSend {
  key: string;
  requestHash: string;
}

/**
 * POST /messages: checks, then one stored message per attempt, whatever happens upstream.
 * Stages: request received → stored as `pending` → sent to the network → accepted (`sent` + wamid in one
 * write) or rejected (`failed` + the upstream error in one write). Returns what the send came to (accepted,
 * rejected with its kind, or the replay of an earlier request with the same Idempotency-Key) and the stored
 * message; refusals before anything is stored are thrown as domain errors. HTTP is the edge's business
 * (the presenter in messages.controller.ts).
 */
@Injectable()
export class SendMessageService {
  constructor(
    @Inject(MessagesRepository) private readonly messages: SendMessages,
    @Inject(PreSendChecks) private readonly checks: SendChecks,
    private readonly idempotency: IdempotencyService,
    @Inject(AccountCredentials) private readonly credentials: SendTokens,
    @Inject(CredentialChecks) private readonly credentialChecks: RejectedTokens,
    @Inject(WhatsAppClient) private readonly upstream: SendUpstream,
    @Inject(NumberPacer) private readonly pacer: SendPacer,
    @Inject(Metrics) private readonly metrics: SendCounter,
    @Inject(APP_LOGGER) private readonly logger: SendLogger,
  ) {}

  async send(scope: ApiKeyScope, dto: SendMessageDto, idempotencyKey?: string): Promise<SendOutcome> {
    const outcome = await this.attempt(scope, dto, idempotencyKey);
    this.metrics.sends.inc({ outcome: outcomeLabel(outcome) });
    // The line an operator follows a message by (docs/operations-and-scaling.md "Following one message"): the
    // request's reqId (log context), our id, Meta's wamid (its status webhooks name it) and the key pair that sent it.
    if (outcome.outcome === 'accepted')
      this.logger.info(
        {
          messageId: outcome.message.id,
          wamid: outcome.message.upstreamMessageId,
          keyId: scope.apiKeyId,
          phoneNumberId: dto.phoneNumberId,
          type: dto.type,
        },
        'message sent',
      );
    return outcome;
  }

  private async attempt(scope: ApiKeyScope, dto: SendMessageDto, idempotencyKey?: string): Promise<SendOutcome> {
    if (!idempotencyKey)
      return this.deliver(scope, dto, await this.checks.assertSendable(scope.businessAccountId, dto));
    const requestHash = IdempotencyService.fingerprint(dto);
    let plan: SendPlan;
    try {
      plan = await this.checks.assertSendable(scope.businessAccountId, dto);
    } catch (error) {
      // The checks run before the key is looked at (they are usually answered from memory); a refusal must still
      // give way to what an earlier request with this key decided: its replay, InvalidInput for another body, or Conflict.
      if (error instanceof InvalidInput) {
        const earlier = await this.idempotency.earlierOutcome(scope.apiKeyId, idempotencyKey, requestHash);
        if (earlier) return { outcome: 'replayed', earlier };
      }
      throw error;
    }
    return this.deliver(scope, dto, plan, { key: idempotencyKey, requestHash });
  }

  /**
   * The send in its steps, each returning what it came to: claim (store the attempt as `pending`, with its key) or
   * replay an earlier outcome; wait for the number's slot; call Meta; settle (the stored message, and the key kept
   * with a final outcome or released for a retry).
   */
  private async deliver(
    scope: ApiKeyScope,
    dto: SendMessageDto,
    plan: SendPlan,
    keyed?: KeyedSend,
  ): Promise<SendOutcome> {
    const token = await this.credentials.tokenFor(scope);
    // The number's slot, reserved while the message is stored (its Redis round trip hidden behind the insert); a slot
    // taken for a send that ends up not sent (an idempotent replay) is one slot of the number's second, not more.
    const pacing = this.pace(dto.phoneNumberId, plan.throughputLevel);
    pacing.catch(() => undefined);
    const claim = await this.claimOrReplay(scope, pendingOf(scope, dto, plan), keyed);
    if (claim.outcome === 'replayed') return claim;
    const { message } = claim;

    let outcome: FinalOutcome | undefined;
    let keyCompleted = false;
    try {
      // Over the number's pace: the stored attempt fails with the reason, and Meta is not called.
      const held = await this.atSlot(await pacing, dto.phoneNumberId, plan.throughputLevel);
      if (held) return (outcome = await this.settleHeld(scope, message, held));
      const wamid = await this.callMeta(token, dto, plan, message.id);
      const settled = await this.settleAccepted(scope, message, wamid, keyed);
      keyCompleted = settled.keyCompleted;
      return (outcome = settled.outcome);
    } catch (error) {
      // Nothing was settled yet (each step above assigns only once it has returned).
      return (outcome = await this.settleFailed(scope, dto, message, error));
    } finally {
      if (keyed && !keyCompleted) await this.settleKey(scope, keyed, outcome);
    }
  }

  /**
   * Step 1: the attempt stored as `pending`; with an Idempotency-Key, the key claimed by the same statement, or the
   * earlier request's outcome when the key is already decided (nothing stored). A key held by a request still in
   * flight: Conflict.
   */
  private async claimOrReplay(
    scope: ApiKeyScope,
    pending: PendingMessage,
    keyed?: KeyedSend,
  ): Promise<{ outcome: 'claimed'; message: StoredMessage } | SendReplayed> {
    if (!keyed)
      return { outcome: 'claimed', message: await this.messages.insertPending(scope.businessAccountId, pending) };
    for (let attempt = 0; attempt < 2; attempt++) {
      const message = await this.messages.insertPendingClaimingKey(
        scope.businessAccountId,
        pending,
        IdempotencyService.claim(keyed.key, keyed.requestHash),
      );
      if (message) return { outcome: 'claimed', message };
      const earlier = await this.idempotency.earlierOutcome(scope.apiKeyId, keyed.key, keyed.requestHash);
      if (earlier) return { outcome: 'replayed', earlier };
      // The holder released or abandoned the key meanwhile: claim again.
    }
    throw inProgress();
  }

  /** Step 2: Meta's call (MARKETING templates of an onboarded account through the Marketing Messages API); the wamid. */
  private async callMeta(token: string, dto: SendMessageDto, plan: SendPlan, messageId: number): Promise<string> {
    const payload = payloadOf(dto, messageId);
    const result =
      plan.upstreamApi === 'marketing_messages' && payload.type === 'template'
        ? await this.upstream.sendMarketingMessage(token, dto.phoneNumberId, payload)
        : await this.upstream.sendMessage(token, dto.phoneNumberId, payload);
    return result.wamid;
  }

  /** Settled without calling Meta: the number is over its pace past the wait, or held back. */
  private async settleHeld(
    scope: ApiKeyScope,
    message: StoredMessage,
    held: { message: string; retryAfterSeconds: number },
  ): Promise<FinalOutcome> {
    const stored = await this.messages.markFailed(scope.businessAccountId, message.id, {
      code: null,
      title: held.message,
      detail: null,
      category: 'throughput',
    });
    return {
      outcome: 'rejected',
      message: stored,
      reason: rejectionOf(new TooManyAttempts(held.message, held.retryAfterSeconds)),
    };
  }

  /**
   * Meta accepted: pending → sent with the wamid (and the key completed by the same statement). A status webhook that
   * moved the message first keeps its status; only the wamid and the acceptance time are filled in.
   */
  private async settleAccepted(
    scope: ApiKeyScope,
    message: StoredMessage,
    wamid: string,
    keyed?: KeyedSend,
  ): Promise<{ outcome: FinalOutcome; keyCompleted: boolean }> {
    const now = new Date();
    // Whatever else writes a message moves it off `pending` (a webhook that found it by callback data), so a row
    // that was still pending is now exactly the stored one plus this write: no need to read it back.
    const sent: FinalOutcome = {
      outcome: 'accepted',
      message: { ...message, status: 'sent', upstreamMessageId: wamid, acceptedAt: now, sentAt: now, updatedAt: now },
    };
    const moved = keyed
      ? await this.messages.markSentCompletingKey(
          scope.businessAccountId,
          message.id,
          wamid,
          now,
          IdempotencyService.completion(scope.apiKeyId, keyed.key, sent),
        )
      : await this.messages.markSent(scope.businessAccountId, message.id, wamid, now);
    if (moved) return { outcome: sent, keyCompleted: true };
    const late = await this.messages.recordLateAcceptance(scope.businessAccountId, message.id, wamid, now);
    return { outcome: { outcome: 'accepted', message: late }, keyCompleted: false };
  }

  /**
   * The call failed: the stored attempt becomes `failed` with Meta's error (a token Meta refused marks the account; a
   * 130429 holds the number back). Anything but Meta's answer is rethrown after the attempt is marked failed.
   */
  private async settleFailed(
    scope: ApiKeyScope,
    dto: SendMessageDto,
    message: StoredMessage,
    error: unknown,
  ): Promise<FinalOutcome> {
    if (!(error instanceof UpstreamError)) {
      await this.messages
        .markFailed(scope.businessAccountId, message.id, {
          code: null,
          title: 'Internal error before the upstream platform answered',
          detail: null,
          category: 'retryable',
        })
        .catch(() => undefined);
      throw error;
    }
    const stored = await this.messages.markFailed(scope.businessAccountId, message.id, {
      code: error.code ?? null,
      title: error.title,
      detail: error.detail ?? null,
      category: errorCategoryOf(error.code, error.errorClass),
    });
    // Meta rejected the token itself: the account's next sends are refused before any upstream call.
    if (error.errorClass === 'credential') await this.recordCredentialRejection(scope, error);
    const heldFor = isThroughputRefusal(error.code) ? await this.holdBack(dto.phoneNumberId, error) : undefined;
    // While the call was failing (a timeout), a status for this very message arrived (found by its callback
    // data): the upstream platform accepted it. That is the outcome; the failed call is not.
    if (stored.status !== 'failed') return { outcome: 'accepted', message: stored };
    const note =
      heldFor !== undefined
        ? `sends on phone number ${dto.phoneNumberId} are held for ${heldFor} s (Meta answered 130429: something else sends on this number too)`
        : undefined;
    return this.rejected(stored, error, note);
  }

  /** The key of a send its own write did not complete: kept with a final outcome, else released for a retry. */
  private async settleKey(scope: ApiKeyScope, keyed: KeyedSend, outcome: FinalOutcome | undefined): Promise<void> {
    if (outcome && isFinal(outcome)) await this.idempotency.complete(scope.apiKeyId, keyed.key, outcome);
    else await this.idempotency.release(scope.apiKeyId, keyed.key);
  }

  /**
   * A slot of the number's throughput within PACING_MAX_WAIT_MS, or why not and when to come back. Redis unreachable:
   * the send goes unpaced (as the rate limiter fails open) rather than refused.
   */
  private async pace(phoneNumberId: string, level: string | null): Promise<Paced> {
    const tier = throughputOf(level);
    try {
      const slot = await this.pacer.acquire(phoneNumberId, tier.perSecond);
      if (slot.ok) return { slot: slot.slot };
      const retryAfterSeconds = Math.max(1, Math.ceil(slot.retryAfterMs / 1000));
      const message = slot.held
        ? `Phone number ${phoneNumberId} is held back for ${retryAfterSeconds} s: Meta refused a send over its throughput (130429); nothing was sent`
        : `Phone number ${phoneNumberId} is at its throughput (${tier.level}: ${tier.perSecond} messages/s); nothing was sent: retry after ${retryAfterSeconds} s`;
      return { refused: { message, retryAfterSeconds } };
    } catch (err) {
      if (!(err instanceof PacerUnavailable)) throw err;
      this.logger.warn({ err, phoneNumberId }, 'pacer unavailable (Redis); sending unpaced');
      return {};
    }
  }

  /**
   * Waits for the send's slot; undefined when the upstream may be called now (in the same turn of the event loop), or
   * the refusal. A slot that passed while the message was stored (the process was busy) is replaced by a new one.
   */
  private async atSlot(
    paced: Paced,
    phoneNumberId: string,
    level: string | null,
  ): Promise<{ message: string; retryAfterSeconds: number } | undefined> {
    for (let p = paced; ; p = await this.pace(phoneNumberId, level)) {
      if (p.refused || !p.slot) return p.refused;
      if (await this.pacer.until(p.slot)) return undefined;
    }
  }

  /** Meta answered 130429: no slot on the number for the time it implies (Retry-After, else the catalogue's). The seconds held. */
  private async holdBack(phoneNumberId: string, error: UpstreamError): Promise<number> {
    const seconds = error.retryAfterSeconds ?? defaultRetryAfterSeconds(error.code);
    await this.pacer
      .holdBack(phoneNumberId, seconds * 1000)
      .catch((err: unknown) => this.logger.warn({ err, phoneNumberId }, 'could not hold the number back (Redis)'));
    return seconds;
  }

  private async recordCredentialRejection(scope: ApiKeyScope, error: UpstreamError): Promise<void> {
    try {
      await this.credentialChecks.recordRejectedBySend(scope, error.reason);
      // Other API processes hear it by NOTIFY; this one refuses its very next send on this account already.
      this.checks.forget(scope.businessAccountId);
    } catch (err) {
      this.logger.error(
        { err, wabaId: scope.wabaId },
        'could not mark the rejected token; the next sends still try it',
      );
    }
  }

  /** A synchronous upstream rejection: the stored (failed) message and the domain's reason. */
  private rejected(message: StoredMessage, error: UpstreamError, note?: string): FinalOutcome {
    this.logger.info(
      {
        messageId: message.id,
        keyId: message.apiKeyId,
        code: error.code,
        errorClass: error.errorClass,
        httpStatus: error.httpStatus,
      },
      'send rejected upstream',
    );
    const failure = upstreamFailure(error, {
      outcomeUnknownNote: 'the outcome is unknown, the message stays failed unless a status arrives',
    });
    return { outcome: 'rejected', message, reason: rejectionOf(failure, note) };
  }
}

/** Meta's body: the recipient, the callback data and the reply context, then the type's own part (its catalogue file). */
function payloadOf(dto: SendMessageDto, messageId: number): SendPayload {
  const common = {
    ...(dto.userId !== undefined ? { recipient: dto.userId } : { to: dto.to }),
    bizOpaqueCallbackData: callbackDataFor(messageId),
    ...replyOf(dto),
  };
  return { ...common, ...messageType(dto.type).upstream(dto) };
}

/** The attempt as it is stored before Meta's call. */
function pendingOf(scope: ApiKeyScope, dto: SendMessageDto, plan: SendPlan): PendingMessage {
  return {
    apiKeyId: scope.apiKeyId,
    phoneNumberId: dto.phoneNumberId,
    to: dto.to ?? null,
    userId: dto.userId ?? null,
    upstreamApi: plan.upstreamApi,
    type: dto.type,
    templateName: dto.type === 'template' ? dto.templateName! : null,
    templateLanguage: dto.type === 'template' ? dto.templateLanguage! : null,
    content: contentOf(dto),
  };
}

/** What is stored (and shown as `content`): the type's content as its catalogue file says, plus the message replied to. */
function contentOf(dto: SendMessageDto): unknown {
  return { ...messageType(dto.type).stored(dto), ...replyOf(dto) };
}

const replyOf = (dto: SendMessageDto) => (dto.context ? { context: { message_id: dto.context.message_id } } : {});
