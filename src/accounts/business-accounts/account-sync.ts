import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { AuditService } from '../../audit/audit.service.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { asDomainFailure, SYNC_FAILURE } from '../../upstream/upstream-failure.js';
import { AccountCredentials } from './account-credentials.js';
import { BusinessAccountsRepository, type BusinessAccount } from './business-accounts.repository.js';

const AUDIT_ACTION = { phoneNumbers: 'phone_numbers.synced', templates: 'templates.synced' } as const;

/**
 * What the phone-number and template syncs share: all or nothing. Every page is fetched (with the account's
 * token) before anything is written; then one unit of work writes the listing, marks the account synced and
 * records the audit entry. An upstream failure writes nothing.
 */
@Injectable()
export class AccountSync {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: BusinessAccountsRepository,
    private readonly credentials: AccountCredentials,
    private readonly audit: AuditService,
  ) {}

  async run<T, R extends Record<string, number>>(
    operator: ConsoleScope,
    wabaId: string,
    what: keyof typeof AUDIT_ACTION,
    fetch: (token: string) => Promise<T>,
    write: (account: BusinessAccount, fetched: T, syncedAt: Date) => Promise<R>,
  ): Promise<{ account: BusinessAccount; counts: R; syncedAt: Date }> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const fetched = await fetch(this.credentials.open(account)).catch(asDomainFailure(SYNC_FAILURE));
    const syncedAt = new Date();
    const counts = await this.uow.run(async () => {
      const result = await write(account, fetched, syncedAt);
      await this.accounts.markSynced(operator.organizationId, account.id, what, syncedAt);
      await this.audit.record(operator, AUDIT_ACTION[what], { type: 'business_account', id: wabaId }, result);
      return result;
    });
    return { account, counts, syncedAt };
  }
}
