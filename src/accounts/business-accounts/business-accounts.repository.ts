import { Injectable } from '@nestjs/common';
import type { BusinessAccount } from '../../generated/prisma/client.js';
import { NotFound } from '../../core/errors/domain-errors.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { clientOf, isUniqueViolation } from '../../core/prisma/unit-of-work.js';

export const BUSINESS_ACCOUNT_NOT_FOUND = 'Business account not found';

/** An upstream token as stored: sealed, bound to its business account's wabaId. */
export interface StoredCredential {
  wabaId: string;
  accessTokenEncrypted: string;
}

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

  countAll(): Promise<number> {
    return clientOf(this.prisma).businessAccount.count();
  }

  /** Replaces the stored token only if it is still `expected` (a reconnect meanwhile wins); whether it did. */
  async replaceCredentialIf(id: string, expected: string, accessTokenEncrypted: string): Promise<boolean> {
    const { count } = await clientOf(this.prisma).businessAccount.updateMany({ where: { id, accessTokenEncrypted: expected }, data: { accessTokenEncrypted } });
    return count === 1;
  }

  /** A new connection; null when the wabaId is already taken (the unique index decides between racing connects). */
  async create(organizationId: string, account: { wabaId: string; name: string; accessTokenEncrypted: string }): Promise<BusinessAccount | null> {
    try {
      return await clientOf(this.prisma).businessAccount.create({ data: { organizationId, ...account } });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /** Connected again, with a new token (and a new name when given). */
  reconnect(organizationId: string, id: string, change: { accessTokenEncrypted: string; name?: string }): Promise<BusinessAccount> {
    return clientOf(this.prisma).businessAccount.update({ where: { id, organizationId }, data: { ...change, disconnectedAt: null } });
  }

  disconnect(organizationId: string, id: string, at: Date): Promise<BusinessAccount> {
    return clientOf(this.prisma).businessAccount.update({ where: { id, organizationId }, data: { disconnectedAt: at } });
  }

  async markSynced(organizationId: string, id: string, what: 'phoneNumbers' | 'templates', at: Date): Promise<void> {
    const data = what === 'phoneNumbers' ? { phoneNumbersSyncedAt: at } : { templatesSyncedAt: at };
    await clientOf(this.prisma).businessAccount.update({ where: { id, organizationId }, data });
  }
}
