import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { AppModule } from './app.module.js';
import { AppConfig } from './core/config/app-config.js';
import { bodyParsers } from './core/http/body-parsers.js';
import { answerClientErrorsInEnvelope } from './core/http/client-error.js';
import { requestContext } from './core/http/request-context.js';
import { securityHeaders } from './core/http/security-headers.js';
import { APP_LOGGER } from './core/logging/app-logger.js';
import { PinoNestLogger } from './core/logging/logger.js';
import { setupSwagger } from './swagger.js';
import { installWebhookFastPath } from './webhooks/receiver/webhook-fast-path.js';
import { WebhookReceiverService } from './webhooks/receiver/webhook-receiver.service.js';

/** Builds the HTTP application exactly as production runs it; e2e tests use this too. */
export async function createApp(config: AppConfig): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    bufferLogs: true,
  });
  const logger = app.get<Logger>(APP_LOGGER);
  app.useLogger(new PinoNestLogger(logger));
  app.disable('x-powered-by');
  answerClientErrorsInEnvelope(app.getHttpServer());
  if (config.webhookFastPath) {
    installWebhookFastPath(app.getHttpServer(), { receiver: app.get(WebhookReceiverService), logger, limitBytes: config.webhookBodyLimitBytes });
  }
  if (config.trustProxy) app.set('trust proxy', true);
  app.use(requestContext(logger));
  app.use(securityHeaders(config));
  app.use(bodyParsers(config));
  app.enableShutdownHooks();
  if (config.swaggerEnabled) setupSwagger(app);
  return app;
}
