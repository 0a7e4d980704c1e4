import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AUTHENTICATION_REQUIRED, SESSION_INVALID } from '../auth/auth.guard.js';
import { readCookie } from '../auth/cookies.js';
import { assertSameOrigin } from '../auth/same-origin.js';
import type { SessionsService } from '../auth/sessions/sessions.service.js';
import { ApiError } from '../core/http/api-error.js';
import { sendEnvelope } from '../core/http/envelope.js';

/**
 * Bull Board is an express app, outside Nest's router, so the global AuthGuard never sees it: this is the
 * same console-session check in middleware form. A browser asking for a page is sent to the console's login
 * (and back afterwards); anything else gets the usual 401 envelope.
 */
export function requireOperator(sessions: SessionsService, opts: { loginPath: string; allowedOrigins: string[]; cookieName: string }): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    try {
      assertSameOrigin(req, opts.allowedOrigins);
    } catch (error) {
      if (error instanceof ApiError) return sendEnvelope(res, error.getStatus(), error.message);
      return next(error);
    }
    const token = readCookie(req, opts.cookieName);
    (token ? sessions.authenticate(token) : Promise.resolve(null)).then((operator) => {
      if (operator) {
        req.operator = operator;
        return next();
      }
      if (req.method === 'GET' && req.accepts(['json', 'html']) === 'html') {
        return res.redirect(303, `${opts.loginPath}?next=${encodeURIComponent(req.originalUrl)}`);
      }
      sendEnvelope(res, 401, token ? SESSION_INVALID : AUTHENTICATION_REQUIRED);
    }, next);
  };
}

/**
 * Bull Board over our queues, read-only: the queues are shared by every organization, so an operator of one
 * may look at their health but must not pause, clean or retry what carries other tenants' webhooks
 * (dead-lettered deliveries are replayed per organization through POST /webhooks/deliveries/:id/replay).
 */
export function queueBoard(basePath: string, queues: Queue[], consolePath: string): RequestHandler {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(basePath);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Queue health', hideDocsLink: true, miscLinks: [{ text: 'Back to the console', url: consolePath }] } },
  });
  const board = adapter.getRouter() as RequestHandler;
  return (req, res, next) => board(req, withoutWebFonts(res, next), next);
}

const WEB_FONT_LINK = /<link[^>]+fonts\.googleapis\.com[^>]*>/g;

/**
 * Bull Board's page template links Google Fonts. The console must not reach outside the service (offline
 * machines, privacy), so the link is dropped from the rendered page and the board uses its fallback fonts;
 * the CSP would block the request anyway, but the browser would still log a violation on every page.
 */
function withoutWebFonts(res: Response, next: NextFunction): Response {
  const render = res.render.bind(res);
  res.render = (view: string, options?: object) =>
    render(view, options ?? {}, (error: Error | null, html: string) => (error ? next(error) : res.send(html.replace(WEB_FONT_LINK, ''))));
  return res;
}
