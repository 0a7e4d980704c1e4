import { Injectable } from '@nestjs/common';
import type { BusinessAccount } from '../../generated/prisma/client.js';
import { NotFound } from '../../core/errors/domain-errors.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { connectionOf, planned, statement, type Tx } from '../../core/prisma/sql.js';
import { clientOf, isUniqueViolation } from '../../core/prisma/unit-of-work.js';
import { skipTake } from '../../core/http/pagination.js';
import type { AccountSendState } from '../health/account-health.js';
import type { AccountStanding } from '../standing/account-standing.js';

export const BUSINESS_ACCOUNT_NOT_FOUND = 'Business account not found';

/** An upstream token as stored: sealed, bound to its business account's wabaId. */
export interface StoredCredential {
  wabaId: string;
  accessTokenEncrypted: string;
}

/** A token as a connect or a replacement stores it: just checked, accepted, and the app subscribed. */
export interface VerifiedCredential {
  accessTokenEncrypted: string;
  /** When the token was checked and the subscription made. */
  checkedAt: Date;
  /** Meta's marketing_messages_onboarding_status as the check read it (absent: not in the answer). */
  marketingMessagesStatus?: string;
}

/**
 * What a credential check found: accepted (with the Marketing Messages API onboarding status the same read gave),
 * or rejected with the upstream platform's reason.
 */
export type CredentialVerdict = { valid: true; marketingMessagesStatus?: string } | { valid: false; error: string };

/** An account whose token is due for its scheduled check. */
export interface CredentialCheckDue extends StoredCredential {
  id: string;
  organizationId: string;
}

const sendState = statement(
  'business_account_send_state',
  `SELECT credentials_valid AS "credentialsValid", credentials_error AS "credentialsError",
          ban_state AS "banState", ban_date AS "banDate", restrictions, marketing_messages_status AS "marketingMessagesStatus"
     FROM business_accounts WHERE id = $1::uuid`,
);

/** An account's standing as the worker locks and writes it back (see accounts/standing/account-standing.ts). */
export type LockedStanding = AccountStanding & { id: string; wabaId: string };

/** In id order, as every chunk locks them: concurrent chunks never wait on each other in a cycle. */
const lockStandings = planned(
  `SELECT id, waba_id AS "wabaId", ban_state AS "banState", ban_date AS "banDate", restrictions, violation_type AS "violationType",
          pricing_tiers AS "pricingTiers", alerts, standing_updated_at AS "updatedAt", standing_times AS times
     FROM business_accounts WHERE waba_id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
);

const writeStandings = planned(
  `UPDATE business_accounts b
      SET ban_state = v."banState", ban_date = v."banDate", restrictions = v.restrictions, violation_type = v."violationType",
          pricing_tiers = v."pricingTiers", alerts = v.alerts, standing_updated_at = v."updatedAt", standing_times = v.times,
          updated_at = now()
     FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, "banState" text, "banDate" text, restrictions jsonb, "violationType" text,
          "pricingTiers" jsonb, alerts jsonb, "updatedAt" timestamptz, times jsonb)
    WHERE b.id = v.id`,
);

/** Onboarded to the Marketing Messages API by Meta's webhook, unless something newer was learnt already. */
const markMarketingMessagesOnboarded = planned(
  `UPDATE business_accounts b
      SET marketing_messages_status = 'ONBOARDED', marketing_messages_updated_at = v.at, updated_at = now()
     FROM unnest($1::text[], $2::timestamptz[]) AS v(waba, at)
    WHERE b.waba_id = v.waba AND (b.marketing_messages_updated_at IS NULL OR b.marketing_messages_updated_at <= v.at)`,
);

/** Owns `business_accounts`. Every read and write names the organization it acts for, but the few noted. */
@Injectable()
export class BusinessAccountsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The organization's business account with this wabaId (connected or not), or NotFound. */
  async getOwned(organizationId: string, wabaId: string): Promise<BusinessAccount> {
    const account = await clientOf(this.prisma).businessAccount.findFirst({ where: { organizationId, wabaId } });
    if (!account) throw new NotFound(BUSINESS_ACCOUNT_NOT_FOUND);
    return account;
  }

  /** As getOwned, but only while connected: syncs and new keys need a live credential. */
  async getConnected(organizationId: string, wabaId: string): Promise<BusinessAccount> {
    const account = await this.getOwned(organizationId, wabaId);
    if (account.disconnectedAt) throw new NotFound(BUSINESS_ACCOUNT_NOT_FOUND);
    return account;
  }

  /** One page of the organization's accounts, oldest connected first, and how many there are. */
  async page(organizationId: string, query: { page: number; limit: number }): Promise<{ rows: BusinessAccount[]; total: number }> {
    const db = clientOf(this.prisma);
    const [rows, total] = await Promise.all([
      db.businessAccount.findMany({ where: { organizationId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], ...skipTake(query) }),
      db.businessAccount.count({ where: { organizationId } }),
    ]);
    return { rows, total };
  }

  list(organizationId: string): Promise<BusinessAccount[]> {
    return clientOf(this.prisma).businessAccount.findMany({ where: { organizationId }, orderBy: [{ createdAt: 'asc' }] });
  }

  /** Across organizations on purpose: a WABA belongs to one organization, so connecting one looks everywhere. */
  findAnyByWabaId(wabaId: string): Promise<BusinessAccount | null> {
    return clientOf(this.prisma).businessAccount.findUnique({ where: { wabaId } });
  }

  /** The stored (encrypted) token of a business account, the scope of a key pair; null once disconnected. */
  async findCredential(businessAccountId: string): Promise<StoredCredential | null> {
    const account = await clientOf(this.prisma).businessAccount.findUnique({
      where: { id: businessAccountId },
      select: { wabaId: true, accessTokenEncrypted: true, disconnectedAt: true },
    });
    return account && !account.disconnectedAt ? { wabaId: account.wabaId, accessTokenEncrypted: account.accessTokenEncrypted } : null;
  }

  /**
   * Across organizations on purpose (key rotation re-seals every stored token): the next `limit` accounts,
   * connected or not, after the id `afterId`, in id order.
   */
  credentialsAfter(afterId: string | undefined, limit: number): Promise<(StoredCredential & { id: string })[]> {
    return clientOf(this.prisma).businessAccount.findMany({
      where: afterId ? { id: { gt: afterId } } : {},
      select: { id: true, wabaId: true, accessTokenEncrypted: true },
      orderBy: { id: 'asc' },
      take: limit,
    });
  }

  /** Accounts whose token is still sealed in the retired v1 format, by id, after `afterId`. */
  legacyCredentialsAfter(afterId: string | undefined, limit: number): Promise<(StoredCredential & { id: string })[]> {
    return clientOf(this.prisma).businessAccount.findMany({
      where: { accessTokenEncrypted: { startsWith: 'v1.' }, ...(afterId ? { id: { gt: afterId } } : {}) },
      select: { id: true, wabaId: true, accessTokenEncrypted: true },
      orderBy: { id: 'asc' },
      take: limit,
    });
  }

  countAll(): Promise<number> {
    return clientOf(this.prisma).businessAccount.count();
  }

  /** Replaces the stored token only if it is still `expected` (a reconnect meanwhile wins); whether it did. */
  async replaceCredentialIf(id: string, expected: string, accessTokenEncrypted: string): Promise<boolean> {
    const { count } = await clientOf(this.prisma).businessAccount.updateMany({ where: { id, accessTokenEncrypted: expected }, data: { accessTokenEncrypted } });
    return count === 1;
  }

  /** A new connection; null when the wabaId is already taken (the unique index decides between racing connects). */
  async create(organizationId: string, account: { wabaId: string; name: string }, credential: VerifiedCredential): Promise<BusinessAccount | null> {
    try {
      return await clientOf(this.prisma).businessAccount.create({ data: { organizationId, ...account, ...verified(credential) } });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /** Connected again, with a new (verified) token and a new name when given: credential and subscription state start afresh. */
  reconnect(organizationId: string, id: string, credential: VerifiedCredential, name?: string): Promise<BusinessAccount> {
    return clientOf(this.prisma).businessAccount.update({ where: { id, organizationId }, data: { ...verified(credential), ...(name !== undefined ? { name } : {}), disconnectedAt: null } });
  }

  /** The account's webhook subscription was made again and checked. */
  markWebhooksSubscribed(organizationId: string, id: string, at: Date): Promise<BusinessAccount> {
    return clientOf(this.prisma).businessAccount.update({ where: { id, organizationId }, data: { webhooksSubscribed: true, webhooksCheckedAt: at } });
  }

  /**
   * Records what a check of the token `checkedCiphertext` found, only if that is still the stored token (a
   * replacement meanwhile was verified itself and wins); the updated account, or null when it was replaced.
   */
  async recordCredentialCheck(organizationId: string, id: string, checkedCiphertext: string, verdict: CredentialVerdict, at: Date): Promise<BusinessAccount | null> {
    const data = {
      credentialsValid: verdict.valid,
      credentialsError: verdict.valid ? null : verdict.error,
      credentialsCheckedAt: at,
      ...(verdict.valid && verdict.marketingMessagesStatus !== undefined ? { marketingMessagesStatus: verdict.marketingMessagesStatus, marketingMessagesUpdatedAt: at } : {}),
    };
    const db = clientOf(this.prisma);
    const { count } = await db.businessAccount.updateMany({ where: { id, organizationId, accessTokenEncrypted: checkedCiphertext }, data });
    if (count !== 1) return null;
    // A rejection starts the holder's read cut-off (kept from the first rejection); an acceptance proves the token again.
    await db.businessAccount.updateMany({
      where: { id, organizationId, accessTokenEncrypted: checkedCiphertext, readableUntil: verdict.valid ? { not: null } : null },
      data: { readableUntil: verdict.valid ? null : at },
    });
    return db.businessAccount.findFirst({ where: { id, organizationId } });
  }

  /**
   * Across organizations on purpose (the worker's scheduled check looks at every account): up to `limit`
   * connected accounts after the id `afterId`, in id order, whose token was not checked since `dueBefore`.
   */
  credentialChecksDue(dueBefore: Date, afterId: string | undefined, limit: number): Promise<CredentialCheckDue[]> {
    return clientOf(this.prisma).businessAccount.findMany({
      where: {
        disconnectedAt: null,
        OR: [{ credentialsCheckedAt: null }, { credentialsCheckedAt: { lt: dueBefore } }],
        ...(afterId ? { id: { gt: afterId } } : {}),
      },
      select: { id: true, organizationId: true, wabaId: true, accessTokenEncrypted: true },
      orderBy: { id: 'asc' },
      take: limit,
    });
  }

  /** The send path's read of the account: credentials and standing (SQL on the pool: it runs on every send-context cache miss); null if unknown. */
  async sendState(businessAccountId: string): Promise<AccountSendState | null> {
    const { rows } = await this.prisma.pool.query<AccountSendState>(sendState([businessAccountId]));
    return rows[0] ?? null;
  }

  /** Disconnected at `at`: also the holder's read cut-off (what arrives later is not its to read), unless one started earlier. */
  async disconnect(organizationId: string, id: string, at: Date): Promise<BusinessAccount> {
    const db = clientOf(this.prisma);
    await db.businessAccount.updateMany({ where: { id, organizationId, readableUntil: null }, data: { readableUntil: at } });
    return db.businessAccount.update({ where: { id, organizationId }, data: { disconnectedAt: at } });
  }

  /**
   * Across organizations on purpose: the account moves to `organizationId`, which proved a token Meta accepts for it,
   * only if it is still as `from` was read (same holder and token, still disconnected or with rejected credentials):
   * an old holder that reconnected meanwhile keeps it (null). The new holder reads from `at` on.
   */
  async takeOver(
    organizationId: string,
    from: { id: string; organizationId: string; accessTokenEncrypted: string },
    credential: VerifiedCredential,
    name: string,
    at: Date,
  ): Promise<BusinessAccount | null> {
    const db = clientOf(this.prisma);
    const { count } = await db.businessAccount.updateMany({
      where: { id: from.id, organizationId: from.organizationId, accessTokenEncrypted: from.accessTokenEncrypted, OR: [{ disconnectedAt: { not: null } }, { credentialsValid: false }] },
      data: { organizationId, ...verified(credential), name, disconnectedAt: null, heldSince: at },
    });
    return count === 1 ? db.businessAccount.findFirst({ where: { id: from.id, organizationId } }) : null;
  }

  async markSynced(organizationId: string, id: string, what: 'phoneNumbers' | 'templates', at: Date): Promise<void> {
    const data = what === 'phoneNumbers' ? { phoneNumbersSyncedAt: at } : { templatesSyncedAt: at };
    await clientOf(this.prisma).businessAccount.update({ where: { id, organizationId }, data });
  }

  /**
   * The worker's account-level webhooks, in its transaction: the standing of the accounts with these wabaIds
   * (by wabaId: Meta's entry id, the tenant scope of a webhook), locked in id order until the chunk commits.
   */
  async lockStandings(tx: Tx, wabaIds: string[]): Promise<LockedStanding[]> {
    if (wabaIds.length === 0) return [];
    const { rows } = await connectionOf(tx).query<LockedStanding>(lockStandings([wabaIds]));
    return rows;
  }

  /** The worker's MM_LITE_TERMS_SIGNED webhooks, in its transaction (one per account: the newest). */
  async markMarketingMessagesOnboarded(tx: Tx, onboarded: { wabaId: string; at: Date }[]): Promise<void> {
    const newest = new Map<string, Date>();
    for (const o of onboarded) if (!newest.has(o.wabaId) || o.at > newest.get(o.wabaId)!) newest.set(o.wabaId, o.at);
    if (newest.size === 0) return;
    await connectionOf(tx).query(markMarketingMessagesOnboarded([[...newest.keys()], [...newest.values()]]));
  }

  /** Writes back standings locked by lockStandings, each once, in one statement. */
  async writeStandings(tx: Tx, standings: LockedStanding[]): Promise<void> {
    if (standings.length === 0) return;
    await connectionOf(tx).query(writeStandings([JSON.stringify(standings)]));
  }
}

function verified(credential: VerifiedCredential) {
  return {
    accessTokenEncrypted: credential.accessTokenEncrypted,
    webhooksSubscribed: true,
    webhooksCheckedAt: credential.checkedAt,
    credentialsValid: true,
    credentialsError: null,
    credentialsCheckedAt: credential.checkedAt,
    readableUntil: null,
    ...(credential.marketingMessagesStatus !== undefined ? { marketingMessagesStatus: credential.marketingMessagesStatus, marketingMessagesUpdatedAt: credential.checkedAt } : {}),
  };
}
