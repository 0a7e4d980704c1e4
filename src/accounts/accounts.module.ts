import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { AppConfig } from '../core/config/app-config.js';
import { SecretBox } from '../core/crypto/secret-box.js';
import { UpstreamModule } from '../upstream/upstream.module.js';
import { AccountSync } from './business-accounts/account-sync.js';
import { AccountTakeoverHooks } from './business-accounts/account-takeover-hooks.js';
import { BusinessAccountsRepository } from './business-accounts/business-accounts.repository.js';
import { BusinessAccountsService } from './business-accounts/business-accounts.service.js';
import { WebhookSubscription } from './business-accounts/webhook-subscription.js';
import { AccountCredentials } from './business-accounts/account-credentials.js';
import { CredentialChecks } from './credentials/credential-checks.js';
import { CredentialRotation } from './credentials/credential-rotation.js';
import { LegacyCredentialsOnStart } from './credentials/legacy-credentials-on-start.js';
import { PhoneNumbersRepository } from './phone-numbers/phone-numbers.repository.js';
import { PhoneNumbersService } from './phone-numbers/phone-numbers.service.js';
import { TemplatesRepository } from './templates/templates.repository.js';
import { TemplatesService } from './templates/templates.service.js';
import { BlockedUsersRepository } from './users/blocked-users.repository.js';
import { BlockedUsersService } from './users/blocked-users.service.js';
import { MarketingPreferencesRepository } from './users/marketing-preferences.repository.js';
import { MarketingPreferencesService } from './users/marketing-preferences.service.js';

/** The upstream tokens' sealing key ring (ENCRYPTION_KEYS). */
const secretBoxProvider = {
  provide: SecretBox,
  useFactory: (config: AppConfig) => new SecretBox(config.encryptionKeys),
  inject: [AppConfig],
};

/**
 * The accounts domain: business accounts, their phone numbers and templates, and their upstream credentials
 * (encrypted at rest). Its repositories and services are provided here once; audiences (the console, the key-pair
 * API, webhooks, campaigns) and the worker (credential checks, webhook effects, campaign runs) import it; it imports
 * none of them. Disconnecting an account drops its API keys, hence auth.
 */
@Module({
  imports: [UpstreamModule, AuditModule, AuthModule],
  providers: [
    AccountTakeoverHooks,
    BusinessAccountsRepository,
    PhoneNumbersRepository,
    TemplatesRepository,
    AccountSync,
    BusinessAccountsService,
    PhoneNumbersService,
    TemplatesService,
    AccountCredentials,
    CredentialRotation,
    LegacyCredentialsOnStart,
    CredentialChecks,
    WebhookSubscription,
    BlockedUsersRepository,
    BlockedUsersService,
    MarketingPreferencesRepository,
    MarketingPreferencesService,
    secretBoxProvider,
  ],
  exports: [
    AccountTakeoverHooks,
    BusinessAccountsRepository,
    PhoneNumbersRepository,
    TemplatesRepository,
    BlockedUsersRepository,
    MarketingPreferencesRepository,
    BlockedUsersService,
    MarketingPreferencesService,
    BusinessAccountsService,
    PhoneNumbersService,
    TemplatesService,
    AccountCredentials,
    CredentialRotation,
    CredentialChecks,
    WebhookSubscription,
  ],
})
export class AccountsModule {}
