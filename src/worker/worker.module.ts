import { DynamicModule, Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { CampaignsWorkerModule } from '../campaigns/campaigns-worker.module.js';
import { AppConfig } from '../core/config/app-config.js';
import { CoreModule, type CoreOptions } from '../core/core.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { RetentionModule } from '../retention/retention.module.js';
import { WebhooksWorkerModule } from '../webhooks/webhooks-worker.module.js';
import { WorkerCredentialChecks } from './worker-credential-checks.js';
import { WorkerPurges } from './worker-purges.js';
import { WorkerSchedules } from './worker-schedules.js';

/**
 * The worker process: queue consumers and scheduled tasks (sweeper, retention, purges, credential checks), no HTTP.
 * It provides no repository of its own: each comes from the domain module that owns its table (console sessions from
 * auth, Idempotency-Keys from messages, credentials from accounts).
 */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig, core: CoreOptions = {}): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        CoreModule.forRoot(config, 'worker', core),
        AuthModule,
        AccountsModule,
        MessagesModule,
        WebhooksWorkerModule,
        CampaignsWorkerModule,
        RetentionModule,
      ],
      providers: [WorkerPurges, WorkerCredentialChecks, WorkerSchedules],
    };
  }
}
