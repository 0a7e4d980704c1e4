import { Injectable } from '@nestjs/common';
import type { PhoneNumber } from '../../generated/prisma/client.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { SecretBox } from '../../core/crypto/secret-box.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import type { UpstreamPhoneNumber } from '../../upstream/upstream.types.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { AuditService } from '../audit/audit.service.js';
import { BusinessAccountsRepository } from '../business-accounts/business-accounts.repository.js';
import { consoleUpstreamError } from '../upstream-errors.js';

export interface PhoneNumberView {
  phoneNumberId: string;
  displayPhoneNumber: string;
  verifiedName: string | null;
  qualityRating: string | null;
  status: string | null;
  codeVerificationStatus: string | null;
  nameStatus: string | null;
  platformType: string | null;
  throughputLevel: string | null;
  removed: boolean;
  syncedAt: string;
}

export interface PhoneNumberSyncResult {
  items: PhoneNumberView[];
  counts: { added: number; updated: number; removed: number; total: number };
  syncedAt: string;
}

@Injectable()
export class PhoneNumbersService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly accounts: BusinessAccountsRepository,
    private readonly upstream: WhatsAppClient,
    private readonly secrets: SecretBox,
    private readonly audit: AuditService,
  ) {}

  /**
   * All or nothing: every page is fetched before anything is written, then one transaction upserts the
   * numbers and marks the ones gone upstream as removed.
   */
  async sync(operator: ConsoleScope, wabaId: string): Promise<PhoneNumberSyncResult> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const fetched = await this.upstream.listPhoneNumbers(this.secrets.decrypt(account.accessTokenEncrypted), wabaId).catch(consoleUpstreamError);
    const syncedAt = new Date();
    const counts = await this.prisma.$transaction(async (tx) => {
      const existing = await tx.phoneNumber.findMany({ where: { businessAccountId: account.id } });
      const known = new Map(existing.map((p) => [p.phoneNumberId, p]));
      let added = 0;
      let updated = 0;
      for (const number of fetched) {
        const data = fromUpstream(number, syncedAt);
        if (known.has(number.id)) {
          await tx.phoneNumber.update({ where: { id: known.get(number.id)!.id }, data });
          updated++;
        } else {
          await tx.phoneNumber.create({ data: { ...data, businessAccountId: account.id, phoneNumberId: number.id } });
          added++;
        }
      }
      const seen = new Set(fetched.map((n) => n.id));
      const gone = existing.filter((p) => !seen.has(p.phoneNumberId) && !p.removedAt).map((p) => p.id);
      if (gone.length) await tx.phoneNumber.updateMany({ where: { id: { in: gone } }, data: { removedAt: syncedAt } });
      await tx.businessAccount.update({ where: { id: account.id }, data: { phoneNumbersSyncedAt: syncedAt } });
      const result = { added, updated, removed: gone.length, total: fetched.length };
      await this.audit.record(tx, operator, 'phone_numbers.synced', { type: 'business_account', id: wabaId }, result);
      return result;
    });
    return { items: await this.listFor(account.id), counts, syncedAt: syncedAt.toISOString() };
  }

  async list(organizationId: string, wabaId: string): Promise<PhoneNumberView[]> {
    const account = await this.accounts.getOwned(organizationId, wabaId);
    return this.listFor(account.id);
  }

  private async listFor(businessAccountId: string): Promise<PhoneNumberView[]> {
    const rows = await this.prisma.phoneNumber.findMany({ where: { businessAccountId }, orderBy: [{ removedAt: { sort: 'desc', nulls: 'first' } }, { displayPhoneNumber: 'asc' }] });
    return rows.map(toView);
  }
}

function fromUpstream(n: UpstreamPhoneNumber, syncedAt: Date) {
  return {
    displayPhoneNumber: n.display_phone_number,
    verifiedName: n.verified_name ?? null,
    qualityRating: n.quality_rating ?? null,
    status: n.status ?? null,
    codeVerificationStatus: n.code_verification_status ?? null,
    nameStatus: n.name_status ?? null,
    platformType: n.platform_type ?? null,
    throughputLevel: n.throughput?.level ?? null,
    removedAt: null,
    syncedAt,
  };
}

function toView(p: PhoneNumber): PhoneNumberView {
  return {
    phoneNumberId: p.phoneNumberId,
    displayPhoneNumber: p.displayPhoneNumber,
    verifiedName: p.verifiedName,
    qualityRating: p.qualityRating,
    status: p.status,
    codeVerificationStatus: p.codeVerificationStatus,
    nameStatus: p.nameStatus,
    platformType: p.platformType,
    throughputLevel: p.throughputLevel,
    removed: p.removedAt !== null,
    syncedAt: p.syncedAt.toISOString(),
  };
}
