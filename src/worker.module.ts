import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from './core/config/app-config.js';
import { CoreModule } from './core/core.module.js';
import { WebhooksWorkerModule } from './webhooks/webhooks-worker.module.js';

/** The worker process: queue consumers only, no HTTP. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [CoreModule.forRoot(config, 'worker'), WebhooksWorkerModule],
    };
  }
}
