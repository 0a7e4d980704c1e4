import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyScope, ConsoleScope } from '../../auth/request-scope.js';
import { AuditService } from '../../audit/audit.service.js';
import { SecretBox } from '../../core/crypto/secret-box.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { UpstreamError } from '../../upstream/upstream.error.js';
import { asDomainFailure, SYNC_FAILURE } from '../../upstream/upstream-failure.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import {
  BusinessAccountsRepository,
  type CredentialVerdict,
} from '../business-accounts/business-accounts.repository.js';
import { toBusinessAccountView, type BusinessAccountView } from '../business-accounts/business-account.view.js';
import { AccountCredentials } from '../business-accounts/account-credentials.js';
import { credentialVersionOf } from '../../auth/api-keys/credential-version.js';

const BATCH = 100;

/** What one scheduled pass did, for the worker's log. */
export interface CredentialPass {
  checked: number;
  rejected: number;
  /** Not checked this time: the upstream did not give a verdict, or the token does not decrypt here. */
  skipped: number;
}

/**
 * Whether the upstream platform still accepts each business account's stored token. The check is the cheapest
 * Graph call with the token, `GET /{waba-id}?fields=id,name,marketing_messages_onboarding_status` (the one connect
 * makes), which also refreshes the account's Marketing Messages API onboarding state. Only a credential-class
 * answer (Meta's catalogue: 0, 190, 3, 10, 200–299, or a bare 401) marks the token rejected, with Meta's
 * reason; an accepted answer marks it valid. Anything else (Meta down, rate limited, the account blocked) is
 * no verdict and changes nothing. Every write is conditional on the stored token still being the one checked,
 * so a replacement made meanwhile is never overwritten.
 */
@Injectable()
export class CredentialChecks {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: BusinessAccountsRepository,
    private readonly credentials: AccountCredentials,
    private readonly secrets: SecretBox,
    private readonly upstream: WhatsAppClient,
    private readonly audit: AuditService,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** The console's "Check now": the verdict is in the answered account view; no verdict answers 502/429/424. */
  async checkNow(operator: ConsoleScope, wabaId: string): Promise<BusinessAccountView> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const verdict = await this.verdictOf(this.credentials.open(account), wabaId).catch(
      asDomainFailure({ ...SYNC_FAILURE, during: 'credential check' }),
    );
    const updated = await this.uow.run(async () => {
      const recorded = await this.accounts.recordCredentialCheck(
        operator.organizationId,
        account.id,
        account.accessTokenEncrypted,
        verdict,
        new Date(),
      );
      // Replaced meanwhile: the replacement was checked itself, and is what the operator sees.
      if (!recorded) return this.accounts.getOwned(operator.organizationId, wabaId);
      await this.audit.record(
        operator,
        'business_account.credentials_checked',
        { type: 'business_account', id: wabaId },
        verdict.valid ? { valid: true } : { valid: false, error: verdict.error },
      );
      return recorded;
    });
    return toBusinessAccountView(updated);
  }

  /**
   * One scheduled pass over every connected account not checked since `dueBefore`, in id order and batches.
   * Across organizations on purpose. A token that does not decrypt with this process's ENCRYPTION_KEYS is
   * skipped and logged, not marked rejected: a worker with a wrong key ring must not stop every account's sends.
   */
  async checkDue(dueBefore: Date, isStopped: () => boolean = () => false): Promise<CredentialPass> {
    const pass: CredentialPass = { checked: 0, rejected: 0, skipped: 0 };
    for (let after: string | undefined; !isStopped();) {
      const batch = await this.accounts.credentialChecksDue(dueBefore, after, BATCH);
      for (const account of batch) {
        if (isStopped()) break;
        const verdict = await this.scheduledVerdict(account);
        if (!verdict) pass.skipped++;
        else {
          await this.accounts.recordCredentialCheck(
            account.organizationId,
            account.id,
            account.accessTokenEncrypted,
            verdict,
            new Date(),
          );
          pass.checked++;
          if (!verdict.valid) pass.rejected++;
        }
      }
      if (batch.length < BATCH) break;
      after = batch[batch.length - 1]!.id;
    }
    return pass;
  }

  /**
   * A send was answered with a credential-class error: the account's token is rejected from now on, unless it
   * was replaced since the send read it (`scope.credentialVersion`).
   */
  async recordRejectedBySend(
    scope: Pick<ApiKeyScope, 'organizationId' | 'wabaId' | 'credentialVersion'>,
    reason: string,
  ): Promise<void> {
    const account = await this.accounts.getOwned(scope.organizationId, scope.wabaId);
    if (credentialVersionOf(account.accessTokenEncrypted) !== scope.credentialVersion) return;
    await this.accounts.recordCredentialCheck(
      scope.organizationId,
      account.id,
      account.accessTokenEncrypted,
      { valid: false, error: reason },
      new Date(),
    );
    this.logger.warn(
      { wabaId: scope.wabaId, reason },
      'the upstream rejected the stored token on a send; its sends are refused until it is replaced',
    );
  }

  private async scheduledVerdict(account: {
    id: string;
    wabaId: string;
    accessTokenEncrypted: string;
  }): Promise<CredentialVerdict | undefined> {
    let token: string;
    try {
      token = this.secrets.open(account.accessTokenEncrypted, account.wabaId);
    } catch (err) {
      this.logger.error(
        { err, wabaId: account.wabaId },
        'credential check skipped: the stored token cannot be decrypted with ENCRYPTION_KEYS',
      );
      return undefined;
    }
    try {
      return await this.verdictOf(token, account.wabaId);
    } catch (err) {
      this.logger.warn(
        { err, wabaId: account.wabaId },
        'credential check gave no verdict; trying again at the next pass',
      );
      return undefined;
    }
  }

  /** Accepted, or rejected with Meta's reason; any other failure is thrown (no verdict). */
  private async verdictOf(token: string, wabaId: string): Promise<CredentialVerdict> {
    try {
      const account = await this.upstream.getBusinessAccount(token, wabaId);
      // The same read says whether the account is onboarded to the Marketing Messages API.
      return { valid: true, marketingMessagesStatus: account?.marketing_messages_onboarding_status };
    } catch (error) {
      if (error instanceof UpstreamError && error.errorClass === 'credential')
        return { valid: false, error: error.reason };
      throw error;
    }
  }
}
