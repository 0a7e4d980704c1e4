import type { LockedStanding } from '../../../src/accounts/business-accounts/business-accounts.repository.js';
import type {
  NumberNameDecision,
  NumberQualityUpdate,
} from '../../../src/accounts/phone-numbers/phone-numbers.repository.js';
import type { TemplateDecision } from '../../../src/accounts/templates/templates.repository.js';
import type { MarketingPreferenceChange } from '../../../src/accounts/users/marketing-preferences.repository.js';
import type { UserIdChange } from '../../../src/accounts/users/user-id-change.js';
import type { Tx } from '../../../src/core/db/db.js';
import type { InboundContact } from '../../../src/messages/conversation-windows.repository.js';
import type { InboundMessageRow, StatusCandidate } from '../../../src/messages/messages.repository.js';
import type { StoredDelivery } from '../../../src/webhooks/deliveries/webhook-deliveries.repository.js';
import type { EventRow, InsertedEvent, StoredEvent, StoredRef } from '../../../src/events/events.repository.js';
import type { RunnerBlocked, RunnerPreferences } from '../../../src/campaigns/campaign-runner.ports.js';
import type {
  AccountStandings,
  BlockedUserMoves,
  InboundMessages,
  InboundWindows,
  NumberUpdates,
  PreferenceChanges,
  ProcessingDeliveries,
  ProcessingEvents,
  StatusMessages,
  TemplateDecisions,
} from '../../../src/webhooks/processing/processing.ports.js';
import {
  key,
  type MemoryDatabase,
  type MemoryDelivery,
  type MemoryEvent,
  type MemoryMessage,
  type MemoryState,
} from './memory-database.js';

/*
 * In-memory stand-ins of the repositories webhook processing uses, over one MemoryDatabase. Each method keeps the
 * rules its SQL keeps (what it skips, what wins, what it returns), so that the processor behaves over them as over
 * PostgreSQL; the repository tests (test/medium) check the SQL itself.
 */

/** A copy of a row without some of its columns (what a statement that does not select them returns). */
function without<T extends object, K extends keyof T>(row: T, ...columns: K[]): Omit<T, K> {
  const copy = structuredClone(row);
  for (const c of columns) delete copy[c];
  return copy;
}

/** The wabaId of a business account known by its id (the runner's statements name it by id, webhooks by wabaId). */
function wabaOf(state: MemoryState, businessAccountId: string): string | undefined {
  return [...state.accounts.values()].find((a) => a.id === businessAccountId)?.wabaId;
}

/** webhook_deliveries. */
export class MemoryDeliveries implements ProcessingDeliveries {
  constructor(private readonly db: MemoryDatabase) {}

  /** What the receiver does: stores the raw bytes, `received` (storeBatch's row, one at a time). */
  receive(rawBody: Buffer, receivedAt = new Date()): number {
    const id = this.db.nextId();
    this.db.autocommit('deliveries.storeBatch').deliveries.set(id, {
      id,
      status: 'received',
      rawBody: new Uint8Array(rawBody),
      receivedAt,
      eventCount: null,
      attempts: 0,
      lastError: null,
      processedAt: null,
    });
    return id;
  }

  get(id: number): MemoryDelivery | undefined {
    return this.db.state.deliveries.get(id);
  }

  findForProcessing(ids: number[]): Promise<StoredDelivery[]> {
    const { deliveries } = this.db.autocommit('deliveries.findForProcessing');
    const rows = [...new Set(ids)]
      .sort((a, b) => a - b)
      .flatMap((id) => deliveries.get(id) ?? [])
      .map((d) => ({
        id: d.id,
        status: d.status,
        rawBody: Buffer.from(d.rawBody),
        receivedAt: d.receivedAt,
        eventCount: d.eventCount,
      }));
    return Promise.resolve(rows);
  }

  markProcessed(done: { id: number; events: number; receivedAt: Date }[], tx?: Tx): Promise<void> {
    const state = tx ? this.db.within(tx, 'deliveries.markProcessed') : this.db.autocommit('deliveries.markProcessed');
    for (const d of done) {
      const row = state.deliveries.get(d.id);
      if (!row || row.status === 'processed') continue;
      Object.assign(row, {
        status: 'processed',
        processedAt: new Date(),
        eventCount: d.events,
        lastError: null,
        attempts: row.attempts + 1,
      });
    }
    return Promise.resolve();
  }

  recordFailure(ids: number[], error: string, final: boolean): Promise<void> {
    const state = this.db.autocommit('deliveries.recordFailure');
    for (const id of ids) {
      const row = state.deliveries.get(id);
      if (row?.status !== 'received') continue;
      Object.assign(row, {
        attempts: row.attempts + 1,
        lastError: error.slice(0, 2000),
        status: final ? 'failed' : row.status,
      });
    }
    return Promise.resolve();
  }

  markDeadLetter(ids: number[], error: string): Promise<number[]> {
    const state = this.db.autocommit('deliveries.markDeadLetter');
    const changed: number[] = [];
    for (const id of ids) {
      const row = state.deliveries.get(id);
      if (row?.status !== 'received') continue;
      Object.assign(row, { status: 'failed', lastError: error.slice(0, 2000) });
      changed.push(id);
    }
    return Promise.resolve(changed);
  }
}

/** events: once per dedupe key (the dedupe window is longer than any test), claims processed false → true. */
export class MemoryEvents implements ProcessingEvents {
  constructor(private readonly db: MemoryDatabase) {}

  all(): MemoryEvent[] {
    return this.db.state.events;
  }

  insert(tx: Tx, rows: EventRow[], at?: Date): Promise<Map<string, InsertedEvent>> {
    const state = this.db.within(tx, 'events.insert');
    const stored = new Set(state.events.map((e) => e.dedupeKey));
    const inserted = new Map<string, InsertedEvent>();
    // In dedupe key order, as the statement's DISTINCT ON … ORDER BY stores them.
    for (const row of [...rows].sort((a, b) => (a.dedupeKey < b.dedupeKey ? -1 : a.dedupeKey > b.dedupeKey ? 1 : 0))) {
      if (stored.has(row.dedupeKey)) continue;
      stored.add(row.dedupeKey);
      const createdAt = at ?? new Date();
      // A copy: the caller goes on using its drafts.
      const event: MemoryEvent = {
        ...structuredClone(row),
        id: this.db.nextId(),
        createdAt,
        processedAt: row.processed ? new Date() : null,
      };
      state.events.push(event);
      inserted.set(row.dedupeKey, { id: event.id, dedupeKey: row.dedupeKey, createdAt });
    }
    return Promise.resolve(inserted);
  }

  pendingOf(deliveryIds: number[], since: Date): Promise<StoredEvent[]> {
    const ids = new Set(deliveryIds);
    const rows = this.db
      .autocommit('events.pendingOf')
      .events.filter((e) => ids.has(e.deliveryId) && !e.processed && e.createdAt >= since)
      .sort((a, b) => a.id - b.id)
      .map((e): StoredEvent => ({
        id: e.id,
        deliveryId: e.deliveryId,
        wabaId: e.wabaId,
        phoneNumberId: e.phoneNumberId,
        eventType: e.eventType,
        kind: e.kind,
        status: e.status,
        recipient: e.recipient,
        userId: e.userId,
        messageId: e.messageId,
        upstreamTimestamp: e.upstreamTimestamp,
        errorCode: e.errorCode,
        errorTitle: e.errorTitle,
        errorDetail: e.errorDetail,
        // JSON columns: what PostgreSQL gives back is a copy of what was stored.
        raw: structuredClone(e.raw) as StoredEvent['raw'],
        pricing: structuredClone(e.pricing) as StoredEvent['pricing'],
        createdAt: e.createdAt,
      }));
    return Promise.resolve(rows);
  }

  claim(tx: Tx, events: StoredRef[]): Promise<Set<number>> {
    const state = this.db.within(tx, 'events.claim');
    const ids = new Set(events.map((e) => e.id));
    const claimed = new Set<number>();
    for (const e of state.events) {
      if (!ids.has(e.id) || e.processed) continue;
      Object.assign(e, { processed: true, processedAt: new Date() });
      claimed.add(e.id);
    }
    return Promise.resolve(claimed);
  }

  countWait(tx: Tx, events: StoredRef[]): Promise<void> {
    const state = this.db.within(tx, 'events.countWait');
    const ids = new Set(events.map((e) => e.id));
    for (const e of state.events) if (ids.has(e.id) && !e.processed) e.attempts++;
    return Promise.resolve();
  }
}

/** messages: outbound ones as the send path leaves them, inbound ones once per wamid. */
export class MemoryMessages implements StatusMessages, InboundMessages {
  constructor(private readonly db: MemoryDatabase) {}

  /**
   * An outbound message of the account as the send path stores it: `pending` without a wamid until the send
   * response is stored (`markSent`), or already `sent` with one.
   */
  outbound(wabaId: string, over: Partial<StatusCandidate> = {}): MemoryMessage {
    const id = this.db.nextId();
    const message: MemoryMessage = { ...this.blank(id, wabaId), type: 'template', ...over };
    this.db.autocommit('messages.insertPending').messages.set(id, message);
    return message;
  }

  /** The send response stored: `sent` with Meta's wamid (the send path's pending → sent write). */
  markSent(id: number, wamid: string, at = new Date()): void {
    const message = this.db.autocommit('messages.markSent').messages.get(id);
    if (!message) throw new Error(`no message ${id}`);
    Object.assign(message, {
      upstreamMessageId: wamid,
      status: message.status === 'pending' ? 'sent' : message.status,
      sentAt: message.sentAt ?? at,
    });
  }

  get(id: number): MemoryMessage | undefined {
    return this.db.state.messages.get(id);
  }

  inbound(): MemoryMessage[] {
    return [...this.db.state.messages.values()].filter((m) => m.direction === 'inbound');
  }

  lockForStatuses(tx: Tx, wamids: string[], callbackMessageIds: number[]): Promise<StatusCandidate[]> {
    const state = this.db.within(tx, 'messages.lockForStatuses');
    const byWamid = new Set(wamids);
    const byId = new Set(callbackMessageIds);
    const rows = [...state.messages.values()]
      .filter(
        (m) =>
          (m.upstreamMessageId !== null && byWamid.has(m.upstreamMessageId)) ||
          (m.upstreamMessageId === null && byId.has(m.id)),
      )
      .sort((a, b) => a.id - b.id)
      .map((m): StatusCandidate => without(m, 'direction', 'phoneNumberId', 'from', 'userId', 'type', 'content'));
    return Promise.resolve(rows);
  }

  writeStatuses(tx: Tx, changed: StatusCandidate[]): Promise<void> {
    const state = this.db.within(tx, 'messages.writeStatuses');
    for (const c of changed) {
      const message = state.messages.get(c.id);
      // The columns the UPDATE sets (the business account is not one of them).
      if (message) Object.assign(message, structuredClone({ ...c, wabaId: message.wabaId }));
    }
    return Promise.resolve();
  }

  insertInbound(tx: Tx, rows: InboundMessageRow[]): Promise<number> {
    const state = this.db.within(tx, 'messages.insertInbound');
    const wamids = new Set([...state.messages.values()].map((m) => m.upstreamMessageId));
    let inserted = 0;
    for (const row of rows) {
      // Only for an account connected here (the statement joins business_accounts), once per wamid.
      if (!state.accounts.has(row.wabaId) || (row.wamid !== null && wamids.has(row.wamid))) continue;
      wamids.add(row.wamid);
      const id = this.db.nextId();
      state.messages.set(id, {
        ...this.blank(id, row.wabaId),
        direction: 'inbound',
        status: 'received',
        upstreamMessageId: row.wamid,
        phoneNumberId: row.phoneNumberId,
        from: row.from,
        userId: row.userId,
        type: row.type,
        content: structuredClone(row.content),
      });
      inserted++;
    }
    return Promise.resolve(inserted);
  }

  followUsers(tx: Tx, changes: UserIdChange[]): Promise<void> {
    const state = this.db.within(tx, 'messages.followUsers');
    for (const c of changes)
      for (const m of state.messages.values()) if (m.wabaId === c.wabaId && m.userId === c.previous) m.userId = c.next;
    return Promise.resolve();
  }

  private blank(id: number, wabaId: string): MemoryMessage {
    return {
      id,
      wabaId,
      upstreamMessageId: null,
      status: 'pending',
      errorCategory: null,
      errorCode: null,
      errorTitle: null,
      errorDetail: null,
      sentAt: null,
      deliveredAt: null,
      readAt: null,
      failedAt: null,
      pricingModel: null,
      pricingCategory: null,
      pricingType: null,
      pricingBillable: null,
      direction: 'outbound',
      phoneNumberId: null,
      from: null,
      userId: null,
      type: 'text',
      content: {},
    };
  }
}

/** conversation_windows: one per (business number, customer); a late older message never shortens it. */
export class MemoryWindows implements InboundWindows {
  constructor(private readonly db: MemoryDatabase) {}

  lastInbound(phoneNumberId: string, recipient: string): Date | undefined {
    return this.db.state.windows.get(key(phoneNumberId, recipient))?.lastInboundAt;
  }

  followUsers(tx: Tx, changes: UserIdChange[]): Promise<void> {
    const state = this.db.within(tx, 'windows.followUsers');
    for (const c of changes)
      for (const w of [...state.windows.values()]) {
        if (w.wabaId !== c.wabaId || w.recipient !== c.previous) continue;
        const k = key(w.phoneNumberId, c.next);
        const open = state.windows.get(k);
        if (!open || open.lastInboundAt < w.lastInboundAt) state.windows.set(k, { ...w, recipient: c.next });
      }
    return Promise.resolve();
  }

  openOrRenew(tx: Tx, contacts: InboundContact[]): Promise<void> {
    const state = this.db.within(tx, 'windows.openOrRenew');
    for (const c of contacts) {
      const k = key(c.phoneNumberId, c.recipient);
      const open = state.windows.get(k);
      state.windows.set(k, {
        phoneNumberId: c.phoneNumberId,
        recipient: c.recipient,
        wabaId: c.wabaId,
        lastInboundAt: open && open.lastInboundAt > c.at ? open.lastInboundAt : c.at,
      });
    }
    return Promise.resolve();
  }
}

/** templates: synced copies; a webhook's decision older than the stored one changes nothing. */
export class MemoryTemplates implements TemplateDecisions {
  constructor(private readonly db: MemoryDatabase) {}

  /** A template as a sync stores it. */
  synced(wabaId: string, name: string, language: string, over: { status?: string; category?: string } = {}): void {
    this.db.autocommit('templates.sync').templates.set(key(wabaId, name, language), {
      wabaId,
      name,
      language,
      status: over.status ?? 'APPROVED',
      statusReason: null,
      statusUpdatedAt: null,
      category: over.category ?? 'UTILITY',
      categoryUpdatedAt: null,
      qualityScore: null,
      qualityUpdatedAt: null,
    });
  }

  get(wabaId: string, name: string, language: string) {
    return this.db.state.templates.get(key(wabaId, name, language));
  }

  applyDecisions(tx: Tx, decisions: TemplateDecision[]): Promise<void> {
    const state = this.db.within(tx, 'templates.applyDecisions');
    for (const d of decisions) {
      const t = state.templates.get(key(d.wabaId, d.name, d.language));
      if (!t) continue;
      if (d.status !== undefined && (t.statusUpdatedAt === null || t.statusUpdatedAt <= d.at))
        Object.assign(t, { status: d.status, statusReason: d.reason ?? null, statusUpdatedAt: d.at });
      else if (d.category !== undefined && (t.categoryUpdatedAt === null || t.categoryUpdatedAt <= d.at))
        Object.assign(t, { category: d.category, categoryUpdatedAt: d.at });
      else if (d.qualityScore !== undefined && (t.qualityUpdatedAt === null || t.qualityUpdatedAt <= d.at))
        Object.assign(t, { qualityScore: d.qualityScore, qualityUpdatedAt: d.at });
    }
    return Promise.resolve();
  }
}

/** business_accounts: the account's standing with Meta, and its onboarding to marketing messages. */
export class MemoryAccounts implements AccountStandings {
  constructor(private readonly db: MemoryDatabase) {}

  /** A business account connected here (its id is the wabaId's, for reading convenience). */
  connect(wabaId: string): void {
    this.db.autocommit('accounts.connect').accounts.set(wabaId, {
      id: `ba-${wabaId}`,
      wabaId,
      banState: null,
      banDate: null,
      restrictions: [],
      violationType: null,
      pricingTiers: [],
      alerts: [],
      updatedAt: null,
      times: {},
      marketingMessagesOnboardedAt: null,
    });
  }

  get(wabaId: string) {
    return this.db.state.accounts.get(wabaId);
  }

  lockStandings(tx: Tx, wabaIds: string[]): Promise<LockedStanding[]> {
    const state = this.db.within(tx, 'accounts.lockStandings');
    const rows = wabaIds
      .flatMap((w) => state.accounts.get(w) ?? [])
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((a): LockedStanding => without(a, 'marketingMessagesOnboardedAt'));
    return Promise.resolve(rows);
  }

  writeStandings(tx: Tx, standings: LockedStanding[]): Promise<void> {
    const state = this.db.within(tx, 'accounts.writeStandings');
    for (const s of standings) {
      const account = [...state.accounts.values()].find((a) => a.id === s.id);
      if (account) Object.assign(account, structuredClone({ ...s, wabaId: account.wabaId }));
    }
    return Promise.resolve();
  }

  markMarketingMessagesOnboarded(tx: Tx, onboarded: { wabaId: string; at: Date }[]): Promise<void> {
    const state = this.db.within(tx, 'accounts.markMarketingMessagesOnboarded');
    for (const o of onboarded) {
      const account = state.accounts.get(o.wabaId);
      if (account && (account.marketingMessagesOnboardedAt === null || account.marketingMessagesOnboardedAt <= o.at))
        account.marketingMessagesOnboardedAt = o.at;
    }
    return Promise.resolve();
  }
}

/** phone_numbers, by display number (the account-level webhooks name numbers by it). */
export class MemoryNumbers implements NumberUpdates {
  constructor(private readonly db: MemoryDatabase) {}

  synced(wabaId: string, displayDigits: string, status = 'CONNECTED'): void {
    this.db.autocommit('numbers.sync').numbers.set(key(wabaId, displayDigits), {
      wabaId,
      displayDigits,
      status,
      messagingLimit: null,
      qualityRating: 'GREEN',
      throughputLevel: 'STANDARD',
      nameStatus: null,
      verifiedName: null,
      qualityUpdatedAt: null,
      nameUpdatedAt: null,
    });
  }

  get(wabaId: string, displayDigits: string) {
    return this.db.state.numbers.get(key(wabaId, displayDigits));
  }

  applyQualityUpdates(tx: Tx, updates: NumberQualityUpdate[]): Promise<void> {
    const state = this.db.within(tx, 'numbers.applyQualityUpdates');
    for (const u of updates) {
      const n = state.numbers.get(key(u.wabaId, u.displayDigits));
      if (!n || (n.qualityUpdatedAt !== null && n.qualityUpdatedAt > u.at)) continue;
      Object.assign(n, {
        messagingLimit: u.messagingLimit ?? n.messagingLimit,
        status:
          u.flag === 'FLAGGED' ? 'FLAGGED' : u.flag === 'UNFLAGGED' && n.status === 'FLAGGED' ? 'CONNECTED' : n.status,
        qualityRating: u.qualityRating ?? n.qualityRating,
        throughputLevel: u.throughputLevel ?? n.throughputLevel,
        qualityUpdatedAt: u.at,
      });
    }
    return Promise.resolve();
  }

  applyNameDecisions(tx: Tx, decisions: NumberNameDecision[]): Promise<void> {
    const state = this.db.within(tx, 'numbers.applyNameDecisions');
    for (const d of decisions) {
      const n = state.numbers.get(key(d.wabaId, d.displayDigits));
      if (!n || (n.nameUpdatedAt !== null && n.nameUpdatedAt > d.at)) continue;
      Object.assign(n, {
        nameStatus: d.nameStatus,
        verifiedName: d.verifiedName ?? n.verifiedName,
        nameUpdatedAt: d.at,
      });
    }
    return Promise.resolve();
  }
}

/** marketing_preferences: per (business account, user), the newest change wins. */
export class MemoryPreferences implements PreferenceChanges, RunnerPreferences {
  constructor(private readonly db: MemoryDatabase) {}

  get(wabaId: string, user: string): MarketingPreferenceChange | undefined {
    return this.db.state.preferences.get(key(wabaId, user));
  }

  followUsers(tx: Tx, changes: UserIdChange[]): Promise<void> {
    const state = this.db.within(tx, 'preferences.followUsers');
    for (const c of changes) {
      const previous = state.preferences.get(key(c.wabaId, c.previous));
      const next = state.preferences.get(key(c.wabaId, c.next));
      if (previous && (!next || next.at < previous.at))
        state.preferences.set(key(c.wabaId, c.next), { ...structuredClone(previous), user: c.next });
    }
    return Promise.resolve();
  }

  record(tx: Tx, changes: MarketingPreferenceChange[]): Promise<void> {
    const state = this.db.within(tx, 'preferences.record');
    for (const c of changes) {
      if (!state.accounts.has(c.wabaId)) continue;
      const k = key(c.wabaId, c.user);
      const stored = state.preferences.get(k);
      if (!stored || stored.at <= c.at) state.preferences.set(k, structuredClone(c));
    }
    return Promise.resolve();
  }

  /** Those of `users` whose latest preference on the account is `stop` (a campaign's claim, in its transaction). */
  stoppedAmong(tx: Tx, businessAccountId: string, users: string[]): Promise<Set<string>> {
    const state = this.db.within(tx, 'preferences.stoppedAmong');
    const wabaId = wabaOf(state, businessAccountId) ?? '';
    return Promise.resolve(new Set(users.filter((u) => state.preferences.get(key(wabaId, u))?.value === 'stop')));
  }
}

/** blocked_users: per (business account, phone number, user). */
export class MemoryBlocked implements BlockedUserMoves, RunnerBlocked {
  constructor(private readonly db: MemoryDatabase) {}

  block(wabaId: string, phoneNumberId: string, user: string): void {
    this.db.autocommit('blocked.add').blocked.add(key(wabaId, key(phoneNumberId, user)));
  }

  isBlocked(wabaId: string, phoneNumberId: string, user: string): boolean {
    return this.db.state.blocked.has(key(wabaId, key(phoneNumberId, user)));
  }

  /** Those of `users` blocked on the number (a campaign's claim, in its transaction). */
  blockedAmong(tx: Tx, businessAccountId: string, phoneNumberId: string, users: string[]): Promise<Set<string>> {
    const state = this.db.within(tx, 'blocked.blockedAmong');
    const wabaId = wabaOf(state, businessAccountId) ?? '';
    return Promise.resolve(new Set(users.filter((u) => state.blocked.has(key(wabaId, key(phoneNumberId, u))))));
  }

  followUsers(tx: Tx, changes: UserIdChange[]): Promise<void> {
    const state = this.db.within(tx, 'blocked.followUsers');
    for (const c of changes)
      for (const k of [...state.blocked]) {
        const [wabaId, phoneNumberId, user] = k.split('\u0000');
        if (wabaId === c.wabaId && user === c.previous) state.blocked.add(key(wabaId, key(phoneNumberId!, c.next)));
      }
    return Promise.resolve();
  }
}
