import { LongPollShares } from './async/long-poll-shares.js';
import { DynamicModule, Global, Module } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { AppConfig } from './config/app-config.js';
import { APP_LOGGER } from './logging/app-logger.js';
import { createLogger } from './logging/logger.js';
import { Metrics } from './metrics/metrics.js';
import { Db } from './db/db.js';
import { PgListener } from './db/pg-listener.js';
import { ReplicaRouter } from './db/replica-router.js';
import { UnitOfWork } from './db/unit-of-work.js';
import { QueueService } from './queue/queue.service.js';
import { RateLimiterService } from './rate-limit/rate-limiter.service.js';
import { RedisService } from './redis/redis.service.js';

export interface CoreOptions {
  /** Where log lines go instead of stdout (tests read them from here). */
  logDestination?: DestinationStream;
}

/** The classes core provides and exports as they are (besides the config, the logger and the metrics, made for the process). */
const SERVICES = [Db, UnitOfWork, PgListener, RedisService, QueueService, RateLimiterService, LongPollShares];

/**
 * Shared by the API and the worker: validated config, logging, the database (Db, its unit of work and the LISTEN
 * connection), Redis, queue producers, metrics.
 */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig, processName: 'api' | 'worker', opts: CoreOptions = {}): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: APP_LOGGER, useValue: createLogger(config.logLevel, `bmapi-${processName}`, opts.logDestination) },
        // Only the series this process counts (the API's requests and sends, the worker's jobs and deliveries).
        { provide: Metrics, useFactory: () => new Metrics(processName) },
        ...SERVICES,
        // The lists and analytics the replica serves are the API's; the worker reads nothing there.
        ...(processName === 'api' && config.databaseReadUrl ? [ReplicaRouter] : []),
      ],
      exports: [AppConfig, APP_LOGGER, Metrics, ...SERVICES],
    };
  }
}
