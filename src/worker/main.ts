import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Logger } from 'pino';
import { loadEnvFile } from '../core/config/env-file.js';
import { loadConfigOrExit } from '../core/config/load-config.js';
import { APP_LOGGER } from '../core/logging/app-logger.js';
import { PinoNestLogger } from '../core/logging/logger.js';
import { portOf, startMetricsServer } from '../core/metrics/metrics-endpoint.js';
import { Metrics } from '../core/metrics/metrics.js';
import { flushTraces } from '../core/tracing/tracing-state.js';
import { WorkerModule } from './worker.module.js';

/** The worker process: BullMQ consumers, no HTTP. Scale it independently of the API. */
async function bootstrap(): Promise<void> {
  loadEnvFile();
  const config = loadConfigOrExit();
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  const logger = app.get<Logger>(APP_LOGGER);
  app.useLogger(new PinoNestLogger(logger));
  // Not Nest's shutdown hooks: their close has no end when Redis or PostgreSQL are already gone.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void shutDown(app, logger, config.workerShutdownTimeoutMs, signal));
  }
  await app.init();
  const metricsPort =
    config.workerMetricsPort >= 0
      ? portOf(
          await startMetricsServer(app.get(Metrics), {
            port: config.workerMetricsPort,
            host: config.workerMetricsHost,
            token: config.metricsToken,
          }),
        )
      : null;
  logger.info(
    { concurrency: config.workerConcurrency, queuePrefix: config.queuePrefix, metricsPort },
    'worker started',
  );
}

/**
 * Closes the worker: consumers stop taking jobs, running ones get their grace period, connections close; then exits
 * 0. Past WORKER_SHUTDOWN_TIMEOUT_MS it exits 1 whatever is still closing: running jobs are left as a crash would
 * leave them (their locks expire and another worker takes them over), the database's open transactions roll back.
 */
async function shutDown(
  app: INestApplicationContext,
  logger: Logger,
  timeoutMs: number,
  signal: string,
): Promise<void> {
  logger.info({ signal, timeoutMs }, 'worker shutting down');
  setTimeout(() => {
    logger.error({ timeoutMs }, 'worker shutdown timed out; exiting with connections still closing');
    process.exit(1);
  }, timeoutMs);
  try {
    await app.close();
  } catch (err) {
    logger.error({ err }, 'worker shutdown failed');
    process.exit(1);
  }
  await flushTraces();
  process.exit(0);
}

void bootstrap();
