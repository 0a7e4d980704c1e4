import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { PeriodicPurge } from '../../core/scheduling/periodic-purge.js';
import { SessionsRepository } from './sessions.repository.js';

/** Worker: deletes console sessions that can no longer be used (expired, idle past the limit, or logged out). */
@Injectable()
export class SessionsPurge extends PeriodicPurge {
  protected readonly what = 'ended console sessions';

  constructor(
    private readonly sessions: SessionsRepository,
    config: AppConfig,
    @Inject(APP_LOGGER) logger: AppLogger,
  ) {
    super(config, logger);
  }

  protected deleteBatch(now: Date, limit: number): Promise<number> {
    return this.sessions.deleteEnded({ now, idleSince: new Date(now.getTime() - this.config.sessionIdleTtlSeconds * 1000) }, limit);
  }
}
