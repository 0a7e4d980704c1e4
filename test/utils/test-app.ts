import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { createApp } from '../../src/app.setup.js';
import { AppConfig } from '../../src/core/config/app-config.js';
import type { CoreOptions } from '../../src/core/core.module.js';
import { Db } from '../../src/core/db/db.js';
import { testEnv } from './test-env.js';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  /** The app's data access (its pool): what factories and setup write with, and assertions read rows back with. */
  db: Db;
  http: TestAgent;
  url: string;
  close(): Promise<void>;
}

/** The real API (AppModule, real PostgreSQL and Redis) listening on a random loopback port (or PORT when given). */
export async function startTestApp(overrides: Record<string, string> = {}, core: CoreOptions = {}): Promise<TestApp> {
  const config = AppConfig.fromEnv(testEnv(overrides));
  const app = await createApp(config, core);
  await app.listen(overrides.PORT ? config.port : 0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  const db = app.get(Db);
  return {
    app,
    config,
    db,
    http: request(url),
    url,
    close: () => app.close(),
  };
}
