import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../../core/config/app-config.js';
import { CoreModule } from '../../core/core.module.js';
import { OperatorsModule } from './operators.module.js';

/** What `npm run platform-admin` runs on: the database (CoreModule) and the operators' repository. */
@Module({})
export class PlatformAdminModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: PlatformAdminModule,
      imports: [CoreModule.forRoot(config, 'worker'), OperatorsModule],
    };
  }
}
