import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { logContext } from '../logging/log-context.js';
import type { Metrics } from '../metrics/metrics.js';

const WELL_FORMED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    startedAt: bigint;
    rawBody?: Buffer;
  }
}

/** The caller's x-request-id when well-formed, else a new UUID. */
export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && WELL_FORMED_ID.test(given) ? given : randomUUID();
}

/** The methods the API answers; anything else (made-up verbs) is counted as `other`, so callers cannot mint series. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const methodLabel = (method: string | undefined): string =>
  method && KNOWN_METHODS.has(method) ? method : 'other';

/** A route parameter of this name is a credential (the signed inbound-media links: `/media/inbound/:token`). */
const CREDENTIAL_PARAM = /:token\b/;

/**
 * The path a request line shows: the raw path (without its query), except on a route whose path carries a credential,
 * where it is the route pattern (audit 3, finding 8: a signed media link in the log was a working link for
 * whoever reads the logs, until it expired).
 */
export function loggedPath(url: string | undefined, pattern: unknown): string {
  return typeof pattern === 'string' && CREDENTIAL_PARAM.test(pattern) ? pattern : (url ?? '').split('?')[0]!;
}

/**
 * Echoes the id on the response (unless `echoed`: the caller writes it with its answer), logs one structured line
 * when the response has gone out, and counts it in the request histogram by route pattern (Express's matched route,
 * or the fast path's own `route`; never the raw path, whose ids would make a series per message).
 */
export function trackRequest(
  logger: Logger,
  metrics: Metrics,
  req: IncomingMessage,
  res: ServerResponse,
  id: string,
  startedAt: bigint,
  { route, echoed = false }: { route?: string; echoed?: boolean } = {},
): void {
  if (!echoed) res.setHeader('x-request-id', id);
  res.on('finish', () => {
    const latencyMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
    // Express's matched route (typed `any` by Express): its `path` is the route pattern.
    const matched = (req as Partial<Request>).route as { path?: unknown } | undefined;
    const pattern = route ?? matched?.path;
    metrics.httpRequests.observe(
      {
        method: methodLabel(req.method),
        route: typeof pattern === 'string' ? pattern : 'unmatched',
        status: res.statusCode,
      },
      latencyMs / 1000,
    );
    const level = res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info';
    logger[level](
      {
        reqId: id,
        method: req.method,
        path: loggedPath(req.url, pattern),
        status: res.statusCode,
        latencyMs: Math.round(latencyMs * 10) / 10,
      },
      'request completed',
    );
  });
}

/**
 * Gives every request an id (the caller's x-request-id when well-formed, else a new UUID), echoes it on the
 * response, logs one structured line per request when it finishes, and runs the rest of the request in its log
 * context, so that every line logged on its behalf (guards, services, repositories, the upstream client) carries
 * its id. (body-parser's raw-body hands its result back in the caller's context, so the context survives the
 * body being read.)
 */
export function requestContext(logger: Logger, metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    req.id = requestIdOf(req.headers['x-request-id']);
    req.startedAt = process.hrtime.bigint();
    trackRequest(logger, metrics, req, res, req.id, req.startedAt);
    logContext.run({ reqId: req.id }, next);
  };
}
