import { DynamicModule, Module } from '@nestjs/common';
import { AccountsWorkerModule } from './accounts/accounts.module.js';
import { AppConfig } from './core/config/app-config.js';
import { CoreModule, type CoreOptions } from './core/core.module.js';
import { WebhooksWorkerModule } from './webhooks/webhooks-worker.module.js';
import { SessionsRepository } from './auth/sessions/sessions.repository.js';
import { IdempotencyKeysRepository } from './messages/send/idempotency-keys.repository.js';
import { WorkerCredentialChecks } from './worker.credential-checks.js';
import { WorkerPurges } from './worker.purges.js';
import { WorkerSchedules } from './worker.schedules.js';
import { CampaignsWorkerModule } from './campaigns/campaigns.module.js';

/** The worker process: queue consumers and scheduled tasks (sweeper, retention, purges, credential checks), no HTTP. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig, core: CoreOptions = {}): DynamicModule {
    return {
      module: WorkerModule,
      imports: [CoreModule.forRoot(config, 'worker', core), WebhooksWorkerModule, AccountsWorkerModule, CampaignsWorkerModule],
      // Rows that outlive their use: expired console sessions, Idempotency-Keys past their 24 h. And the
      // scheduled check of every account's upstream token.
      providers: [SessionsRepository, IdempotencyKeysRepository, WorkerPurges, WorkerCredentialChecks, WorkerSchedules],
    };
  }
}
