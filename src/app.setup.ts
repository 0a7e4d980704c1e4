import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { AppModule } from './app.module.js';
import { ApiKeyAuthenticator } from './auth/api-keys/api-key.authenticator.js';
import { SessionsService } from './auth/sessions/sessions.service.js';
import { unauthenticatedRateLimit } from './auth/unauthenticated-rate-limit.js';
import { AppConfig } from './core/config/app-config.js';
import type { CoreOptions } from './core/core.module.js';
import { bodyParsers } from './core/http/body-parsers.js';
import { answerClientErrorsInEnvelope } from './core/http/client-error.js';
import { loggedPath, requestContext } from './core/http/request-context.js';
import { plainHttpSecurityHeaders, securityHeaders } from './core/http/security-headers.js';
import { APP_LOGGER } from './core/logging/app-logger.js';
import { Metrics } from './core/metrics/metrics.js';
import { RateLimiterService } from './core/rate-limit/rate-limiter.service.js';
import { PinoNestLogger } from './core/logging/logger.js';
import { HealthService } from './health/health.service.js';
import { setupSwagger } from './swagger.js';
import { traceServerRequests } from './core/tracing/server-spans.js';
import { installWebhookFastPath } from './webhooks/receiver/webhook-fast-path.controller.js';
import { signatureHeaderRefusal, WebhookReceiverService } from './webhooks/receiver/webhook-receiver.service.js';

/**
 * SIGTERM / SIGINT: readiness answers 503 at once, requests keep being served for SHUTDOWN_DRAIN_MS (load
 * balancers notice and stop routing here), then the application closes (the receiver drains its batches,
 * pools close) and the process exits.
 */
export async function shutDownGracefully(
  app: NestExpressApplication,
  config: AppConfig,
  signal: string,
): Promise<void> {
  const logger = app.get<Logger>(APP_LOGGER);
  app.get(HealthService).beginShutdown();
  logger.info({ signal, drainMs: config.shutdownDrainMs }, 'shutting down: not ready any more');
  if (config.shutdownDrainMs > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
  await app.close();
}

/** Builds the HTTP application exactly as production runs it; e2e tests use this too. */
export async function createApp(config: AppConfig, core: CoreOptions = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, core), {
    bodyParser: false,
    bufferLogs: true,
  });
  const logger = app.get<Logger>(APP_LOGGER);
  const metrics = app.get(Metrics);
  app.useLogger(new PinoNestLogger(logger));
  app.disable('x-powered-by');
  answerClientErrorsInEnvelope(app.getHttpServer());
  if (config.webhookFastPath) {
    installWebhookFastPath(app.getHttpServer(), {
      receiver: app.get(WebhookReceiverService),
      logger,
      metrics,
      limitBytes: config.webhookBodyLimitBytes,
      securityHeaders: plainHttpSecurityHeaders(config),
    });
  }
  // Outermost, so that both the fast path and Express run inside the request's span (tracing on only).
  traceServerRequests(app.getHttpServer(), loggedPath);
  // A hop count or the proxies' addresses (never "trust everything"): req.ip is what login and signup limits count.
  if (config.trustProxy !== false) app.set('trust proxy', config.trustProxy);
  app.use(requestContext(logger, metrics));
  app.use(securityHeaders(config));
  app.use(
    unauthenticatedRateLimit(
      app.get(RateLimiterService),
      app.get(ApiKeyAuthenticator),
      app.get(SessionsService),
      config,
    ),
  );
  app.use(
    bodyParsers(config, { '/webhooks/whatsapp': (req) => signatureHeaderRefusal(req.headers['x-hub-signature-256']) }),
  );
  if (config.swaggerEnabled) setupSwagger(app);
  return app;
}
