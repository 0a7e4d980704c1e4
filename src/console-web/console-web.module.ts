import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { SessionsService } from '../auth/sessions/sessions.service.js';
import { AppConfig } from '../core/config/app-config.js';
import { APP_LOGGER } from '../core/logging/app-logger.js';
import { QUEUES } from '../core/queue/queue.constants.js';
import { QueueService } from '../core/queue/queue.service.js';
import { sessionCookieName } from '../auth/cookies.js';
import { consoleSpa } from './console-spa.js';
import { queueBoard, requirePlatformAdmin } from './queue-board.js';

export const CONSOLE_PATH = '/console';
export const QUEUE_BOARD_PATH = `${CONSOLE_PATH}/queues`;

/**
 * The web console: the single-page app built into `dist/web` (`npm run build:web`) served under /console,
 * and Bull Board under /console/queues for platform administrators (ADMIN_EMAILS; a 404 for anyone else). Both are plain express handlers, mounted in
 * onModuleInit: Nest has registered its routes by then and adds its 404 handler only afterwards, so API
 * routes always win and unknown paths outside /console still get the envelope 404. The SPA talks to the
 * console API on the same origin with the session cookie.
 */
@Module({})
export class ConsoleWebModule implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly sessions: SessionsService,
    private readonly queues: QueueService,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    // Application contexts without HTTP (the demo seed) import AppModule too.
    const http = this.adapterHost.httpAdapter;
    if (!http) return;
    const app = http.getInstance<Express>();
    const webRoot = path.join(projectRoot(), 'dist', 'web');
    if (!existsSync(path.join(webRoot, 'index.html'))) {
      this.logger.warn({ webRoot }, 'web console not built (npm run build:web); /console answers 503 until it is');
    }
    app.use(
      QUEUE_BOARD_PATH,
      requirePlatformAdmin(this.sessions, this.config, sessionCookieName(this.config)),
      queueBoard(
        QUEUE_BOARD_PATH,
        Object.values(QUEUES).map((name) => this.queues.queue(name)),
        CONSOLE_PATH,
      ),
    );
    app.use(CONSOLE_PATH, consoleSpa(webRoot));
  }
}

/** The folder holding package.json: this file runs from src/ (tests, tsx) and from dist/src/ (build). */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the console-web module');
    dir = parent;
  }
  return dir;
}
