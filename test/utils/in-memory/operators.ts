import { randomUUID } from 'node:crypto';
import type { IssuedSession } from '../../../src/auth/sessions/sessions.service.js';
import type { Invitation } from '../../../src/console/invitations/invitations.repository.js';
import type { ThrottleBudget } from '../../../src/console/operators/login-throttle.js';
import type {
  InvitationClaims,
  NewOrganizations,
  OperatorRows,
  OperatorSessions,
  ResetLinks,
  SignupBudget,
} from '../../../src/console/operators/operators.ports.js';
import type {
  Operator,
  OperatorRole,
  OperatorWithOrganization,
} from '../../../src/console/operators/operators.repository.js';
import type { PasswordReset } from '../../../src/console/operators/password-resets.repository.js';
import { randomToken, sha256Hex } from '../../../src/core/crypto/tokens.js';
import type { Budget, TakeResult } from '../../../src/core/redis/attempt-budget.js';
import type { Organization } from '../../../src/organizations/organizations.repository.js';
import type { MemoryDatabase, MemorySession } from './memory-database.js';

/*
 * In-memory stand-ins of what OperatorsService uses, over one MemoryDatabase (so a failed unit of work puts every
 * row back), with the rules their SQL keeps: one operator per email (the unique index decides between racing
 * signups), an invitation or a reset link claimed once, only while neither revoked nor expired, a password hash
 * replaced only if it is still the one read. The statements themselves are tested against PostgreSQL in test/medium.
 * The attempt budgets are Redis's, kept here as the Lua scripts keep them.
 */

/** What an update of a row that is not there does (`executeTakeFirstOrThrow`). */
const noResult = (statement: string) => new Error(`${statement}: no result`);

/** organizations. */
export class MemoryOrganizations implements NewOrganizations {
  constructor(private readonly db: MemoryDatabase) {}

  get(id: string): Organization | undefined {
    return this.db.state.console.organizations.get(id);
  }

  all(): Organization[] {
    return [...this.db.state.console.organizations.values()];
  }

  create(name: string): Promise<Organization> {
    const row: Organization = {
      id: randomUUID(),
      name,
      createdAt: new Date(),
      contentRetentionDays: null,
      contentScrubbedThrough: null,
    };
    this.db.autocommit('organizations.create').console.organizations.set(row.id, row);
    return Promise.resolve(structuredClone(row));
  }
}

/** operators, read with their organization's name as the repository joins it. */
export class MemoryOperators implements OperatorRows {
  constructor(private readonly db: MemoryDatabase) {}

  get(id: string): Operator | undefined {
    return this.db.state.console.operators.get(id);
  }

  byEmail(email: string): Operator | undefined {
    return [...this.db.state.console.operators.values()].find((o) => o.email === email);
  }

  /** ON CONFLICT (email) DO NOTHING: null when the email is registered, in whichever organization. */
  async create(
    organizationId: string,
    operator: { email: string; passwordHash: string; role: OperatorRole },
  ): Promise<OperatorWithOrganization | null> {
    const { operators } = this.db.autocommit('operators.create').console;
    if (this.byEmail(operator.email)) return null;
    const row: Operator = {
      id: randomUUID(),
      organizationId,
      email: operator.email,
      passwordHash: operator.passwordHash,
      role: operator.role,
      lastLoginAt: null,
      removedAt: null,
      platformAdmin: false,
      createdAt: new Date(),
    };
    operators.set(row.id, row);
    return this.findById(row.id);
  }

  findByEmail(email: string): Promise<OperatorWithOrganization | null> {
    this.db.autocommit('operators.findByEmail');
    return Promise.resolve(this.withOrganization(this.byEmail(email)));
  }

  findById(id: string): Promise<OperatorWithOrganization | null> {
    this.db.autocommit('operators.findById');
    return Promise.resolve(this.withOrganization(this.get(id)));
  }

  /** Of the organization, and not removed. */
  findMember(organizationId: string, id: string): Promise<Operator | null> {
    const row = this.db.autocommit('operators.findMember').console.operators.get(id);
    return Promise.resolve(row?.organizationId === organizationId && !row.removedAt ? structuredClone(row) : null);
  }

  recordLogin(id: string, at: Date): Promise<void> {
    return this.update('operators.recordLogin', id, { lastLoginAt: at });
  }

  /** Only if the hash is still `from`: whether it was replaced. */
  replacePasswordHash(id: string, from: string, to: string): Promise<boolean> {
    const row = this.db.autocommit('operators.replacePasswordHash').console.operators.get(id);
    if (row?.passwordHash !== from) return Promise.resolve(false);
    row.passwordHash = to;
    return Promise.resolve(true);
  }

  setPasswordHash(id: string, passwordHash: string): Promise<void> {
    return this.update('operators.setPasswordHash', id, { passwordHash });
  }

  async upgradePasswordHash(id: string, from: string, to: string): Promise<void> {
    await this.replacePasswordHash(id, from, to);
  }

  private update(statement: string, id: string, changes: Partial<Operator>): Promise<void> {
    const row = this.db.autocommit(statement).console.operators.get(id);
    if (!row) return Promise.reject(noResult(statement));
    Object.assign(row, changes);
    return Promise.resolve();
  }

  /** The inner join with organizations: an operator whose organization is not stored is not found. */
  private withOrganization(row: Operator | undefined): OperatorWithOrganization | null {
    const organization = row && this.db.state.console.organizations.get(row.organizationId);
    if (!row || !organization) return null;
    return { ...structuredClone(row), organization: { id: organization.id, name: organization.name } };
  }
}

/** invitations: found by the hash of their token, claimed once. */
export class MemoryInvitations implements InvitationClaims {
  constructor(private readonly db: MemoryDatabase) {}

  get(id: string): Invitation | undefined {
    return this.db.state.console.invitations.get(id);
  }

  /** An invitation an owner sent (InvitationsService's row); its token, as the link carries it. */
  sent(
    organizationId: string,
    invitation: { email: string; role: OperatorRole; invitedById: string; expiresAt?: Date },
  ): { token: string; invitation: Invitation } {
    const token = randomToken(32, 'inv_');
    const row: Invitation = {
      id: randomUUID(),
      organizationId,
      email: invitation.email,
      role: invitation.role,
      tokenHash: sha256Hex(token),
      invitedById: invitation.invitedById,
      expiresAt: invitation.expiresAt ?? new Date(Date.now() + 7 * 24 * 3600 * 1000),
      acceptedAt: null,
      acceptedById: null,
      revokedAt: null,
      createdAt: new Date(),
    };
    this.db.autocommit('invitations.create').console.invitations.set(row.id, row);
    return { token, invitation: structuredClone(row) };
  }

  revoke(id: string, at = new Date()): void {
    const row = this.get(id);
    if (row) row.revokedAt = at;
  }

  findByTokenHash(tokenHash: string): Promise<Invitation | null> {
    const { invitations } = this.db.autocommit('invitations.findByTokenHash').console;
    const row = [...invitations.values()].find((i) => i.tokenHash === tokenHash);
    return Promise.resolve(row ? structuredClone(row) : null);
  }

  claim(id: string, operatorId: string, at: Date): Promise<boolean> {
    const row = this.db.autocommit('invitations.claim').console.invitations.get(id);
    if (!row || row.acceptedAt || row.revokedAt || row.expiresAt <= at) return Promise.resolve(false);
    Object.assign(row, { acceptedAt: at, acceptedById: operatorId });
    return Promise.resolve(true);
  }
}

/** password_resets: found by the hash of their token, claimed once. */
export class MemoryPasswordResets implements ResetLinks {
  constructor(private readonly db: MemoryDatabase) {}

  get(id: string): PasswordReset | undefined {
    return this.db.state.console.passwordResets.get(id);
  }

  /** A link an owner issued for the operator (the reset-link use case's row); its token, as the link carries it. */
  issued(
    organizationId: string,
    reset: { operatorId: string; issuedById: string; expiresAt?: Date },
  ): { token: string; reset: PasswordReset } {
    const token = randomToken(32, 'pwr_');
    const row: PasswordReset = {
      id: randomUUID(),
      organizationId,
      operatorId: reset.operatorId,
      tokenHash: sha256Hex(token),
      issuedById: reset.issuedById,
      expiresAt: reset.expiresAt ?? new Date(Date.now() + 24 * 3600 * 1000),
      usedAt: null,
      revokedAt: null,
      createdAt: new Date(),
    };
    this.db.autocommit('password_resets.create').console.passwordResets.set(row.id, row);
    return { token, reset: structuredClone(row) };
  }

  findByTokenHash(tokenHash: string): Promise<PasswordReset | null> {
    const { passwordResets } = this.db.autocommit('password_resets.findByTokenHash').console;
    const row = [...passwordResets.values()].find((r) => r.tokenHash === tokenHash);
    return Promise.resolve(row ? structuredClone(row) : null);
  }

  claim(id: string, at: Date): Promise<boolean> {
    const row = this.db.autocommit('password_resets.claim').console.passwordResets.get(id);
    if (!row || row.usedAt || row.revokedAt || row.expiresAt <= at) return Promise.resolve(false);
    row.usedAt = at;
    return Promise.resolve(true);
  }

  /** Every unused, unrevoked link of the operator: how many. */
  revokeAllOf(organizationId: string, operatorId: string, at: Date): Promise<number> {
    let revoked = 0;
    for (const row of this.db.autocommit('password_resets.revokeAllOf').console.passwordResets.values()) {
      if (row.organizationId !== organizationId || row.operatorId !== operatorId || row.usedAt || row.revokedAt)
        continue;
      row.revokedAt = at;
      revoked++;
    }
    return Promise.resolve(revoked);
  }
}

/** Console sessions (SessionsService over sessions): issued with a token whose hash is stored, revoked together. */
export class MemorySessions implements OperatorSessions {
  constructor(
    private readonly db: MemoryDatabase,
    private readonly absoluteTtlSeconds = 12 * 3600,
  ) {}

  /** The session a token opened. */
  of(token: string): MemorySession | undefined {
    return [...this.db.state.console.sessions.values()].find((s) => s.tokenHash === sha256Hex(token));
  }

  /** The operator's sessions not revoked. */
  live(operatorId: string): MemorySession[] {
    return [...this.db.state.console.sessions.values()].filter((s) => s.operatorId === operatorId && !s.revokedAt);
  }

  issue(operatorId: string): Promise<IssuedSession> {
    const token = randomToken(32);
    const expiresAt = new Date(Date.now() + this.absoluteTtlSeconds * 1000);
    const id = randomUUID();
    this.db
      .autocommit('sessions.create')
      .console.sessions.set(id, { id, operatorId, tokenHash: sha256Hex(token), expiresAt, revokedAt: null });
    return Promise.resolve({ token, expiresAt });
  }

  /** Every live session of the operator but `except` (the caller's own, when given): how many ended. */
  revokeAllOf(operatorId: string, except?: string): Promise<number> {
    const at = new Date();
    let ended = 0;
    for (const s of this.db.autocommit('sessions.revokeAllOf').console.sessions.values()) {
      if (s.operatorId !== operatorId || s.revokedAt || (except && s.id === except)) continue;
      s.revokedAt = at;
      ended++;
    }
    return Promise.resolve(ended);
  }
}

/**
 * AttemptBudget's counters (Redis), as its Lua scripts keep them: fixed windows that start at a key's first
 * attempt; a take counts on every key or on none (and names the first full one and its time left); a give-back
 * lowers each key still above 0. `advance` moves the clock; `unavailable` makes every call reject as with Redis down.
 */
export class MemoryAttemptBudget implements ThrottleBudget, SignupBudget {
  private readonly counters = new Map<string, { used: number; expiresAt: number }>();
  private readonly marks = new Map<string, number>();
  private skewMs = 0;
  unavailable = false;

  advance(seconds: number): void {
    this.skewMs += seconds * 1000;
  }

  /** Attempts counted on `key` in its current window. */
  used(key: string): number {
    return this.live(key)?.used ?? 0;
  }

  take(budgets: Budget[], windowSeconds: number): Promise<TakeResult> {
    if (this.unavailable) return Promise.reject(new Error('Redis not ready'));
    for (const b of budgets) {
      const counter = this.live(b.key);
      if ((counter?.used ?? 0) >= b.limit)
        return Promise.resolve({
          taken: false,
          exhausted: b.key,
          retryAfterSeconds: Math.max(1, Math.ceil(((counter?.expiresAt ?? 0) - this.now()) / 1000)),
        });
    }
    for (const b of budgets) {
      const counter = this.live(b.key) ?? { used: 0, expiresAt: this.now() + windowSeconds * 1000 };
      counter.used++;
      this.counters.set(b.key, counter);
    }
    return Promise.resolve({ taken: true });
  }

  giveBack(keys: string[]): Promise<void> {
    if (this.unavailable) return Promise.reject(new Error('Redis not ready'));
    for (const key of keys) {
      const counter = this.live(key);
      if (counter && counter.used > 0) counter.used--;
    }
    return Promise.resolve();
  }

  isMarked(key: string): Promise<boolean> {
    if (this.unavailable) return Promise.reject(new Error('Redis not ready'));
    return Promise.resolve((this.marks.get(key) ?? 0) > this.now());
  }

  mark(key: string, ttlSeconds: number): Promise<void> {
    if (this.unavailable) return Promise.reject(new Error('Redis not ready'));
    this.marks.set(key, this.now() + ttlSeconds * 1000);
    return Promise.resolve();
  }

  private now(): number {
    return Date.now() + this.skewMs;
  }

  private live(key: string): { used: number; expiresAt: number } | undefined {
    const counter = this.counters.get(key);
    if (counter && counter.expiresAt <= this.now()) {
      this.counters.delete(key);
      return undefined;
    }
    return counter;
  }
}
