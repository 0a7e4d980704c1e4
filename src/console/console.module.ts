import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { ApiKeysController } from './api-keys/api-keys.controller.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { AuditController } from './audit/audit.controller.js';
import { BusinessAccountsController } from './business-accounts/business-accounts.controller.js';
import { AuthController } from './operators/auth.controller.js';
import { LoginThrottle } from './operators/login-throttle.js';
import { OperatorsRepository } from './operators/operators.repository.js';
import { OperatorsService } from './operators/operators.service.js';
import { OrganizationsRepository } from './organizations/organizations.repository.js';
import { PhoneNumbersController } from './phone-numbers/phone-numbers.controller.js';
import { TemplatesController } from './templates/templates.controller.js';

/**
 * The console's HTTP API (an audience): operators and their organizations, API keys, and thin controllers
 * over the accounts domain (business accounts, phone numbers, templates) and the audit log.
 */
@Module({
  imports: [AccountsModule, AuditModule],
  controllers: [AuthController, BusinessAccountsController, PhoneNumbersController, TemplatesController, ApiKeysController, AuditController],
  providers: [OrganizationsRepository, OperatorsRepository, OperatorsService, LoginThrottle, ApiKeysService],
})
export class ConsoleModule {}
