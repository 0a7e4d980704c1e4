import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { Logger } from 'pino';
import { loadEnvFile } from './core/config/env-file.js';
import { loadConfigOrExit } from './core/config/load-config.js';
import { APP_LOGGER } from './core/logging/app-logger.js';
import { PinoNestLogger } from './core/logging/logger.js';
import { portOf, startMetricsServer } from './core/metrics/metrics-endpoint.js';
import { Metrics } from './core/metrics/metrics.js';
import { WorkerModule } from './worker.module.js';

/** The worker process: BullMQ consumers, no HTTP. Scale it independently of the API. */
async function bootstrap(): Promise<void> {
  loadEnvFile();
  const config = loadConfigOrExit();
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  const logger = app.get<Logger>(APP_LOGGER);
  app.useLogger(new PinoNestLogger(logger));
  app.enableShutdownHooks();
  await app.init();
  const metricsPort = config.workerMetricsPort >= 0 ? portOf(await startMetricsServer(app.get(Metrics), { port: config.workerMetricsPort, host: config.workerMetricsHost, token: config.metricsToken })) : null;
  logger.info({ concurrency: config.workerConcurrency, queuePrefix: config.queuePrefix, metricsPort }, 'worker started');
}

void bootstrap();
