import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { AuthGuard } from './auth/auth.guard.js';
import { ConsoleAddressRateLimitGuard, ConsoleSessionRateLimitGuard } from './auth/console-rate-limit.guard.js';
import { AppConfig } from './core/config/app-config.js';
import { CoreModule, type CoreOptions } from './core/core.module.js';
import { EnvelopeInterceptor } from './core/http/envelope.interceptor.js';
import { AllExceptionsFilter } from './core/http/exception.filter.js';
import { createValidationPipe } from './core/http/validation.js';
import { HealthModule } from './health/health.module.js';
import { AuthModule } from './auth/auth.module.js';
import { TenantLoadInterceptor } from './auth/tenant-load.interceptor.js';
import { ConsoleModule } from './console/console.module.js';
import { ContactsModule } from './contacts/contacts.module.js';
import { ConsoleWebModule } from './console-web/console-web.module.js';
import { MediaModule } from './media/media.module.js';
import { MessagesApiModule } from './messages/messages-api.module.js';
import { WebhooksApiModule } from './webhooks/webhooks-api.module.js';

/** The HTTP API process. Global pipe, filter, guard and envelope are providers so test apps get them too. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, core: CoreOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config, 'api', core),
        AuthModule,
        HealthModule,
        ConsoleModule,
        ContactsModule,
        MessagesApiModule,
        MediaModule,
        WebhooksApiModule,
        ConsoleWebModule,
      ],
      providers: [
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        // In this order: the console's per-address limit before authentication, its per-session one after.
        { provide: APP_GUARD, useClass: ConsoleAddressRateLimitGuard },
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_GUARD, useClass: ConsoleSessionRateLimitGuard },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        // After the guards (the caller is known): each organization's requests and reads in flight, reads' share of the pool.
        { provide: APP_INTERCEPTOR, useClass: TenantLoadInterceptor },
      ],
    };
  }
}
