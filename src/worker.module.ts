import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from './core/config/app-config.js';
import { CoreModule } from './core/core.module.js';
import { WebhooksWorkerModule } from './webhooks/webhooks-worker.module.js';
import { SessionsRepository } from './auth/sessions/sessions.repository.js';
import { IdempotencyKeysRepository } from './messages/send/idempotency-keys.repository.js';
import { WorkerPurges } from './worker.purges.js';

/** The worker process: queue consumers and scheduled purges, no HTTP. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [CoreModule.forRoot(config, 'worker'), WebhooksWorkerModule],
      // Rows that outlive their use: expired console sessions, Idempotency-Keys past their 24 h.
      providers: [SessionsRepository, IdempotencyKeysRepository, WorkerPurges],
    };
  }
}
