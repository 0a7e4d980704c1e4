import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { PeriodicPurge } from '../../core/scheduling/periodic-purge.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';

/** Worker: deletes Idempotency-Keys past their 24 h (a replay after that is a new send anyway). */
@Injectable()
export class IdempotencyKeysPurge extends PeriodicPurge {
  protected readonly what = 'expired idempotency keys';

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    config: AppConfig,
    @Inject(APP_LOGGER) logger: AppLogger,
  ) {
    super(config, logger);
  }

  protected deleteBatch(now: Date, limit: number): Promise<number> {
    return this.keys.deleteExpired(now, limit);
  }
}
