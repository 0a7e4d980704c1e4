import { Module } from '@nestjs/common';
import { AppConfig } from '../core/config/app-config.js';
import { SecretBox } from '../core/crypto/secret-box.js';
import { UpstreamModule } from '../upstream/upstream.module.js';
import { ApiKeysController } from './api-keys/api-keys.controller.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { AuditController } from './audit/audit.controller.js';
import { AuditService } from './audit/audit.service.js';
import { BusinessAccountsController } from './business-accounts/business-accounts.controller.js';
import { BusinessAccountsRepository } from './business-accounts/business-accounts.repository.js';
import { BusinessAccountsService } from './business-accounts/business-accounts.service.js';
import { AuthController } from './operators/auth.controller.js';
import { LoginThrottle } from './operators/login-throttle.js';
import { OperatorsService } from './operators/operators.service.js';
import { PhoneNumbersController } from './phone-numbers/phone-numbers.controller.js';
import { PhoneNumbersService } from './phone-numbers/phone-numbers.service.js';
import { TemplatesController } from './templates/templates.controller.js';
import { TemplatesService } from './templates/templates.service.js';

/** The console's HTTP API: operators, business accounts, phone numbers, templates, API keys, audit log. */
@Module({
  imports: [UpstreamModule],
  controllers: [AuthController, BusinessAccountsController, PhoneNumbersController, TemplatesController, ApiKeysController, AuditController],
  providers: [
    OperatorsService,
    LoginThrottle,
    AuditService,
    BusinessAccountsRepository,
    BusinessAccountsService,
    PhoneNumbersService,
    TemplatesService,
    ApiKeysService,
    { provide: SecretBox, useFactory: (config: AppConfig) => new SecretBox(config.encryptionKey), inject: [AppConfig] },
  ],
  exports: [BusinessAccountsRepository, SecretBox],
})
export class ConsoleModule {}
