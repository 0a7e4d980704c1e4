import { LongPollShares } from './async/long-poll-shares.js';
import { DynamicModule, Global, Module } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { AppConfig } from './config/app-config.js';
import { APP_LOGGER } from './logging/app-logger.js';
import { createLogger } from './logging/logger.js';
import { Metrics } from './metrics/metrics.js';
import { Db } from './db/db.js';
import { PgListener } from './db/pg-listener.js';
import { UnitOfWork } from './db/unit-of-work.js';
import { QueueService } from './queue/queue.service.js';
import { RateLimiterService } from './rate-limit/rate-limiter.service.js';
import { RedisService } from './redis/redis.service.js';

export interface CoreOptions {
  /** Where log lines go instead of stdout (tests read them from here). */
  logDestination?: DestinationStream;
}

/** The classes core provides and exports as they are (besides the config and the logger, made from the process's). */
const SERVICES = [Db, UnitOfWork, PgListener, RedisService, QueueService, Metrics, RateLimiterService, LongPollShares];

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
        ...SERVICES,
      ],
      exports: [AppConfig, APP_LOGGER, ...SERVICES],
    };
  }
}
