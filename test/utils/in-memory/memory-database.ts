import { AsyncLocalStorage } from 'node:async_hooks';
import type {
  BusinessAccount,
  LockedStanding,
} from '../../../src/accounts/business-accounts/business-accounts.repository.js';
import type { MarketingPreferenceChange } from '../../../src/accounts/users/marketing-preferences.repository.js';
import type { Tx } from '../../../src/core/db/db.js';
import type { CampaignRow } from '../../../src/campaigns/campaigns.repository.js';
import type { StatusCandidate, StoredMessage } from '../../../src/messages/messages.repository.js';
import type { ProcessingUnitOfWork } from '../../../src/webhooks/processing/processing.ports.js';
import type { EventRow } from '../../../src/events/events.repository.js';
import type { AuditLogEntry } from '../../../src/audit/audit-logs.repository.js';
import type { Invitation } from '../../../src/console/invitations/invitations.repository.js';
import type { Operator } from '../../../src/console/operators/operators.repository.js';
import type { PasswordReset } from '../../../src/console/operators/password-resets.repository.js';
import type { Organization } from '../../../src/organizations/organizations.repository.js';

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

/** An api_keys row, as far as revoking a business account's keys reads it. */
export interface MemoryApiKey {
  id: string;
  businessAccountId: string;
  accessKey: string;
  revokedAt: Date | null;
}

/** An audit_logs row (details as jsonb keeps them). */
export type MemoryAuditEntry = AuditLogEntry & { organizationId: string };

/** A sessions row (the token only as its hash). */
export interface MemorySession {
  id: string;
  operatorId: string;
  tokenHash: string;
  expiresAt: Date;
  revokedAt: Date | null;
}

/** The console's tables (business accounts, operators and what they sign in with), whole rows by id. */
export interface MemoryConsoleTables {
  businessAccounts: Map<string, BusinessAccount>;
  apiKeys: Map<string, MemoryApiKey>;
  auditLogs: MemoryAuditEntry[];
  organizations: Map<string, Organization>;
  operators: Map<string, Operator>;
  invitations: Map<string, Invitation>;
  passwordResets: Map<string, PasswordReset>;
  sessions: Map<string, MemorySession>;
}

/** Every table the in-memory repositories write, as plain data (so that a transaction can copy it and put it back). */
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
  /** The console's tables (the service tier of the business-accounts and operators services). */
  console: MemoryConsoleTables;
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
  console: {
    businessAccounts: new Map(),
    apiKeys: new Map(),
    auditLogs: [],
    organizations: new Map(),
    operators: new Map(),
    invitations: new Map(),
    passwordResets: new Map(),
    sessions: new Map(),
  },
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
  private readonly others = new Map<string, (state: MemoryState) => void>();
  /** The tables as they were at BEGIN of the open transaction (what a rollback puts back). */
  private atBegin: MemoryState | null = null;
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
    this.atBegin = before;
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
      this.atBegin = null;
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

  /**
   * Another transaction commits `change` right before the next call of `statement` (e.g. another acceptance claims the
   * invitation this one read): a race lost between a read and a conditional write. What it changed stays even when the
   * transaction of `statement` rolls back. `change` gets the tables (twice inside a transaction: build rows in it).
   */
  meanwhile(statement: string, change: (state: MemoryState) => void): void {
    this.others.set(statement, change);
  }

  private hit(statement: string): void {
    const other = this.others.get(statement);
    if (other) {
      this.others.delete(statement);
      other(this.state);
      if (this.atBegin) other(this.atBegin);
    }
    const fault = this.faults.get(statement);
    if (!fault || --fault.calls > 0) return;
    this.faults.delete(statement);
    throw fault.error;
  }
}
