import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { SessionsRepository } from '../auth/sessions/sessions.repository.js';
import { AppConfig } from '../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { PeriodicPurge } from '../core/scheduling/periodic-purge.js';
import { IdempotencyKeysRepository } from '../messages/send/idempotency-keys.repository.js';

/**
 * The worker's purges of rows nobody can use any more, each through the repository that owns its table: console
 * sessions that ended (expired, idle past the limit, logged out) and Idempotency-Keys past their 24 h. They run
 * every PURGE_INTERVAL_SECONDS as scheduled tasks (worker/worker-schedules.ts). (Processed webhook payloads and events have their
 * own retention: storage partitions dropped whole, webhooks/storage/partition-maintenance.ts.)
 */
@Injectable()
export class WorkerPurges implements OnModuleDestroy {
  readonly sessions: PeriodicPurge;
  readonly idempotencyKeys: PeriodicPurge;

  constructor(
    sessions: SessionsRepository,
    idempotencyKeys: IdempotencyKeysRepository,
    config: AppConfig,
    @Inject(APP_LOGGER) logger: AppLogger,
  ) {
    const idleMs = config.sessionIdleTtlSeconds * 1000;
    this.sessions = new PeriodicPurge(
      'ended console sessions',
      (now, limit) => sessions.deleteEnded({ now, idleSince: new Date(now.getTime() - idleMs) }, limit),
      logger,
    );
    this.idempotencyKeys = new PeriodicPurge(
      'expired idempotency keys',
      (now, limit) => idempotencyKeys.deleteExpired(now, limit),
      logger,
    );
  }

  onModuleDestroy(): void {
    this.sessions.stop();
    this.idempotencyKeys.stop();
  }
}
