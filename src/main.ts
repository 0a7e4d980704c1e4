import 'reflect-metadata';
import type { Logger } from 'pino';
import { createApp, shutDownGracefully } from './app.setup.js';
import { loadEnvFile } from './core/config/env-file.js';
import { loadConfigOrExit } from './core/config/load-config.js';
import { APP_LOGGER } from './core/logging/app-logger.js';
import { flushTraces } from './core/tracing/tracing-state.js';
import { SWAGGER_PATH } from './swagger.js';

/** The HTTP API process. */
async function bootstrap(): Promise<void> {
  loadEnvFile();
  const config = loadConfigOrExit();
  const app = await createApp(config);
  await app.listen(config.port, config.host);
  const logger = app.get<Logger>(APP_LOGGER);
  const url = `http://127.0.0.1:${config.port}`;
  logger.info({ url, swagger: config.swaggerEnabled ? `${url}/${SWAGGER_PATH}` : null }, 'API listening');
  let closing = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      shutDownGracefully(app, config, signal).then(
        () => flushTraces().then(() => process.exit(0)),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

void bootstrap();
