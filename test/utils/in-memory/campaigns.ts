import pino from 'pino';
import type { NumberSendState } from '../../../src/accounts/phone-numbers/phone-numbers.repository.js';
import type {
  ClaimedRecipient,
  NewRecipient,
  RecipientStatus,
  UnsettledRecipient,
} from '../../../src/campaigns/campaign-recipients.repository.js';
import { CampaignRunner } from '../../../src/campaigns/campaign-runner.js';
import type {
  RunnerCampaigns,
  RunnerConfig,
  RunnerCredentials,
  RunnerMessages,
  RunnerNumbers,
  RunnerPacer,
  RunnerRecipients,
  RunnerUpstream,
  SliceQueue,
} from '../../../src/campaigns/campaign-runner.ports.js';
import type { CampaignRow, CampaignStatus } from '../../../src/campaigns/campaigns.repository.js';
import type { Tx } from '../../../src/core/db/db.js';
import {
  pendingRow,
  type MessageFailure,
  type PendingMessage,
  type StoredMessage,
} from '../../../src/messages/messages.repository.js';
import { PacerUnavailable, sleep, type PaceGrant, type PaceSlot } from '../../../src/messages/pacing/number-pacer.js';
import type { SendResult, TemplateSend } from '../../../src/upstream/upstream.types.js';
import { asJsonb, MemoryDatabase, type MemoryCampaign, type MemoryRecipient } from './memory-database.js';
import { MemoryAccounts, MemoryBlocked, MemoryPreferences } from './repositories.js';

/*
 * The campaign runner's collaborators in memory: `campaigns`, `campaign_recipients` and the campaign's `messages` over
 * one MemoryDatabase, each method keeping the rules its SQL keeps (the lease's owner and expiry, the claim of pending
 * rows only, writes only from `pending`, requeues of this runner's claims only; test/medium checks the SQL itself),
 * and small fakes of the pacer, Meta, the number, the token and the slice queue, typed by the runner's ports.
 */

const leaseEnd = (leaseMs: number) => new Date(Date.now() + leaseMs);

/** A campaign as the runner sees it (CampaignRow: no lease columns). */
function rowOf(c: MemoryCampaign): CampaignRow {
  const { leaseOwner: _owner, leaseUntil: _until, ...row } = structuredClone(c);
  return row;
}

/** campaigns: the console's start and transitions, and the runner's lease. */
export class MemoryCampaigns implements RunnerCampaigns {
  /** Lease renewals asked for so far (the runner's heartbeat, and its claims that found the campaign stopped). */
  renewals = 0;

  constructor(private readonly db: MemoryDatabase) {}

  /** A campaign as the console starts it: running, run 1, nobody's lease. */
  start(
    businessAccountId: string,
    over: Partial<Pick<CampaignRow, 'templateCategory' | 'upstreamApi' | 'total'>> = {},
  ): MemoryCampaign {
    const now = new Date();
    const campaign: MemoryCampaign = {
      id: this.db.nextId(),
      businessAccountId,
      name: 'November notice',
      phoneNumberId: '402000000000011',
      templateName: 'parcel_update',
      templateLanguage: 'en_GB',
      templateCategory: 'UTILITY',
      upstreamApi: 'cloud_api',
      status: 'running',
      statusReason: null,
      total: 0,
      createdById: null,
      createdAt: now,
      updatedAt: now,
      completedAt: null,
      run: 1,
      leaseOwner: null,
      leaseUntil: null,
      ...over,
    };
    this.db.autocommit('campaigns.create').campaigns.set(campaign.id, campaign);
    return campaign;
  }

  get(id: number): MemoryCampaign {
    const c = this.db.state.campaigns.get(id);
    if (!c) throw new Error(`no campaign ${id}`);
    return c;
  }

  /**
   * An operator's transition (CampaignsRepository.transition): back to running bumps `run` (retry-failed, resume);
   * paused or cancelled, the lease is nobody's.
   */
  transition(id: number, to: CampaignStatus): void {
    const c = this.db.autocommit('campaigns.transition').campaigns.get(id);
    if (!c) throw new Error(`no campaign ${id}`);
    Object.assign(c, {
      status: to,
      statusReason: null,
      updatedAt: new Date(),
      run: to === 'running' ? c.run + 1 : c.run,
      completedAt: to === 'completed' || to === 'cancelled' ? new Date() : null,
      ...(to === 'running' ? {} : { leaseOwner: null, leaseUntil: null }),
    });
  }

  /** Another runner holds the lease for `leaseMs` from now (negative: it stopped renewing that long ago). */
  leaseTo(id: number, owner: string, leaseMs: number): void {
    Object.assign(this.get(id), { leaseOwner: owner, leaseUntil: leaseEnd(leaseMs) });
  }

  acquireLease(
    id: number,
    owner: string,
    leaseMs: number,
  ): Promise<(CampaignRow & { previousOwner: string | null }) | null> {
    const c = this.db.autocommit('campaigns.acquireLease').campaigns.get(id);
    const free = c && (c.leaseOwner === null || c.leaseOwner === owner || c.leaseUntil! < new Date());
    if (!c || c.status !== 'running' || !free) return Promise.resolve(null);
    const previousOwner = c.leaseOwner;
    Object.assign(c, { leaseOwner: owner, leaseUntil: leaseEnd(leaseMs) });
    return Promise.resolve({ ...rowOf(c), previousOwner });
  }

  renewLease(id: number, owner: string, leaseMs: number): Promise<{ status: CampaignStatus; run: number } | null> {
    this.renewals++;
    const c = this.db.autocommit('campaigns.renewLease').campaigns.get(id);
    if (c?.leaseOwner !== owner) return Promise.resolve(null);
    c.leaseUntil = leaseEnd(leaseMs);
    return Promise.resolve({ status: c.status, run: c.run });
  }

  lockRunning(tx: Tx, id: number, owner: string, run: number): Promise<boolean> {
    const c = this.db.within(tx, 'campaigns.lockRunning').campaigns.get(id);
    return Promise.resolve(c?.status === 'running' && c.leaseOwner === owner && c.run === run);
  }

  complete(id: number, owner: string, run: number): Promise<boolean> {
    const c = this.db.autocommit('campaigns.complete').campaigns.get(id);
    if (c?.status !== 'running' || c.leaseOwner !== owner || c.run !== run) return Promise.resolve(false);
    const now = new Date();
    Object.assign(c, { status: 'completed', completedAt: now, updatedAt: now, leaseOwner: null, leaseUntil: null });
    return Promise.resolve(true);
  }

  pauseByRunner(id: number, owner: string, reason: string): Promise<void> {
    const c = this.db.autocommit('campaigns.pauseByRunner').campaigns.get(id);
    if (c?.status === 'running' && c.leaseOwner === owner)
      Object.assign(c, { status: 'paused', statusReason: reason, updatedAt: new Date() });
    return Promise.resolve();
  }

  statusOf(id: number): Promise<CampaignStatus | null> {
    return Promise.resolve(this.db.autocommit('campaigns.statusOf').campaigns.get(id)?.status ?? null);
  }

  statusForShare(tx: Tx, id: number): Promise<CampaignStatus | null> {
    return Promise.resolve(this.db.within(tx, 'campaigns.statusForShare').campaigns.get(id)?.status ?? null);
  }

  handOverLease(id: number, owner: string, next: string, leaseMs: number): Promise<boolean> {
    const c = this.db.autocommit('campaigns.handOverLease').campaigns.get(id);
    if (c?.leaseOwner !== owner || c.status !== 'running') return Promise.resolve(false);
    Object.assign(c, { leaseOwner: next, leaseUntil: leaseEnd(leaseMs) });
    return Promise.resolve(true);
  }

  releaseLease(id: number, owner: string): Promise<void> {
    const c = this.db.autocommit('campaigns.releaseLease').campaigns.get(id);
    if (c?.leaseOwner === owner) Object.assign(c, { leaseOwner: null, leaseUntil: null });
    return Promise.resolve();
  }
}

/** campaign_recipients: what the console inserts, the runner's claims, and what each recipient shows. */
export class MemoryRecipients implements RunnerRecipients {
  constructor(private readonly db: MemoryDatabase) {}

  /** The campaign's recipients as created (insertAll), in the order given. */
  add(campaignId: number, recipients: NewRecipient[]): MemoryRecipient[] {
    const state = this.db.autocommit('recipients.insertAll');
    return recipients.map((r) => {
      const row: MemoryRecipient = {
        id: this.db.nextId(),
        campaignId,
        to: r.to,
        userId: r.userId,
        components: r.components === null ? null : (asJsonb(r.components) as unknown[]),
        state: 'pending',
        attempts: 0,
        claimedBy: null,
        claimedAt: null,
        skipReason: null,
        messageId: null,
      };
      state.recipients.set(row.id, row);
      return row;
    });
  }

  /** The console's cancel: recipients not claimed yet are cancelled (in the transaction of the transition). */
  cancelPending(campaignId: number): void {
    for (const r of this.db.autocommit('recipients.cancelPending').recipients.values())
      if (r.campaignId === campaignId && r.state === 'pending') r.state = 'cancelled';
  }

  /** A recipient claimed by a runner that died before any answer: its message still pending. */
  leftClaimed(recipientId: number, owner: string, messageId: number, claimedAt = new Date()): void {
    Object.assign(this.get(recipientId), { state: 'claimed', claimedBy: owner, claimedAt, messageId, attempts: 1 });
  }

  get(id: number): MemoryRecipient {
    const r = this.db.state.recipients.get(id);
    if (!r) throw new Error(`no recipient ${id}`);
    return r;
  }

  /** What the recipient shows (the repository's STATUS): its state until claimed, then its message's status. */
  shown(id: number): RecipientStatus {
    const r = this.get(id);
    if (r.state !== 'claimed') return r.state;
    const status = r.messageId === null ? undefined : this.db.state.campaignMessages.get(r.messageId)?.status;
    return status === undefined || status === 'pending' ? 'sending' : (status as RecipientStatus);
  }

  /** How many recipients of the campaign show each status (the campaign's counts), only those some show. */
  counts(campaignId: number): Partial<Record<RecipientStatus, number>> {
    const counts: Partial<Record<RecipientStatus, number>> = {};
    for (const r of this.db.state.recipients.values())
      if (r.campaignId === campaignId) counts[this.shown(r.id)] = (counts[this.shown(r.id)] ?? 0) + 1;
    return counts;
  }

  claim(tx: Tx, campaignId: number, owner: string, limit: number): Promise<ClaimedRecipient[]> {
    const state = this.db.within(tx, 'recipients.claim');
    const claimed = [...state.recipients.values()]
      .filter((r) => r.campaignId === campaignId && r.state === 'pending')
      .sort((a, b) => a.id - b.id)
      .slice(0, limit)
      .map((r): ClaimedRecipient => {
        Object.assign(r, { state: 'claimed', claimedBy: owner, claimedAt: new Date(), attempts: r.attempts + 1 });
        return structuredClone({
          id: r.id,
          to: r.to,
          userId: r.userId,
          components: r.components,
          attempts: r.attempts,
        });
      });
    return Promise.resolve(claimed);
  }

  attachMessages(tx: Tx, recipientIds: number[], messageIds: number[]): Promise<void> {
    const state = this.db.within(tx, 'recipients.attachMessages');
    recipientIds.forEach((id, i) => {
      const r = state.recipients.get(id);
      if (r) r.messageId = messageIds[i]!;
    });
    return Promise.resolve();
  }

  skip(tx: Tx, recipientIds: number[], reasons: string[]): Promise<void> {
    const state = this.db.within(tx, 'recipients.skip');
    recipientIds.forEach((id, i) => {
      const r = state.recipients.get(id);
      if (r?.state === 'claimed') Object.assign(r, { state: 'skipped', skipReason: reasons[i]! });
    });
    return Promise.resolve();
  }

  requeue(tx: Tx, recipientIds: number[], owner: string, to: 'pending' | 'cancelled'): Promise<void> {
    const state = this.db.within(tx, 'recipients.requeue');
    for (const id of recipientIds) {
      const r = state.recipients.get(id);
      if (r?.state === 'claimed' && r.claimedBy === owner)
        Object.assign(r, { state: to, claimedBy: null, claimedAt: null });
    }
    return Promise.resolve();
  }

  hasPending(campaignId: number): Promise<boolean> {
    const { recipients } = this.db.autocommit('recipients.hasPending');
    return Promise.resolve([...recipients.values()].some((r) => r.campaignId === campaignId && r.state === 'pending'));
  }

  unsettled(campaignId: number, limit = 5000): Promise<UnsettledRecipient[]> {
    const state = this.db.autocommit('recipients.unsettled');
    const rows = [...state.recipients.values()]
      .filter(
        (r) =>
          r.campaignId === campaignId &&
          r.state === 'claimed' &&
          r.messageId !== null &&
          state.campaignMessages.get(r.messageId)?.status === 'pending',
      )
      .sort((a, b) => a.id - b.id)
      .slice(0, limit)
      .map((r) => ({ id: r.id, messageId: r.messageId!, claimedBy: r.claimedBy, claimedAt: r.claimedAt! }));
    return Promise.resolve(rows);
  }
}

/** messages, as a campaign stores and settles them: pending in the claim, then sent or failed (only from pending). */
export class MemoryCampaignMessages implements RunnerMessages {
  constructor(private readonly db: MemoryDatabase) {}

  get(id: number): StoredMessage {
    const m = this.db.state.campaignMessages.get(id);
    if (!m) throw new Error(`no message ${id}`);
    return m;
  }

  /** The campaign's messages, oldest first. */
  of(campaignId: number): StoredMessage[] {
    return [...this.db.state.campaignMessages.values()].filter((m) => m.campaignId === campaignId);
  }

  /** A pending message of the campaign stored outside a run (a dead runner's claim). */
  pending(businessAccountId: string, campaignId: number, to: string): StoredMessage {
    const now = new Date();
    const m: StoredMessage = {
      ...pendingRow(businessAccountId, campaignMessage(to), { id: this.db.nextId(), createdAt: now, updatedAt: now }),
      campaignId,
    };
    this.db.autocommit('messages.insertCampaignMessages').campaignMessages.set(m.id, m);
    return m;
  }

  /** A status webhook found the message by its callback data and moved it on (the worker's write). */
  statusArrives(id: number, status: 'sent' | 'delivered', wamid: string): void {
    const at = new Date();
    Object.assign(this.get(id), {
      status,
      upstreamMessageId: wamid,
      sentAt: at,
      updatedAt: at,
      ...(status === 'delivered' ? { deliveredAt: at } : {}),
    });
  }

  insertCampaignMessages(
    tx: Tx,
    businessAccountId: string,
    campaignId: number,
    items: PendingMessage[],
  ): Promise<number[]> {
    const state = this.db.within(tx, 'messages.insertCampaignMessages');
    const now = new Date();
    const ids = items.map((m) => {
      const row = pendingRow(
        businessAccountId,
        { ...m, content: asJsonb(m.content) },
        { id: this.db.nextId(), createdAt: now, updatedAt: now },
      );
      state.campaignMessages.set(row.id, { ...row, campaignId });
      return row.id;
    });
    return Promise.resolve(ids);
  }

  markSentMany(
    businessAccountId: string,
    marks: { messageId: number; wamid: string; at: Date }[],
  ): Promise<Set<number>> {
    const state = this.db.autocommit('messages.markSentMany');
    const moved = new Set<number>();
    for (const s of marks) {
      const m = state.campaignMessages.get(s.messageId);
      if (m?.status !== 'pending' || m.businessAccountId !== businessAccountId) continue;
      Object.assign(m, { status: 'sent', upstreamMessageId: s.wamid, acceptedAt: s.at, sentAt: s.at, updatedAt: s.at });
      moved.add(m.id);
    }
    return Promise.resolve(moved);
  }

  markFailedMany(
    businessAccountId: string,
    failures: { messageId: number; error: MessageFailure }[],
    at = new Date(),
  ): Promise<void> {
    const state = this.db.autocommit('messages.markFailedMany');
    for (const f of failures) {
      const m = state.campaignMessages.get(f.messageId);
      if (m?.status !== 'pending' || m.businessAccountId !== businessAccountId) continue;
      Object.assign(m, {
        status: 'failed',
        failedAt: at,
        errorCode: f.error.code,
        errorTitle: f.error.title,
        errorDetail: f.error.detail,
        errorCategory: f.error.category,
        updatedAt: at,
      });
    }
    return Promise.resolve();
  }
}

const campaignMessage = (to: string): PendingMessage => ({
  apiKeyId: null,
  phoneNumberId: '402000000000011',
  to,
  userId: null,
  upstreamApi: 'cloud_api',
  type: 'template',
  templateName: 'parcel_update',
  templateLanguage: 'en_GB',
  content: { components: [] },
});

/**
 * The number's pace (NumberPacer): slots `spacingMs` apart, granted within the caller's horizon, none before a hold
 * (after Meta's 130429) ends. `unavailable` reserves throw PacerUnavailable first (Redis away); the next `late`
 * slots are missed (the process late for them); once `gateAfter` sends have had their slot, the next wait for `gate`
 * to open (a test pauses or cancels the campaign while they wait).
 */
export class MemoryPacer implements RunnerPacer {
  readonly holds: { phoneNumberId: string; ms: number; at: number }[] = [];
  unavailable = 0;
  late = 0;
  gateAfter = Infinity;
  private opened: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.opened = resolve));
  private timed = 0;
  private next = 0;
  private heldUntil = 0;

  constructor(private readonly spacingMs = 0) {}

  reserve(_phoneNumberId: string, _perSecond: number, want: number, horizonMs: number): Promise<PaceGrant> {
    if (this.unavailable > 0) {
      this.unavailable--;
      return Promise.reject(new PacerUnavailable('Redis did not answer'));
    }
    const now = performance.now();
    const slots: PaceSlot[] = [];
    let at = Math.max(this.next, now, this.heldUntil);
    for (; slots.length < want && at <= now + horizonMs; at += this.spacingMs)
      slots.push({ notBefore: at, lateAfter: at + 100 });
    this.next = at;
    return Promise.resolve({
      slots,
      waitMs: slots.length > 0 ? 0 : Math.ceil(at - now - horizonMs),
      held: this.heldUntil > now,
    });
  }

  /** The sends held at the gate go on. */
  open(): void {
    this.opened();
  }

  async until(slot: PaceSlot): Promise<boolean> {
    if (++this.timed > this.gateAfter) await this.gate;
    const left = slot.notBefore - performance.now();
    if (left > 0) await sleep(left);
    if (this.late === 0) return true;
    this.late--;
    return false;
  }

  holdBack(phoneNumberId: string, ms: number): Promise<void> {
    const now = performance.now();
    this.holds.push({ phoneNumberId, ms, at: now });
    this.heldUntil = Math.max(this.heldUntil, now + ms);
    return Promise.resolve();
  }
}

/** One call to Meta: the endpoint, the token and the body. */
export interface MetaCall {
  api: 'messages' | 'marketing_messages';
  token: string;
  phoneNumberId: string;
  payload: TemplateSend;
}

/** Meta's answer to a call: accepted (its wamid), or what `answer` throws for it. Default: every send accepted. */
export class ScriptedMeta implements RunnerUpstream {
  readonly calls: MetaCall[] = [];
  answer: (call: MetaCall, nth: number) => Promise<SendResult> = (_call, nth) =>
    Promise.resolve({ wamid: `wamid.${nth}`, waId: '447700900123', input: '447700900123' });

  sendMessage(token: string, phoneNumberId: string, payload: TemplateSend): Promise<SendResult> {
    return this.called({ api: 'messages', token, phoneNumberId, payload });
  }

  sendMarketingMessage(token: string, phoneNumberId: string, payload: TemplateSend): Promise<SendResult> {
    return this.called({ api: 'marketing_messages', token, phoneNumberId, payload });
  }

  /** Who the sends went to, in the order they left. */
  recipients(): string[] {
    return this.calls.map((c) => c.payload.to ?? c.payload.recipient ?? '');
  }

  private called(call: MetaCall): Promise<SendResult> {
    this.calls.push(call);
    return this.answer(call, this.calls.length);
  }
}

/** The campaign queue: the slices handed on. */
export class MemorySliceQueue implements SliceQueue {
  readonly slices: { campaignId: number; run: number; slice: number; owner: string }[] = [];

  enqueueSlice(campaignId: number, run: number, slice: number, owner: string): Promise<void> {
    this.slices.push({ campaignId, run, slice, owner });
    return Promise.resolve();
  }
}

/** The account's token (AccountCredentials), or what it throws once `refusal` is set. */
export class MemoryToken implements RunnerCredentials {
  refusal: Error | null = null;

  tokenFor(): Promise<string> {
    return this.refusal ? Promise.reject(this.refusal) : Promise.resolve('token-of-the-account');
  }
}

/** The campaign's number as synced: its throughput tier. */
export class MemoryNumberState implements RunnerNumbers {
  state: NumberSendState = { status: 'CONNECTED', removedAt: null, throughputLevel: 'STANDARD' };

  sendState(): Promise<NumberSendState | null> {
    return Promise.resolve({ ...this.state });
  }
}

/**
 * The worker's CampaignRunner over in-memory tables and fakes: what CampaignsWorkerModule wires, without PostgreSQL,
 * Redis or Meta. `spacingMs`: the pacer's interval between two sends of the number (0: as fast as granted).
 */
export function campaignRunnerOverMemory(opts: { config?: Partial<RunnerConfig>; spacingMs?: number } = {}) {
  const db = new MemoryDatabase();
  const campaigns = new MemoryCampaigns(db);
  const recipients = new MemoryRecipients(db);
  const messages = new MemoryCampaignMessages(db);
  const accounts = new MemoryAccounts(db);
  const preferences = new MemoryPreferences(db);
  const blocked = new MemoryBlocked(db);
  const numbers = new MemoryNumberState();
  const token = new MemoryToken();
  const pacer = new MemoryPacer(opts.spacingMs);
  const meta = new ScriptedMeta();
  const queue = new MemorySliceQueue();
  const config: RunnerConfig = {
    campaignSliceMs: 60_000,
    campaignLeaseMs: 1000,
    campaignChunkSize: 250,
    campaignMaxInFlight: 256,
    campaignUnconfirmedAfterMs: 60_000,
    ...opts.config,
  };
  const runner = new CampaignRunner(
    campaigns,
    recipients,
    messages,
    numbers,
    preferences,
    blocked,
    token,
    db,
    pacer,
    meta,
    queue,
    config,
    pino({ level: 'silent' }),
  );
  return {
    runner,
    db,
    campaigns,
    recipients,
    messages,
    accounts,
    preferences,
    blocked,
    numbers,
    token,
    pacer,
    meta,
    queue,
  };
}
