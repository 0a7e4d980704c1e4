import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { AuditService } from '../../audit/audit.service.js';
import { AppConfig } from '../../core/config/app-config.js';
import { UpstreamUnavailable } from '../../core/errors/domain-errors.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { asDomainFailure, type UpstreamFailureOptions } from '../../upstream/upstream-failure.js';
import type { UpstreamSubscribedApp } from '../../upstream/upstream.types.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { AccountCredentials } from './account-credentials.js';
import { BusinessAccountsRepository } from './business-accounts.repository.js';
import { toBusinessAccountView, type BusinessAccountView } from './business-account.view.js';

/** Neither call can be wrong as sent: a permanent error means the upstream misbehaved (502), like a sync's. */
const SUBSCRIPTION_FAILURE: UpstreamFailureOptions = { permanent: 'unavailable', during: 'webhook subscription' };

/**
 * The app's subscription to a business account's webhooks: without it Meta delivers none of the account's
 * webhooks (the most common "webhooks never arrive" report). `POST /{waba-id}/subscribed_apps` with the
 * account's token, then `GET` to check that the app is listed (this app's WHATSAPP_APP_ID when configured,
 * any app otherwise). A failure is a domain error naming its cause, and nothing is written.
 */
@Injectable()
export class WebhookSubscription {
  constructor(
    private readonly upstream: WhatsAppClient,
    private readonly config: AppConfig,
    private readonly uow: UnitOfWork,
    private readonly accounts: BusinessAccountsRepository,
    private readonly credentials: AccountCredentials,
    private readonly audit: AuditService,
  ) {}

  /** Subscribes and checks; throws 424 (credential), 429 (rate limit) or 502 (unavailable, or not listed afterwards). */
  async subscribe(token: string, wabaId: string): Promise<void> {
    const fail = asDomainFailure(SUBSCRIPTION_FAILURE);
    await this.upstream.subscribeApp(token, wabaId).catch(fail);
    const apps = await this.upstream.listSubscribedApps(token, wabaId).catch(fail);
    const appId = this.config.whatsappAppId;
    if (!listsApp(apps, appId)) {
      throw new UpstreamUnavailable(
        `webhook subscription: subscribed_apps does not list ${appId ? `this app (${appId})` : 'any app'} after subscribing`,
      );
    }
  }

  /** POST /business-accounts/:wabaId/subscription: subscribes again with the stored token; the account is unchanged on failure. */
  async resubscribe(operator: ConsoleScope, wabaId: string): Promise<BusinessAccountView> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    await this.subscribe(this.credentials.open(account), wabaId);
    const updated = await this.uow.run(async () => {
      await this.audit.record(operator, 'business_account.webhooks_subscribed', {
        type: 'business_account',
        id: wabaId,
      });
      return this.accounts.markWebhooksSubscribed(operator.organizationId, account.id, new Date());
    });
    return toBusinessAccountView(updated);
  }
}

/** Whether `GET subscribed_apps` lists this app (`appId`), or, with no app id configured, any app at all. */
export function listsApp(apps: UpstreamSubscribedApp[], appId: string): boolean {
  return apps.some((app) => !appId || app.whatsapp_business_api_data?.id === appId);
}
