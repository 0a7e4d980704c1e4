import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { readCookie } from '../auth/cookies.js';
import { isPlatformAdmin } from '../auth/platform-admin.js';
import { assertSameOrigin } from '../auth/same-origin.js';
import type { SessionsService } from '../auth/sessions/sessions.service.js';
import type { AppConfig } from '../core/config/app-config.js';
import { ApiError } from '../core/http/api-error.js';
import { sendEnvelope } from '../core/http/envelope.js';

/**
 * Bull Board is an express app, outside Nest's router, so the global AuthGuard never sees it: this is the
 * console-session check in middleware form, restricted to platform administrators (the operators' stored flag). The
 * queues carry every tenant's deliveries, so anyone else, signed in or not, gets the very 404 an unknown
 * route gets: the board's existence is not revealed. Tenants see their own backlog through
 * GET /webhooks/deliveries/health.
 */
export function requirePlatformAdmin(
  sessions: SessionsService,
  config: Pick<AppConfig, 'consoleAllowedOrigins'>,
  cookieName: string,
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const notFound = () => sendEnvelope(res, 404, `Route ${req.method} ${req.originalUrl.split('?')[0]} not found`);
    const token = readCookie(req, cookieName);
    (token ? sessions.authenticate(token) : Promise.resolve(null)).then((operator) => {
      if (!operator || !isPlatformAdmin(operator)) return notFound();
      try {
        assertSameOrigin(req, config.consoleAllowedOrigins);
      } catch (error) {
        if (error instanceof ApiError) return sendEnvelope(res, error.getStatus(), error.message);
        return next(error);
      }
      req.operator = operator;
      next();
    }, next);
  };
}

/**
 * Bull Board over our queues, read-only even for administrators: pausing, cleaning or retrying jobs that
 * carry tenants' webhooks is not done from a browser (dead-lettered deliveries are replayed per organization
 * through POST /webhooks/deliveries/:id/replay).
 */
export function queueBoard(basePath: string, queues: Queue[], consolePath: string): RequestHandler {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(basePath);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter: adapter,
    options: {
      uiConfig: {
        boardTitle: 'Queue health',
        hideDocsLink: true,
        miscLinks: [{ text: 'Back to the console', url: consolePath }],
      },
    },
  });
  const board = adapter.getRouter() as RequestHandler;
  return (req, res, next) => board(req, rendered(res, next, consolePath), next);
}

const WEB_FONT_LINK = /<link[^>]+fonts\.googleapis\.com[^>]*>/g;

/**
 * Bull Board's page as rendered, with two changes. Its template links Google Fonts: the console must not reach
 * outside the service (offline machines, privacy), so the link is dropped and the board uses its fallback fonts (the
 * CSP would block the request anyway, but the browser would still log a violation on every page). And a plain link
 * back to the console heads the page (issue 43: the board's own miscLinks entry sits in its header menu, easy to miss).
 */
function rendered(res: Response, next: NextFunction, consolePath: string): Response {
  const render = res.render.bind(res);
  const back = `<a id="back-to-console" href="${consolePath}">← Back to the console</a>`;
  res.render = (view: string, options?: object) =>
    render(view, options ?? {}, (error: Error | null, html: string) =>
      error ? next(error) : res.send(html.replace(WEB_FONT_LINK, '').replace(/<body([^>]*)>/, `<body$1>${back}`)),
    );
  return res;
}
