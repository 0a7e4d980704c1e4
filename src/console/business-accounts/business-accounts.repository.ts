import { Injectable } from '@nestjs/common';
import type { BusinessAccount } from '../../generated/prisma/client.js';
import { NotFoundError } from '../../core/http/api-error.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';

export const BUSINESS_ACCOUNT_NOT_FOUND = 'Business account not found';

/** Business-account reads, always scoped to the caller's organization. */
@Injectable()
export class BusinessAccountsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The organization's business account with this wabaId (connected or not), or 404. */
  async getOwned(organizationId: string, wabaId: string): Promise<BusinessAccount> {
    const account = await this.prisma.businessAccount.findFirst({ where: { organizationId, wabaId } });
    if (!account) throw new NotFoundError(BUSINESS_ACCOUNT_NOT_FOUND);
    return account;
  }

  /** As getOwned, but only while connected: syncs and new keys need a live credential. */
  async getConnected(organizationId: string, wabaId: string): Promise<BusinessAccount> {
    const account = await this.getOwned(organizationId, wabaId);
    if (account.disconnectedAt) throw new NotFoundError(BUSINESS_ACCOUNT_NOT_FOUND);
    return account;
  }

  list(organizationId: string): Promise<BusinessAccount[]> {
    return this.prisma.businessAccount.findMany({ where: { organizationId }, orderBy: [{ createdAt: 'asc' }] });
  }
}
