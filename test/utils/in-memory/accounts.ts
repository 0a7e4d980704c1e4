import { randomBytes, randomUUID } from 'node:crypto';
import type {
  AccountKeyRevocations,
  AccountRows,
  AccountSubscription,
  AccountUpstream,
  KeyCacheInvalidation,
} from '../../../src/accounts/business-accounts/business-accounts.ports.js';
import {
  BUSINESS_ACCOUNT_NOT_FOUND,
  type BusinessAccount,
  type VerifiedCredential,
} from '../../../src/accounts/business-accounts/business-accounts.repository.js';
import { NotFound } from '../../../src/core/errors/domain-errors.js';
import { skipTake } from '../../../src/core/rows/page.js';
import { UpstreamError } from '../../../src/upstream/upstream.error.js';
import type { UpstreamBusinessAccount } from '../../../src/upstream/upstream.types.js';
import type { MemoryApiKey, MemoryDatabase } from './memory-database.js';

/*
 * In-memory stand-ins of what BusinessAccountsService uses, over one MemoryDatabase (so a failed unit of work puts
 * every row back), with the rules their SQL keeps: one row per wabaId (the unique index decides between racing
 * connects), a takeover only of the account as it was read, and only while it is disconnected or its credentials
 * were rejected. The statements themselves are tested against PostgreSQL in test/medium.
 */

/** What an update of a row that is not there does (`executeTakeFirstOrThrow`). */
const noResult = (statement: string) => new Error(`${statement}: no result`);

/** The columns a verified token sets (the repository's `verified`). */
function verified(credential: VerifiedCredential): Partial<BusinessAccount> {
  return {
    accessTokenEncrypted: credential.accessTokenEncrypted,
    webhooksSubscribed: true,
    webhooksCheckedAt: credential.checkedAt,
    credentialsValid: true,
    credentialsError: null,
    credentialsCheckedAt: credential.checkedAt,
    readableUntil: null,
    ...(credential.marketingMessagesStatus !== undefined
      ? {
          marketingMessagesStatus: credential.marketingMessagesStatus,
          marketingMessagesUpdatedAt: credential.checkedAt,
        }
      : {}),
  };
}

/** A new row's columns before the statement's values: the table's defaults. */
function newAccount(organizationId: string, wabaId: string, name: string, at: Date): BusinessAccount {
  return {
    id: randomUUID(),
    organizationId,
    wabaId,
    name,
    accessTokenEncrypted: '',
    phoneNumbersSyncedAt: null,
    templatesSyncedAt: null,
    disconnectedAt: null,
    webhooksSubscribed: false,
    webhooksCheckedAt: null,
    credentialsValid: true,
    credentialsCheckedAt: null,
    credentialsError: null,
    heldSince: null,
    readableUntil: null,
    banState: null,
    banDate: null,
    restrictions: [],
    violationType: null,
    pricingTiers: [],
    alerts: [],
    standingUpdatedAt: null,
    standingTimes: {},
    marketingMessagesStatus: null,
    marketingMessagesUpdatedAt: null,
    createdAt: at,
    updatedAt: at,
  };
}

/** A business account as a connect stores it, with `changes` as later statements left them (not stored: see `stored`). */
export function accountRow(
  organizationId: string,
  wabaId: string,
  changes: Partial<Omit<BusinessAccount, 'id' | 'organizationId' | 'wabaId'>> = {},
): BusinessAccount {
  const at = new Date();
  return {
    ...newAccount(organizationId, wabaId, changes.name ?? `Account ${wabaId}`, at),
    accessTokenEncrypted: `sealed-token-of-${wabaId}`,
    webhooksSubscribed: true,
    webhooksCheckedAt: at,
    credentialsCheckedAt: at,
    ...changes,
  };
}

/** business_accounts, whole rows. */
export class MemoryBusinessAccounts implements AccountRows {
  constructor(private readonly db: MemoryDatabase) {}

  /** An account stored as a connect left it (for a test's starting state); `changes` as a later statement left them. */
  stored(
    organizationId: string,
    wabaId: string,
    changes: Partial<Omit<BusinessAccount, 'id' | 'organizationId' | 'wabaId'>> = {},
  ): BusinessAccount {
    const row = accountRow(organizationId, wabaId, changes);
    this.db.autocommit('business_accounts.create').console.businessAccounts.set(row.id, row);
    return structuredClone(row);
  }

  /** The row with this wabaId, as stored now. */
  get(wabaId: string): BusinessAccount | undefined {
    return [...this.db.state.console.businessAccounts.values()].find((a) => a.wabaId === wabaId);
  }

  getOwned(organizationId: string, wabaId: string): Promise<BusinessAccount> {
    this.db.autocommit('business_accounts.getOwned');
    const account = this.get(wabaId);
    if (account?.organizationId !== organizationId) return Promise.reject(new NotFound(BUSINESS_ACCOUNT_NOT_FOUND));
    return Promise.resolve(structuredClone(account));
  }

  async getConnected(organizationId: string, wabaId: string): Promise<BusinessAccount> {
    const account = await this.getOwned(organizationId, wabaId);
    if (account.disconnectedAt) throw new NotFound(BUSINESS_ACCOUNT_NOT_FOUND);
    return account;
  }

  page(
    organizationId: string,
    query: { page: number; limit: number },
  ): Promise<{ rows: BusinessAccount[]; total: number }> {
    const { businessAccounts } = this.db.autocommit('business_accounts.page').console;
    const all = [...businessAccounts.values()]
      .filter((a) => a.organizationId === organizationId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const { skip, take } = skipTake(query);
    return Promise.resolve({ rows: structuredClone(all.slice(skip, skip + take)), total: all.length });
  }

  /** Across organizations, as the statement reads it. */
  findAnyByWabaId(wabaId: string): Promise<BusinessAccount | null> {
    this.db.autocommit('business_accounts.findAnyByWabaId');
    const account = this.get(wabaId);
    return Promise.resolve(account ? structuredClone(account) : null);
  }

  /** ON CONFLICT (waba_id) DO NOTHING: null when the wabaId is taken, by whichever organization. */
  create(
    organizationId: string,
    account: { wabaId: string; name: string },
    credential: VerifiedCredential,
  ): Promise<BusinessAccount | null> {
    const { businessAccounts } = this.db.autocommit('business_accounts.create').console;
    if (this.get(account.wabaId)) return Promise.resolve(null);
    const row = { ...newAccount(organizationId, account.wabaId, account.name, new Date()), ...verified(credential) };
    businessAccounts.set(row.id, row);
    return Promise.resolve(structuredClone(row));
  }

  reconnect(
    organizationId: string,
    id: string,
    credential: VerifiedCredential,
    name?: string,
  ): Promise<BusinessAccount> {
    return this.updateOwned('business_accounts.reconnect', organizationId, id, {
      ...verified(credential),
      ...(name !== undefined ? { name } : {}),
      disconnectedAt: null,
    });
  }

  disconnect(organizationId: string, id: string, at: Date): Promise<BusinessAccount> {
    const readableUntil = this.db.state.console.businessAccounts.get(id)?.readableUntil ?? at;
    return this.updateOwned('business_accounts.disconnect', organizationId, id, { disconnectedAt: at, readableUntil });
  }

  /** Only the account as `from` read it (same holder, same token), still disconnected or with rejected credentials. */
  takeOver(
    organizationId: string,
    from: { id: string; organizationId: string; accessTokenEncrypted: string },
    credential: VerifiedCredential,
    name: string,
    at: Date,
  ): Promise<BusinessAccount | null> {
    const row = this.db.autocommit('business_accounts.takeOver').console.businessAccounts.get(from.id);
    const takeable =
      row?.organizationId === from.organizationId &&
      row.accessTokenEncrypted === from.accessTokenEncrypted &&
      (row.disconnectedAt !== null || !row.credentialsValid);
    if (!row || !takeable) return Promise.resolve(null);
    Object.assign(row, {
      organizationId,
      ...verified(credential),
      name,
      disconnectedAt: null,
      heldSince: at,
      updatedAt: new Date(),
    });
    return Promise.resolve(structuredClone(row));
  }

  private updateOwned(
    statement: string,
    organizationId: string,
    id: string,
    changes: Partial<BusinessAccount>,
  ): Promise<BusinessAccount> {
    const row = this.db.autocommit(statement).console.businessAccounts.get(id);
    if (row?.organizationId !== organizationId) return Promise.reject(noResult(statement));
    Object.assign(row, changes, { updatedAt: new Date() });
    return Promise.resolve(structuredClone(row));
  }
}

/** api_keys: a business account's key pairs, as far as revoking them goes. */
export class MemoryApiKeys implements AccountKeyRevocations {
  constructor(private readonly db: MemoryDatabase) {}

  /** A key pair of the account (its access key). */
  issue(businessAccountId: string): string {
    const key: MemoryApiKey = {
      id: randomUUID(),
      businessAccountId,
      accessKey: `ak_${randomBytes(8).toString('hex')}`,
      revokedAt: null,
    };
    this.db.autocommit('api_keys.create').console.apiKeys.set(key.id, key);
    return key.accessKey;
  }

  /** The account's access keys not revoked. */
  live(businessAccountId: string): string[] {
    return [...this.db.state.console.apiKeys.values()]
      .filter((k) => k.businessAccountId === businessAccountId && !k.revokedAt)
      .map((k) => k.accessKey);
  }

  revokeAllOf(businessAccountId: string, at: Date): Promise<string[]> {
    const revoked: string[] = [];
    for (const key of this.db.autocommit('api_keys.revokeAllOf').console.apiKeys.values()) {
      if (key.businessAccountId !== businessAccountId || key.revokedAt) continue;
      key.revokedAt = at;
      revoked.push(key.accessKey);
    }
    return Promise.resolve(revoked);
  }
}

/** The API-key authenticator's cache in this process: which access keys were dropped from it. */
export class MemoryKeyCache implements KeyCacheInvalidation {
  readonly invalidated: string[] = [];

  invalidate(accessKey: string): void {
    this.invalidated.push(accessKey);
  }
}

/** A WhatsApp Business Account as Meta holds it: its name, the tokens it accepts, its onboarding status. */
interface MetaAccount {
  name: string;
  tokens: Set<string>;
  marketingMessagesStatus?: string;
}

/**
 * Meta, as connecting an account meets it: `GET /{waba-id}` answers for a token it accepts for that account (as the
 * upstream client throws otherwise: 190 for a token it rejects, 100 for an account the token does not reach), and the
 * webhook subscription (WebhookSubscription.subscribe, which throws domain errors) succeeds unless told to fail.
 */
export class FakeMeta implements AccountUpstream, AccountSubscription {
  private readonly accounts = new Map<string, MetaAccount>();
  /** Accounts subscribed to, by token. */
  readonly subscriptions: { wabaId: string; token: string }[] = [];
  /** What the next `GET /{waba-id}` throws instead of answering (a transport failure, a blocked account). */
  nextReadFails: UpstreamError | null = null;
  /** What the subscription throws (WebhookSubscription's own domain errors) instead of subscribing. */
  subscriptionFails: Error | null = null;

  /** Meta knows the account and accepts `token` for it. */
  account(wabaId: string, token: string, opts: { name?: string; marketingMessagesStatus?: string } = {}): void {
    const known = this.accounts.get(wabaId);
    if (known) known.tokens.add(token);
    else
      this.accounts.set(wabaId, {
        name: opts.name ?? `Meta name of ${wabaId}`,
        tokens: new Set([token]),
        marketingMessagesStatus: opts.marketingMessagesStatus,
      });
  }

  getBusinessAccount(token: string, wabaId: string): Promise<UpstreamBusinessAccount> {
    const fails = this.nextReadFails;
    this.nextReadFails = null;
    if (fails) return Promise.reject(fails);
    const account = this.accounts.get(wabaId);
    if (![...this.accounts.values()].some((a) => a.tokens.has(token)))
      return Promise.reject(refusal(401, 190, 'Error validating access token: Session has expired'));
    if (!account?.tokens.has(token))
      return Promise.reject(
        refusal(400, 100, `Unsupported get request. Object with ID '${wabaId}' does not exist or lacks permission`),
      );
    return Promise.resolve({
      id: wabaId,
      name: account.name,
      ...(account.marketingMessagesStatus !== undefined
        ? { marketing_messages_onboarding_status: account.marketingMessagesStatus }
        : {}),
    });
  }

  subscribe(token: string, wabaId: string): Promise<void> {
    if (this.subscriptionFails) return Promise.reject(this.subscriptionFails);
    this.subscriptions.push({ wabaId, token });
    return Promise.resolve();
  }
}

/** Meta's answer to a refused call, as the upstream client turns it into an error. */
export const refusal = (httpStatus: number, code: number, message: string) =>
  UpstreamError.fromResponse('getBusinessAccount', httpStatus, { error: { code, message } }, undefined, []);
