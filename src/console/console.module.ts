import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { AttemptBudget } from '../core/redis/attempt-budget.js';
import { ApiKeysController } from './api-keys/api-keys.controller.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { AuditController } from './audit/audit.controller.js';
import { BusinessAccountsController } from './business-accounts/business-accounts.controller.js';
import { InvitationsController } from './invitations/invitations.controller.js';
import { InvitationsRepository } from './invitations/invitations.repository.js';
import { InvitationsService } from './invitations/invitations.service.js';
import { MembersController } from './members/members.controller.js';
import { MembersService } from './members/members.service.js';
import { AuthController } from './operators/auth.controller.js';
import { LoginThrottle } from './operators/login-throttle.js';
import { OperatorsModule } from './operators/operators.module.js';
import { OperatorsService } from './operators/operators.service.js';
import { PasswordHasher } from './operators/password-hasher.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { OrganizationSettingsController } from './settings/organization-settings.controller.js';
import { OrganizationSettingsService } from './settings/organization-settings.service.js';
import { PhoneNumbersController } from './phone-numbers/phone-numbers.controller.js';
import { TemplatesController } from './templates/templates.controller.js';
import { UsersController } from './users/users.controller.js';
import { CampaignsController } from './campaigns/campaigns.controller.js';
import { CampaignsModule } from '../campaigns/campaigns.module.js';

/**
 * The console's HTTP API (an audience): operators, their organizations and invitations, API keys, and thin controllers
 * over the accounts domain (business accounts, phone numbers, templates) and the audit log.
 */
@Module({
  imports: [AccountsModule, AuditModule, CampaignsModule, OperatorsModule, OrganizationsModule],
  controllers: [
    AuthController,
    BusinessAccountsController,
    PhoneNumbersController,
    TemplatesController,
    UsersController,
    CampaignsController,
    ApiKeysController,
    AuditController,
    InvitationsController,
    MembersController,
    OrganizationSettingsController,
  ],
  providers: [
    OperatorsService,
    PasswordHasher,
    LoginThrottle,
    AttemptBudget,
    InvitationsRepository,
    InvitationsService,
    ApiKeysService,
    MembersService,
    OrganizationSettingsService,
  ],
})
export class ConsoleModule {}
