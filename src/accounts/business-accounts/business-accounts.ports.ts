import type { ApiKeyAuthenticator } from '../../auth/api-keys/api-key.authenticator.js';
import type { ApiKeysRepository } from '../../auth/api-keys/api-keys.repository.js';
import type { AuditService } from '../../audit/audit.service.js';
import type { UnitOfWork } from '../../core/db/unit-of-work.js';
import type { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import type { AccountCredentials } from './account-credentials.js';
import type { AccountTakeoverHooks } from './account-takeover-hooks.js';
import type { BusinessAccountsRepository } from './business-accounts.repository.js';
import type { WebhookSubscription } from './webhook-subscription.js';

/*
 * What BusinessAccountsService uses of each collaborator: the methods it calls, picked from the real classes, which
 * therefore implement them by construction. Nest still injects the real classes (`@Inject(Class)`); the service tier
 * (test/service/business-accounts.service.spec.ts) runs the service over the in-memory stand-ins of
 * test/utils/in-memory, which implement the same types.
 */

export type AccountsUnitOfWork = Pick<UnitOfWork, 'run'>;
export type AccountRows = Pick<
  BusinessAccountsRepository,
  'findAnyByWabaId' | 'getOwned' | 'getConnected' | 'page' | 'create' | 'reconnect' | 'takeOver' | 'disconnect'
>;
export type AccountKeyRevocations = Pick<ApiKeysRepository, 'revokeAllOf'>;
export type AccountUpstream = Pick<WhatsAppClient, 'getBusinessAccount'>;
export type CredentialSealing = Pick<AccountCredentials, 'seal'>;
export type AccountAudit = Pick<AuditService, 'record' | 'recordForOrganization'>;
export type KeyCacheInvalidation = Pick<ApiKeyAuthenticator, 'invalidate'>;
export type AccountSubscription = Pick<WebhookSubscription, 'subscribe'>;
export type TakeoverEnds = Pick<AccountTakeoverHooks, 'run'>;
