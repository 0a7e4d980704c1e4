import { AsyncLocalStorage } from 'node:async_hooks';
import type { LockedStanding } from '../../../src/accounts/business-accounts/business-accounts.repository.js';
import type { MarketingPreferenceChange } from '../../../src/accounts/users/marketing-preferences.repository.js';
import type { Tx } from '../../../src/core/db/db.js';
import type { CampaignRow } from '../../../src/campaigns/campaigns.repository.js';
import type { StatusCandidate, StoredMessage } from '../../../src/messages/messages.repository.js';
import type { ProcessingUnitOfWork } from '../../../src/webhooks/processing/processing.ports.js';
import type { EventRow } from '../../../src/events/events.repository.js';

/** A composite key of a table kept in a Map (the columns of its unique key, in order). */
export const key = (...parts: string[]) => parts.join('\u0000');

/** PostgreSQL keeps JSON as jsonb: what comes back is what JSON.stringify made of it. */
export const asJsonb = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

export interface MemoryDelivery {
  id: number;
  status: 'received' | 'processed' | 'failed';
  rawBody: Uint8Array;
  receivedAt: Date;
  eventCount: number | null;
  attempts: number;
  lastError: string | null;
  processedAt: Date | null;
}

export type MemoryEvent = EventRow & { id: number; createdAt: Date; processedAt: Date | null };

/** A business account: its standing (as lockStandings reads it) and whether it is onboarded to marketing messages. */
export type MemoryAccount = LockedStanding & { marketingMessagesOnboardedAt: Date | null };

/** A message row: the columns statuses change, and those of an inbound message. */
export type MemoryMessage = StatusCandidate & {
  direction: 'outbound' | 'inbound';
  phoneNumberId: string | null;
  from: string | null;
  userId: string | null;
  type: string;
  content: unknown;
};

export interface MemoryWindow {
  phoneNumberId: string;
  recipient: string;
  wabaId: string;
  lastInboundAt: Date;
}

export interface MemoryTemplate {
  wabaId: string;
  name: string;
  language: string;
  status: string;
  statusReason: string | null;
  statusUpdatedAt: Date | null;
  category: string;
  categoryUpdatedAt: Date | null;
  qualityScore: string | null;
  qualityUpdatedAt: Date | null;
}

export interface MemoryNumber {
  wabaId: string;
  displayDigits: string;
  status: string;
  messagingLimit: string | null;
  qualityRating: string | null;
  throughputLevel: string | null;
  nameStatus: string | null;
  verifiedName: string | null;
  qualityUpdatedAt: Date | null;
  nameUpdatedAt: Date | null;
}

/** A campaign with its lease (the runner's columns, which CampaignRow leaves out). */
export type MemoryCampaign = CampaignRow & { leaseOwner: string | null; leaseUntil: Date | null };

/** A campaign's recipient: its own state until claimed, then its (latest) message. */
export interface MemoryRecipient {
  id: number;
  campaignId: number;
  to: string | null;
  userId: string | null;
  components: unknown[] | null;
  state: 'pending' | 'claimed' | 'skipped' | 'cancelled';
  attempts: number;
  claimedBy: string | null;
  claimedAt: Date | null;
  skipReason: string | null;
  messageId: number | null;
}

/**
 * Every table the webhook pipeline and the campaign runner write, as plain data (so that a transaction can copy it
 * and put it back).
 */
export interface MemoryState {
  lastId: number;
  deliveries: Map<number, MemoryDelivery>;
  events: MemoryEvent[];
  accounts: Map<string, MemoryAccount>;
  messages: Map<number, MemoryMessage>;
  windows: Map<string, MemoryWindow>;
  templates: Map<string, MemoryTemplate>;
  numbers: Map<string, MemoryNumber>;
  preferences: Map<string, MarketingPreferenceChange>;
  /** blocked_users: (wabaId, phone number id, user) keys. */
  blocked: Set<string>;
  campaigns: Map<number, MemoryCampaign>;
  recipients: Map<number, MemoryRecipient>;
  /** The messages campaigns stored, whole rows (as MemorySends keeps the send path's). */
  campaignMessages: Map<number, StoredMessage>;
}

const emptyState = (): MemoryState => ({
  lastId: 0,
  deliveries: new Map(),
  events: [],
  accounts: new Map(),
  messages: new Map(),
  windows: new Map(),
  templates: new Map(),
  numbers: new Map(),
  preferences: new Map(),
  blocked: new Set(),
  campaigns: new Map(),
  recipients: new Map(),
  campaignMessages: new Map(),
});

/**
 * The in-memory database of the service tier: the rows of every in-memory repository, and transactions with
 * PostgreSQL's all-or-nothing rule (a failed unit of work puts every table back as it was at BEGIN). The unit of
 * work (`run`) hands out an opaque Tx; a repository given a Tx that is not the open one (used after its commit,
 * or made up) throws, as a statement on a released connection would. Units of work run one at a time: one that
 * starts while another is open waits for it (the campaign runner's claims and result writes overlap; PostgreSQL's
 * row locks order them), and a rollback puts back the tables as at its BEGIN, so a fault test keeps other work
 * from writing meanwhile. A `run` inside a `run` throws (UnitOfWork would join the outer one; none of the services
 * tested here nests them).
 */
export class MemoryDatabase implements ProcessingUnitOfWork {
  state = emptyState();
  private open: Tx | null = null;
  private readonly inside = new AsyncLocalStorage<Tx>();
  private turn: Promise<unknown> = Promise.resolve();
  private readonly faults = new Map<string, { calls: number; error: Error }>();
  /** Transactions committed and rolled back so far. */
  readonly transactions = { committed: 0, rolledBack: 0 };

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.inside.getStore()) return Promise.reject(new Error('MemoryDatabase: a unit of work run inside another'));
    const result = this.turn.then(() => this.transaction(work));
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const before = structuredClone(this.state);
    // An opaque token, as UnitOfWork hands out a connection the services cannot query on.
    const tx = Object.freeze({
      transaction: this.transactions.committed + this.transactions.rolledBack + 1,
    }) as unknown as Tx;
    this.open = tx;
    try {
      const result = await this.inside.run(tx, () => work(tx));
      this.transactions.committed++;
      return result;
    } catch (err) {
      this.state = before;
      this.transactions.rolledBack++;
      throw err;
    } finally {
      this.open = null;
    }
  }

  /** The tables, for a repository method that writes in the caller's transaction. */
  within(tx: Tx, statement: string): MemoryState {
    if (tx !== this.open) throw new Error(`MemoryDatabase: ${statement} was given a transaction that is not open`);
    this.hit(statement);
    return this.state;
  }

  /** The tables, for a statement outside any transaction (autocommit). */
  autocommit(statement: string): MemoryState {
    this.hit(statement);
    return this.state;
  }

  nextId(): number {
    return ++this.state.lastId;
  }

  /** The `nth` call from now of `statement` (e.g. 'messages.writeStatuses') throws `error`, as a statement PostgreSQL refused. */
  failAt(statement: string, nth = 1, error: Error = new Error(`${statement} failed`)): void {
    this.faults.set(statement, { calls: nth, error });
  }

  private hit(statement: string): void {
    const fault = this.faults.get(statement);
    if (!fault || --fault.calls > 0) return;
    this.faults.delete(statement);
    throw fault.error;
  }
}
