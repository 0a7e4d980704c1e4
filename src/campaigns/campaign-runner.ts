import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { AccountCredentials } from '../accounts/business-accounts/account-credentials.js';
import { PhoneNumbersRepository } from '../accounts/phone-numbers/phone-numbers.repository.js';
import { BlockedUsersRepository } from '../accounts/users/blocked-users.repository.js';
import { MarketingPreferencesRepository } from '../accounts/users/marketing-preferences.repository.js';
import { AppConfig } from '../core/config/app-config.js';
import { DomainError } from '../core/errors/domain-errors.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { UnitOfWork } from '../core/db/unit-of-work.js';
import { errorCategoryOf } from '../messages/message-status.js';
import { MessagesRepository, type MessageFailure } from '../messages/messages.repository.js';
import { NumberPacer, PacerUnavailable, sleep, throughputOf, type PaceSlot } from '../messages/pacing/number-pacer.js';
import { callbackDataFor } from '../events/callback-data.js';
import {
  defaultRetryAfterSeconds,
  isThroughputRefusal,
  isTransientPlatformError,
} from '../upstream/meta-error-catalogue.js';
import { UpstreamError } from '../upstream/upstream.error.js';
import type { TemplateComponentValues, TemplateSend } from '../upstream/upstream.types.js';
import { WhatsAppClient } from '../upstream/whatsapp.client.js';
import { CampaignQueue } from './campaign-queue.js';
import type {
  RunnerBlocked,
  RunnerCampaigns,
  RunnerConfig,
  RunnerCredentials,
  RunnerMessages,
  RunnerNumbers,
  RunnerPacer,
  RunnerPreferences,
  RunnerRecipients,
  RunnerUnitOfWork,
  RunnerUpstream,
  SliceQueue,
} from './campaign-runner.ports.js';
import { CampaignRecipientsRepository, type ClaimedRecipient } from './campaign-recipients.repository.js';
import { CampaignsRepository, type CampaignRow, type CampaignStatus } from './campaigns.repository.js';

/** Transient refusals (Meta answered, so nothing was sent) a recipient is sent again for, up to this many attempts. */
const MAX_ATTEMPTS = 3;
/**
 * How far ahead a runner reserves its number's slots (at HIGH, about 50 sends): a slot is never missed for want of a
 * reservation, and a pause stops the sends within it and POST /messages on the number waits little behind it.
 */
const RESERVE_AHEAD_MS = 50;
/** How long a write of results keeps trying while PostgreSQL is away (its results are known only here). */
const WRITE_RETRY_MS = 120_000;

export type RunOutcome = 'completed' | 'stopped' | 'not_running' | 'held_elsewhere' | 'lease_lost' | 'yielded';

/** A run's job: the lease handed over by the slice before (`owner`) and how many slices came before. */
export interface SliceOf {
  owner?: string;
  slice?: number;
}

/** One recipient's send, ready to go: its claimed row and its stored (pending) message. */
interface Sendable {
  recipient: ClaimedRecipient;
  messageId: number;
}

/** A send's end: Meta's answer, the call's error, or not sent (the campaign stopped before its slot). */
type CallResult = { sendable: Sendable } & (
  { kind: 'sent'; wamid: string; at: Date } | { kind: 'error'; error: unknown } | { kind: 'unsent' }
);

/** What one run knows about its campaign while it runs. */
interface RunState {
  campaign: CampaignRow;
  owner: string;
  token: string;
  perSecond: number;
  /** Set once claims must stop: the campaign is no longer running (pause, cancel) or the lease is lost. */
  stop: { status: CampaignStatus | 'lease_lost' } | null;
  /** Claimed recipients whose results are not written yet. */
  inFlight: number;
  /** Settles once the last chunk to start has reserved all its slots (the next chunk reserves after it). */
  reserving: Promise<void>;
  /** When this slice stops claiming and hands the campaign to its next slice (CAMPAIGN_SLICE_MS). */
  sliceEndsAt: number;
}

/**
 * Runs one campaign in the worker: under a lease (one runner at a time; a killed runner is replaced when its lease
 * expires), claims recipients in chunks (claim + pending messages in one transaction, SKIP LOCKED), sends each chunk
 * at the number's pace (the Redis pacer shared with POST /messages), many calls in flight, and writes each chunk's
 * results in bulk. A recipient is claimed once per attempt and sent once per claim, so a killed runner, a second
 * runner or a cancel racing the last sends never send anyone twice. A claim of a dead runner whose message no answer
 * or status ever settled is failed as unconfirmed after CAMPAIGN_UNCONFIRMED_AFTER_MS, never resent by itself.
 */
@Injectable()
export class CampaignRunner {
  constructor(
    @Inject(CampaignsRepository) private readonly campaigns: RunnerCampaigns,
    @Inject(CampaignRecipientsRepository) private readonly recipients: RunnerRecipients,
    @Inject(MessagesRepository) private readonly messages: RunnerMessages,
    @Inject(PhoneNumbersRepository) private readonly numbers: RunnerNumbers,
    @Inject(MarketingPreferencesRepository) private readonly preferences: RunnerPreferences,
    @Inject(BlockedUsersRepository) private readonly blocked: RunnerBlocked,
    @Inject(AccountCredentials) private readonly credentials: RunnerCredentials,
    @Inject(UnitOfWork) private readonly sql: RunnerUnitOfWork,
    @Inject(NumberPacer) private readonly pacer: RunnerPacer,
    @Inject(WhatsAppClient) private readonly upstream: RunnerUpstream,
    @Inject(CampaignQueue) private readonly queue: SliceQueue,
    @Inject(AppConfig) private readonly config: RunnerConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /**
   * One time slice of the campaign (issue 37, finding 3): it claims and sends for CAMPAIGN_SLICE_MS, writes what it
   * sent, then hands its lease to the next slice's job, queued behind every job waiting. CAMPAIGN_CONCURRENCY jobs
   * then take turns between all running campaigns, whoever started them, instead of the first few holding every slot
   * until they end.
   */
  async run(campaignId: number, signal: AbortSignal, sliceOf: SliceOf = {}): Promise<RunOutcome> {
    const owner = sliceOf.owner ?? newOwner();
    const leased = await this.lease(campaignId, owner, signal, sliceOf.owner !== undefined);
    if (typeof leased === 'string') return leased;
    const state: RunState = {
      campaign: leased,
      owner,
      token: '',
      perSecond: 0,
      stop: null,
      inFlight: 0,
      reserving: Promise.resolve(),
      sliceEndsAt: Date.now() + this.config.campaignSliceMs,
    };
    const heartbeat = setInterval(
      () => void this.renew(state),
      Math.max(200, Math.floor(this.config.campaignLeaseMs / 3)),
    );
    try {
      try {
        await this.refresh(state);
      } catch (err) {
        // The account cannot send (its token rejected or not decryptable here, the account disconnected): nothing can
        // be sent, and a run tried again by every sweep would only spin. Paused with the reason; resume once fixed.
        if (!(err instanceof DomainError)) throw err;
        await this.campaigns.pauseByRunner(campaignId, owner, `paused by the service: ${err.message}`);
        this.logger.warn({ campaignId, err }, 'campaign paused: its business account has no usable token');
        return 'stopped';
      }
      if (leased.previousOwner && leased.previousOwner !== owner && sliceOf.owner === undefined)
        this.logger.warn(
          { campaignId, previousOwner: leased.previousOwner },
          'campaign taken over from a runner that stopped renewing its lease',
        );
      for (;;) {
        await this.sendAll(state, signal);
        if (state.stop || signal.aborted) return state.stop?.status === 'lease_lost' ? 'lease_lost' : 'stopped';
        if (Date.now() >= state.sliceEndsAt) return await this.handOver(state, sliceOf.slice ?? 0);
        const settled = await this.settle(state, signal);
        if (settled === 'slice_over') return await this.handOver(state, sliceOf.slice ?? 0);
        if (!settled) continue; // recipients went back to pending: send them
        if (state.stop || signal.aborted) return 'stopped';
        if (await this.writeRetrying(() => this.campaigns.complete(campaignId, owner, state.campaign.run), signal)) {
          this.logger.info({ campaignId }, 'campaign completed');
          return 'completed';
        }
        return 'stopped';
      }
    } finally {
      clearInterval(heartbeat);
      await this.campaigns.releaseLease(campaignId, owner).catch(() => undefined);
    }
  }

  /**
   * The end of a slice with recipients left: the lease goes to the next slice's job, queued behind the jobs waiting.
   * The lease stays held meanwhile (a sweep leaves the campaign alone for a lease), and the next slice finds it its own.
   */
  private async handOver(state: RunState, slice: number): Promise<RunOutcome> {
    const next = newOwner();
    const { campaign } = state;
    if (!(await this.campaigns.handOverLease(campaign.id, state.owner, next, this.config.campaignLeaseMs)))
      return 'lease_lost';
    await this.queue.enqueueSlice(campaign.id, campaign.run, slice + 1, next);
    return 'yielded';
  }

  /**
   * The lease, waiting (up to twice its length) for a runner that is finishing to let go. A slice handed the lease
   * (`handedOver`) does not wait: a lease no longer its own was taken over (a sweep), and that runner goes on.
   */
  private async lease(
    campaignId: number,
    owner: string,
    signal: AbortSignal,
    handedOver = false,
  ): Promise<(CampaignRow & { previousOwner: string | null }) | Exclude<RunOutcome, 'completed'>> {
    const deadline = Date.now() + 2 * this.config.campaignLeaseMs;
    for (;;) {
      const leased = await this.campaigns.acquireLease(campaignId, owner, this.config.campaignLeaseMs);
      if (leased) return leased;
      // Not running any more (paused, cancelled, completed, gone): nothing to wait for.
      if ((await this.campaigns.statusOf(campaignId)) !== 'running') return 'not_running';
      if (handedOver || Date.now() > deadline || signal.aborted) return 'held_elsewhere';
      await sleep(500);
    }
  }

  /** The number's tier and the account's token, read again on every renewal (a sync or THROUGHPUT_UPGRADE may change the tier). */
  private async refresh(state: RunState): Promise<void> {
    const { campaign } = state;
    const number = await this.numbers.sendState(campaign.businessAccountId, campaign.phoneNumberId);
    state.perSecond = throughputOf(number?.throughputLevel).perSecond;
    state.token = await this.credentials.tokenFor({
      businessAccountId: campaign.businessAccountId,
      credentialVersion: '',
    });
  }

  private async renew(state: RunState): Promise<void> {
    try {
      const now = await this.campaigns.renewLease(state.campaign.id, state.owner, this.config.campaignLeaseMs);
      if (!now || now.status !== 'running' || now.run !== state.campaign.run)
        state.stop ??= await this.stopOf(state, now);
      else await this.refresh(state);
    } catch (err) {
      // PostgreSQL away: the lease is kept on the next renewal, or lost once it expires (another runner takes over).
      this.logger.warn({ err, campaignId: state.campaign.id }, 'campaign lease not renewed');
    }
  }

  /**
   * Why the run stops, from a lease renewal's answer. No lease: a pause or cancel frees it too (see transition), so
   * the status says which (running: another runner has it). A lease of another run or a stopped campaign: paused/status.
   */
  private async stopOf(
    state: RunState,
    now: { status: CampaignStatus } | null,
  ): Promise<NonNullable<RunState['stop']>> {
    if (now) return { status: now.status === 'running' ? 'paused' : now.status };
    const status = await this.campaigns.statusOf(state.campaign.id);
    return { status: status && status !== 'running' ? status : 'lease_lost' };
  }

  /** Claims and sends until nothing is pending or the campaign stops; returns once every chunk's results are written. */
  private async sendAll(state: RunState, signal: AbortSignal): Promise<void> {
    const running = new Set<Promise<void>>();
    // Chunks of a tenth of the number's second (the pacer's slice), and about a quarter second claimed ahead at most:
    // few recipients wait for a slot once claimed (a pause stops them; a killed runner leaves few in doubt).
    const chunkSize = Math.max(1, Math.min(this.config.campaignChunkSize, Math.ceil(state.perSecond / 10)));
    const ahead = Math.min(this.config.campaignMaxInFlight, Math.max(chunkSize, Math.ceil(state.perSecond / 4)));
    while (!state.stop && !signal.aborted && Date.now() < state.sliceEndsAt) {
      while (state.inFlight >= ahead && running.size > 0) await Promise.race(running);
      let chunk: Sendable[] | null;
      try {
        chunk = await this.claim(state, chunkSize);
      } catch (err) {
        this.logger.warn({ err, campaignId: state.campaign.id }, 'campaign claim failed; trying again');
        await sleep(1000);
        continue;
      }
      if (chunk === null) break; // not running any more
      if (chunk.length === 0) {
        if (running.size === 0) break;
        await Promise.race(running); // results may send recipients back to pending
        continue;
      }
      state.inFlight += chunk.length;
      const work: Promise<void> = this.sendChunk(state, chunk, signal).finally(() => {
        state.inFlight -= chunk.length;
        running.delete(work);
      });
      running.add(work);
    }
    await Promise.all(running);
  }

  /**
   * One transaction: the campaign still running under this lease (a pause or cancel waits for it, later claims see
   * them), the oldest pending recipients claimed, those who stopped marketing messages (a MARKETING template) or are
   * blocked on the number skipped with the reason, and a pending message stored for each of the others. Null when
   * the campaign may no longer be claimed from.
   */
  private async claim(state: RunState, size: number): Promise<Sendable[] | null> {
    const { campaign } = state;
    const claimed = await this.sql.run(async (tx) => {
      if (!(await this.campaigns.lockRunning(tx, campaign.id, state.owner, campaign.run))) return null;
      const claimed = await this.recipients.claim(tx, campaign.id, state.owner, size);
      if (claimed.length === 0) return [];
      const addresses = claimed.map(addressOf);
      // In the claim's transaction, on its connection: a claim never waits for a second connection of the pool.
      const stopped =
        campaign.templateCategory === 'MARKETING'
          ? await this.preferences.stoppedAmong(tx, campaign.businessAccountId, addresses)
          : new Set<string>();
      const blocked = await this.blocked.blockedAmong(
        tx,
        campaign.businessAccountId,
        campaign.phoneNumberId,
        addresses,
      );
      const skipped: { id: number; reason: string }[] = [];
      const sendable: ClaimedRecipient[] = [];
      for (const r of claimed) {
        const address = addressOf(r);
        if (blocked.has(address))
          skipped.push({
            id: r.id,
            reason: `blocked on phone number ${campaign.phoneNumberId}: not sent (unblock the user in the console to message them)`,
          });
        else if (stopped.has(address))
          skipped.push({
            id: r.id,
            reason: `the user stopped marketing messages from this business: MARKETING template ${campaign.templateName} not sent`,
          });
        else sendable.push(r);
      }
      await this.recipients.skip(
        tx,
        skipped.map((s) => s.id),
        skipped.map((s) => s.reason),
      );
      const ids = await this.messages.insertCampaignMessages(
        tx,
        campaign.businessAccountId,
        campaign.id,
        sendable.map((r) => ({
          apiKeyId: null,
          phoneNumberId: campaign.phoneNumberId,
          to: r.to,
          userId: r.userId,
          upstreamApi: campaign.upstreamApi,
          type: 'template',
          templateName: campaign.templateName,
          templateLanguage: campaign.templateLanguage,
          content: { components: r.components ?? [] },
        })),
      );
      await this.recipients.attachMessages(
        tx,
        sendable.map((r) => r.id),
        ids,
      );
      return sendable.map((recipient, i) => ({ recipient, messageId: ids[i]! }));
    });
    if (claimed === null) {
      // Why not (after the transaction: never a second connection while holding one).
      const now = await this.campaigns
        .renewLease(campaign.id, state.owner, this.config.campaignLeaseMs)
        .catch(() => null);
      state.stop ??= await this.stopOf(state, now).catch(() => ({ status: 'lease_lost' as const }));
    }
    return claimed;
  }

  /**
   * The chunk's sends at the number's pace: slots reserved a short horizon ahead, each send leaving at its slot (a
   * send the process was late for takes a new slot), then the chunk's results in bulk.
   */
  private async sendChunk(state: RunState, chunk: Sendable[], signal: AbortSignal): Promise<void> {
    const calls: Promise<CallResult>[] = [];
    let next = 0;
    // Chunks reserve their slots one after the other: the first claimed is the first sent and written, and the next
    // claim is ready while the chunks after it are still being sent (the number's pace never waits for a claim).
    const before = state.reserving;
    let reserved: () => void = () => undefined;
    state.reserving = new Promise<void>((resolve) => (reserved = resolve));
    try {
      await before;
      while (next < chunk.length) {
        const slots = await this.slots(state, chunk.length - next, signal);
        if (slots.length === 0) break; // paused or cancelled: what has no slot yet is not sent
        for (const [i, slot] of slots.entries()) calls.push(this.sendAt(state, chunk[next + i]!, slot, signal));
        next += slots.length;
        // The next slots are reserved once these are about to be used, so reservations stay a horizon ahead.
        if (next < chunk.length) await sleep(RESERVE_AHEAD_MS / 2);
      }
    } finally {
      reserved();
    }
    const results = await Promise.all(calls);
    results.push(...chunk.slice(next).map((sendable) => ({ sendable, kind: 'unsent' as const })));
    await this.record(state, results, signal);
  }

  /** Up to `want` slots on the campaign's number, waiting for them (and for Redis); none once the campaign stops. */
  private async slots(state: RunState, want: number, signal: AbortSignal): Promise<PaceSlot[]> {
    while (!state.stop && !signal.aborted) {
      try {
        const grant = await this.pacer.reserve(state.campaign.phoneNumberId, state.perSecond, want, RESERVE_AHEAD_MS);
        if (grant.slots.length > 0) return grant.slots;
        await sleep(Math.max(1, grant.waitMs));
      } catch (err) {
        if (!(err instanceof PacerUnavailable)) throw err;
        // Redis away: no pace, no send. The campaign waits (its lease is in PostgreSQL) and goes on when Redis is back.
        this.logger.warn({ campaignId: state.campaign.id }, 'pacer unavailable (Redis); campaign waiting');
        await sleep(1000);
      }
    }
    return [];
  }

  /** One send at its slot; a slot the process was late for is replaced by a new one. Not sent once the campaign stops. */
  private async sendAt(state: RunState, sendable: Sendable, slot: PaceSlot, signal: AbortSignal): Promise<CallResult> {
    for (let current: PaceSlot | undefined = slot; current; [current] = await this.slots(state, 1, signal)) {
      const onTime = await this.pacer.until(current);
      if (state.stop || signal.aborted) break;
      // Called in the same turn of the event loop as the check: nothing runs between the slot and the request.
      if (onTime) return this.call(state, sendable);
    }
    return { sendable, kind: 'unsent' };
  }

  private async call(state: RunState, sendable: Sendable): Promise<CallResult> {
    const { campaign } = state;
    const r = sendable.recipient;
    const payload: TemplateSend = {
      ...(r.userId !== null ? { recipient: r.userId } : { to: r.to! }),
      bizOpaqueCallbackData: callbackDataFor(sendable.messageId),
      type: 'template',
      template: {
        name: campaign.templateName,
        language: { code: campaign.templateLanguage },
        components: (r.components ?? []) as TemplateComponentValues[],
      },
    };
    try {
      const result =
        campaign.upstreamApi === 'marketing_messages'
          ? await this.upstream.sendMarketingMessage(state.token, campaign.phoneNumberId, payload)
          : await this.upstream.sendMessage(state.token, campaign.phoneNumberId, payload);
      return { sendable, kind: 'sent', wamid: result.wamid, at: new Date() };
    } catch (error) {
      return { sendable, kind: 'error', error };
    }
  }

  /**
   * A chunk's results, in three statements at most: sent, failed, and recipients sent back to pending (Meta refused
   * the pace or failed transiently: nothing was sent, so sending again is no duplicate). Recipients the runner did
   * not get to (paused or cancelled meanwhile) go back to pending, or are cancelled, and their messages say why.
   */
  private async record(state: RunState, results: CallResult[], signal: AbortSignal): Promise<void> {
    const { campaign } = state;
    const sent: { messageId: number; wamid: string; at: Date }[] = [];
    const failed: { messageId: number; error: MessageFailure }[] = [];
    const again: number[] = [];
    const unsent: Sendable[] = [];
    let holdMs = 0;
    let pauseReason: string | undefined;
    for (const result of results) {
      const { messageId, recipient } = result.sendable;
      if (result.kind === 'sent') {
        sent.push({ messageId, wamid: result.wamid, at: result.at });
        continue;
      }
      if (result.kind === 'unsent') {
        unsent.push(result.sendable);
        continue;
      }
      const error = result.error;
      if (!(error instanceof UpstreamError)) {
        this.logger.error(
          { err: error, campaignId: campaign.id, messageId },
          'campaign send failed before the upstream platform answered',
        );
        failed.push({
          messageId,
          error: {
            code: null,
            title: 'Internal error before the upstream platform answered',
            detail: null,
            category: 'retryable',
          },
        });
        continue;
      }
      // No answer once the request was on its way (a reset, a timeout): Meta may have it. Not sent again (a duplicate
      // reaches a person and is billed); Meta's status for it, found by its callback data, settles it (docs/campaigns.md).
      const unknown = error.httpStatus === undefined && !error.neverSent;
      const title = unknown
        ? `Outcome unknown: ${error.title} before Meta answered; not sent again (a status from Meta settles it; retry-failed resends it)`
        : error.title;
      failed.push({
        messageId,
        error: {
          code: error.code ?? null,
          title,
          detail: error.detail ?? null,
          category: errorCategoryOf(error.code, error.errorClass),
        },
      });
      if (isThroughputRefusal(error.code)) {
        holdMs = Math.max(holdMs, (error.retryAfterSeconds ?? defaultRetryAfterSeconds(error.code)) * 1000);
        again.push(recipient.id); // Meta refused it: nothing was sent
      } else if (error.neverSent && recipient.attempts < MAX_ATTEMPTS) {
        again.push(recipient.id); // no connection was made: Meta cannot have it
      } else if (
        error.errorClass === 'retryable' &&
        !error.isTimeout &&
        error.httpStatus !== undefined &&
        isTransientPlatformError(error.code) &&
        recipient.attempts < MAX_ATTEMPTS
      ) {
        again.push(recipient.id);
      } else if (error.errorClass === 'credential' || error.errorClass === 'account_blocked') {
        again.push(recipient.id);
        pauseReason = `paused by the service: ${error.reason}`;
      }
    }
    const stoppedWith = state.stop?.status;
    const notSent: MessageFailure = {
      code: null,
      title: `Not sent: the campaign was ${stoppedWith === 'cancelled' ? 'cancelled' : 'paused'} before this recipient's turn`,
      detail: null,
      category: 'retryable',
    };
    failed.push(...unsent.map((u) => ({ messageId: u.messageId, error: notSent })));

    if (holdMs > 0) {
      await this.pacer.holdBack(campaign.phoneNumberId, holdMs).catch(() => undefined);
      this.logger.warn(
        { campaignId: campaign.id, phoneNumberId: campaign.phoneNumberId, holdMs },
        "Meta refused sends over the number's throughput (130429): number held back, recipients sent again",
      );
    }
    const back = [...again, ...unsent.map((u) => u.recipient.id)];
    await this.writeRetrying(async () => {
      await this.messages.markSentMany(campaign.businessAccountId, sent);
      await this.messages.markFailedMany(campaign.businessAccountId, failed);
      if (back.length === 0) return;
      // Under the campaign's row lock (shared): a cancel either sees them pending (and cancels them) or came first.
      await this.sql.run(async (tx) => {
        const status = await this.campaigns.statusForShare(tx, campaign.id);
        await this.recipients.requeue(tx, back, state.owner, status === 'cancelled' ? 'cancelled' : 'pending');
      });
    }, signal);
    if (pauseReason) {
      await this.campaigns.pauseByRunner(campaign.id, state.owner, pauseReason).catch(() => undefined);
      state.stop ??= { status: 'paused' };
    }
  }

  /**
   * Once nothing is pending: claimed recipients whose message is still pending (a dead runner's calls, or results
   * that could not be written) wait for an answer or a status webhook; past CAMPAIGN_UNCONFIRMED_AFTER_MS they are
   * failed as unconfirmed (never resent by the service: only retry-failed does). True once nothing is left; false
   * when recipients went back to pending meanwhile.
   */
  private async settle(state: RunState, signal: AbortSignal): Promise<boolean | 'slice_over'> {
    const { campaign } = state;
    for (;;) {
      if (state.stop || signal.aborted) return true;
      // Waiting for the last answers takes no slot from other campaigns past the slice either.
      if (Date.now() >= state.sliceEndsAt) return 'slice_over';
      if (await this.recipients.hasPending(campaign.id)) return false;
      const left = await this.recipients.unsettled(campaign.id);
      if (left.length === 0) return true;
      const cutoff = Date.now() - this.config.campaignUnconfirmedAfterMs;
      const stale = left.filter((r) => r.claimedAt.getTime() <= cutoff);
      if (stale.length > 0) {
        this.logger.warn(
          { campaignId: campaign.id, count: stale.length },
          'campaign recipients unconfirmed: no answer stored and no status arrived; not resent',
        );
        const error: MessageFailure = {
          code: null,
          title:
            'Unconfirmed: the send was in flight when its runner stopped, and no status arrived; not resent automatically (retry-failed resends it)',
          detail: null,
          category: 'retryable',
        };
        await this.messages.markFailedMany(
          campaign.businessAccountId,
          stale.map((r) => ({ messageId: r.messageId, error })),
        );
        continue;
      }
      await sleep(Math.min(1000, this.config.campaignUnconfirmedAfterMs));
    }
  }

  /** A write whose results exist only in this process: tried again while PostgreSQL is away (restarted, failing over). */
  private async writeRetrying<T>(write: () => Promise<T>, signal: AbortSignal): Promise<T> {
    const deadline = Date.now() + WRITE_RETRY_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        if (Date.now() > deadline || signal.aborted) throw err;
        this.logger.warn({ err, attempt }, 'campaign write failed; trying again');
        await sleep(Math.min(5000, 250 * attempt));
      }
    }
  }
}

/** A runner's name in the lease: host, process and a random part (every run, and every slice, is a new owner). */
const newOwner = () => `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;

/** The address a recipient is known by (phone digits or BSUID), as marketing preferences and blocks store it. */
const addressOf = (r: ClaimedRecipient) => r.userId ?? r.to!;
