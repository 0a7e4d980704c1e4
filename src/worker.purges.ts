import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { SessionsRepository } from './auth/sessions/sessions.repository.js';
import { AppConfig } from './core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from './core/logging/app-logger.js';
import { PeriodicPurge } from './core/scheduling/periodic-purge.js';
import { IdempotencyKeysRepository } from './messages/send/idempotency-keys.repository.js';

/** The first pass waits a little after start, so that a restarting worker gets to its jobs first. */
const FIRST_PASS_AFTER_MS = 60_000;

/**
 * The worker's scheduled purges (every PURGE_INTERVAL_SECONDS) of rows nobody can use any more, each through
 * the repository that owns its table: console sessions that ended (expired, idle past the limit, logged
 * out) and Idempotency-Keys past their 24 h. (Processed webhook payloads have their own retention.)
 */
@Injectable()
export class WorkerPurges implements OnModuleInit, OnModuleDestroy {
  readonly sessions: PeriodicPurge;
  readonly idempotencyKeys: PeriodicPurge;

  constructor(
    sessions: SessionsRepository,
    idempotencyKeys: IdempotencyKeysRepository,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) logger: AppLogger,
  ) {
    const idleMs = config.sessionIdleTtlSeconds * 1000;
    this.sessions = new PeriodicPurge('ended console sessions', (now, limit) => sessions.deleteEnded({ now, idleSince: new Date(now.getTime() - idleMs) }, limit), logger);
    this.idempotencyKeys = new PeriodicPurge('expired idempotency keys', (now, limit) => idempotencyKeys.deleteExpired(now, limit), logger);
  }

  private get all(): PeriodicPurge[] {
    return [this.sessions, this.idempotencyKeys];
  }

  onModuleInit(): void {
    for (const purge of this.all) purge.start(FIRST_PASS_AFTER_MS, this.config.purgeIntervalSeconds * 1000);
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.all.map((purge) => purge.stop()));
  }
}
