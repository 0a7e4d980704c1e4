import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../../auth/request-scope.js';
import type { UpstreamPhoneNumber } from '../../upstream/upstream.types.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { AccountSync } from '../business-accounts/account-sync.js';
import { BusinessAccountsRepository } from '../business-accounts/business-accounts.repository.js';
import { PhoneNumbersRepository, type PhoneNumber, type SyncedPhoneNumber } from './phone-numbers.repository.js';
import { toPage, type Page } from '../../core/rows/page.js';

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
  /** Meta's messaging limit (phone_number_quality_update): TIER_250, TIER_2K, TIER_10K, TIER_100K, TIER_UNLIMITED, … */
  messagingLimit: string | null;
  /** When Meta last reported on its quality, limit or status by webhook. */
  qualityUpdatedAt: string | null;
  removed: boolean;
  syncedAt: string;
}

/** What a sync answers, the same shape for numbers and templates: what changed, and when (then GET the list). */
export interface PhoneNumberSyncResult {
  counts: { added: number; updated: number; removed: number; total: number };
  syncedAt: string;
}

@Injectable()
export class PhoneNumbersService {
  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly phoneNumbers: PhoneNumbersRepository,
    private readonly upstream: WhatsAppClient,
    private readonly syncs: AccountSync,
  ) {}

  /** All or nothing: the numbers listed are upserted, the ones gone upstream marked removed. */
  async sync(operator: ConsoleScope, wabaId: string): Promise<PhoneNumberSyncResult> {
    const { counts, syncedAt } = await this.syncs.run(
      operator,
      wabaId,
      'phoneNumbers',
      (token) => this.upstream.listPhoneNumbers(token, wabaId),
      async (account, fetched, syncedAt) => ({
        ...(await this.phoneNumbers.replaceAll(account.id, fetched.map(fromUpstream), syncedAt)),
        total: fetched.length,
      }),
    );
    return { counts, syncedAt: syncedAt.toISOString() };
  }

  async list(
    organizationId: string,
    wabaId: string,
    query: { page: number; limit: number },
  ): Promise<Page<PhoneNumberView>> {
    const account = await this.accounts.getOwned(organizationId, wabaId);
    const { rows, total } = await this.phoneNumbers.page(account.id, query);
    return toPage(rows.map(toView), total, query);
  }
}

function fromUpstream(n: UpstreamPhoneNumber): SyncedPhoneNumber {
  return {
    phoneNumberId: n.id,
    displayPhoneNumber: n.display_phone_number,
    verifiedName: n.verified_name ?? null,
    qualityRating: n.quality_rating ?? null,
    status: n.status ?? null,
    codeVerificationStatus: n.code_verification_status ?? null,
    nameStatus: n.name_status ?? null,
    platformType: n.platform_type ?? null,
    throughputLevel: n.throughput?.level ?? null,
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
    messagingLimit: p.messagingLimit,
    qualityUpdatedAt: p.qualityUpdatedAt?.toISOString() ?? null,
    removed: p.removedAt !== null,
    syncedAt: p.syncedAt.toISOString(),
  };
}
