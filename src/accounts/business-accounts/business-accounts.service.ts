import { Inject, Injectable } from '@nestjs/common';
import { ApiKeyAuthenticator } from '../../auth/api-keys/api-key.authenticator.js';
import { ApiKeysRepository } from '../../auth/api-keys/api-keys.repository.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { AuditService } from '../../audit/audit.service.js';
import { Conflict, InvalidInput } from '../../core/errors/domain-errors.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { UpstreamError } from '../../upstream/upstream.error.js';
import { upstreamFailure } from '../../upstream/upstream-failure.js';
import type { UpstreamBusinessAccount } from '../../upstream/upstream.types.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { AccountCredentials } from './account-credentials.js';
import { AccountTakeoverHooks } from './account-takeover-hooks.js';
import { BusinessAccountsRepository, type VerifiedCredential } from './business-accounts.repository.js';
import type {
  AccountAudit,
  AccountKeyRevocations,
  AccountRows,
  AccountsUnitOfWork,
  AccountSubscription,
  AccountUpstream,
  CredentialSealing,
  KeyCacheInvalidation,
  TakeoverEnds,
} from './business-accounts.ports.js';
import { WebhookSubscription } from './webhook-subscription.js';
import { toBusinessAccountView, type BusinessAccountView } from './business-account.view.js';
import { toPage, type Page } from '../../core/rows/page.js';

export const ALREADY_CONNECTED = 'This business account is already connected';

const alreadyConnected = () =>
  new Conflict(ALREADY_CONNECTED, [{ field: 'wabaId', message: 'wabaId is already connected' }]);

@Injectable()
export class BusinessAccountsService {
  constructor(
    @Inject(UnitOfWork) private readonly uow: AccountsUnitOfWork,
    @Inject(BusinessAccountsRepository) private readonly accounts: AccountRows,
    @Inject(ApiKeysRepository) private readonly keys: AccountKeyRevocations,
    @Inject(WhatsAppClient) private readonly upstream: AccountUpstream,
    @Inject(AccountCredentials) private readonly credentials: CredentialSealing,
    @Inject(AuditService) private readonly audit: AccountAudit,
    @Inject(ApiKeyAuthenticator) private readonly authenticator: KeyCacheInvalidation,
    @Inject(WebhookSubscription) private readonly subscription: AccountSubscription,
    @Inject(AccountTakeoverHooks) private readonly takeoverHooks: TakeoverEnds,
  ) {}

  /**
   * Connects a WABA: the credential is checked against the upstream platform first, then the app is subscribed
   * to the account's webhooks (and the subscription checked), and only then is anything stored (the token
   * encrypted). A failing subscription fails the connect with its cause: an account connected without it
   * would silently never receive a webhook. A WABA belongs to one organization; the same organization may
   * reconnect one it disconnected.
   *
   * Takeover (audit 2, finding 5): another organization's account whose credentials failed their check, or that it
   * disconnected, goes to a caller whose token Meta accepts for that WABA now. The token is verified before any
   * 409, so a caller with a bad token gets the answer of any bad token and learns nothing about who holds the WABA.
   * The old holder's key pairs are revoked, its running campaigns cancelled (AccountTakeoverHooks) and it loses the
   * account (what it stored stays out of the new holder's reads: `heldSince`); both organizations' audit logs record it.
   */
  async connect(
    operator: ConsoleScope,
    request: { wabaId: string; accessToken: string; name?: string },
  ): Promise<BusinessAccountView> {
    const existing = await this.accounts.findAnyByWabaId(request.wabaId);
    const ours = existing?.organizationId === operator.organizationId;
    if (existing && ours && !existing.disconnectedAt) throw alreadyConnected();
    const upstreamAccount = await this.verifyCredential(request);
    if (existing && !ours && !existing.disconnectedAt && existing.credentialsValid) throw alreadyConnected();
    const credential = await this.verifiedAndSubscribed(
      request.wabaId,
      request.accessToken,
      upstreamAccount.marketing_messages_onboarding_status,
    );
    const name = request.name ?? upstreamAccount.name ?? request.wabaId;
    const revokedKeys: string[] = [];
    const account = await this.uow.run(async () => {
      if (existing && !ours) {
        const at = new Date();
        const taken = await this.accounts.takeOver(operator.organizationId, existing, credential, name, at);
        // The holder reconnected (or another caller took it) meanwhile: it keeps it.
        if (!taken) throw alreadyConnected();
        revokedKeys.push(...(await this.keys.revokeAllOf(existing.id, at)));
        const ended = await this.takeoverHooks.run({
          businessAccountId: existing.id,
          wabaId: request.wabaId,
          previousOrganizationId: existing.organizationId,
          at,
        });
        const reason = existing.disconnectedAt ? 'disconnected' : 'credentials_rejected';
        await this.audit.record(
          operator,
          'business_account.taken_over',
          { type: 'business_account', id: request.wabaId },
          { name, previousHolder: reason },
        );
        await this.audit.recordForOrganization(
          existing.organizationId,
          'business_account.lost_to_takeover',
          { type: 'business_account', id: request.wabaId },
          {
            reason,
            revokedKeys: revokedKeys.length,
            ...ended,
            detail:
              'another organization connected it with a token the upstream platform accepts for this business account',
          },
        );
        return taken;
      }
      const saved = existing
        ? await this.accounts.reconnect(operator.organizationId, existing.id, credential, name)
        : await this.accounts.create(operator.organizationId, { wabaId: request.wabaId, name }, credential);
      // Two operators connecting the same WABA at once: the unique index decides, the loser gets a conflict.
      if (!saved) throw alreadyConnected();
      await this.audit.record(
        operator,
        existing ? 'business_account.reconnected' : 'business_account.connected',
        { type: 'business_account', id: request.wabaId },
        { name },
      );
      return saved;
    });
    // Refused at once by this process; the others follow within API_KEY_CACHE_TTL_MS.
    for (const accessKey of revokedKeys) this.authenticator.invalidate(accessKey);
    return toBusinessAccountView(account);
  }

  /**
   * Replaces the stored token (after the upstream rejected the old one); the key pairs stay valid. The new
   * token is checked and subscribed like a connect's, which marks the credentials valid again.
   */
  async reconnect(operator: ConsoleScope, wabaId: string, accessToken: string): Promise<BusinessAccountView> {
    const account = await this.accounts.getOwned(operator.organizationId, wabaId);
    const upstreamAccount = await this.verifyCredential({ wabaId, accessToken });
    const credential = await this.verifiedAndSubscribed(
      account.wabaId,
      accessToken,
      upstreamAccount.marketing_messages_onboarding_status,
    );
    const updated = await this.uow.run(async () => {
      await this.audit.record(
        operator,
        'business_account.reconnected',
        { type: 'business_account', id: wabaId },
        { tokenReplaced: true },
      );
      return this.accounts.reconnect(operator.organizationId, account.id, credential);
    });
    return toBusinessAccountView(updated);
  }

  async list(organizationId: string, query: { page: number; limit: number }): Promise<Page<BusinessAccountView>> {
    const { rows, total } = await this.accounts.page(organizationId, query);
    return toPage(rows.map(toBusinessAccountView), total, query);
  }

  async get(organizationId: string, wabaId: string): Promise<BusinessAccountView> {
    return toBusinessAccountView(await this.accounts.getOwned(organizationId, wabaId));
  }

  /** Disconnects: revokes every key of the account; messages, events and templates stay as history. */
  async disconnect(operator: ConsoleScope, wabaId: string): Promise<BusinessAccountView> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const updated = await this.uow.run(async () => {
      const now = new Date();
      const revoked = await this.keys.revokeAllOf(account.id, now);
      // Refused at once by this process; the others follow within API_KEY_CACHE_TTL_MS.
      for (const accessKey of revoked) this.authenticator.invalidate(accessKey);
      await this.audit.record(
        operator,
        'business_account.disconnected',
        { type: 'business_account', id: wabaId },
        { revokedKeys: revoked.length },
      );
      return this.accounts.disconnect(operator.organizationId, account.id, now);
    });
    return toBusinessAccountView(updated);
  }

  /** After verifyCredential: subscribes the app with the token, and what is stored for it (with the onboarding status the check read). */
  private async verifiedAndSubscribed(
    wabaId: string,
    accessToken: string,
    marketingMessagesStatus: string | undefined,
  ): Promise<VerifiedCredential> {
    await this.subscription.subscribe(accessToken, wabaId);
    return {
      accessTokenEncrypted: this.credentials.seal(accessToken, wabaId),
      checkedAt: new Date(),
      marketingMessagesStatus,
    };
  }

  /** A token the upstream refuses is the operator's input error (422 on the field), not a reconnect case. */
  private async verifyCredential(request: { wabaId: string; accessToken: string }): Promise<UpstreamBusinessAccount> {
    try {
      return await this.upstream.getBusinessAccount(request.accessToken, request.wabaId);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      const reason = error.reason;
      if (error.errorClass === 'credential' || error.errorClass === 'account_blocked') {
        throw InvalidInput.of('accessToken', `The upstream platform rejected this access token: ${reason}`);
      }
      if (error.errorClass === 'permanent') {
        throw InvalidInput.of(
          'wabaId',
          `The upstream platform does not know this business account for this token: ${reason}`,
        );
      }
      throw upstreamFailure(error);
    }
  }
}
