import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

const WELL_FORMED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    startedAt: bigint;
    rawBody?: Buffer;
  }
}

/**
 * Gives every request an id (the caller's x-request-id when well-formed, else a new UUID), echoes it on the
 * response, and logs one structured line per request when it finishes.
 */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && WELL_FORMED_ID.test(given) ? given : randomUUID();
    req.startedAt = process.hrtime.bigint();
    res.setHeader('x-request-id', req.id);
    res.on('finish', () => {
      const latencyMs = Number(process.hrtime.bigint() - req.startedAt) / 1e6;
      const level = res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info';
      logger[level](
        { reqId: req.id, method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, latencyMs: Math.round(latencyMs * 10) / 10 },
        'request completed',
      );
    });
    next();
  };
}
