import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppConfig } from '../config/app-config.js';
import { sendEnvelope } from './envelope.js';

/** Routes whose handlers need the exact raw bytes (signature checks); everything else gets parsed JSON. */
const RAW_BODY_ROUTES = new Set(['/webhooks/whatsapp']);

/**
 * Body parsing with errors in the envelope: malformed JSON → 400, too large → 413. Done here rather than by
 * Nest's default parser because body-parser errors happen before Nest's router and would otherwise be
 * answered by Express's HTML error page.
 */
export function bodyParsers(config: AppConfig) {
  const json = express.json({ limit: config.bodyLimitBytes, strict: true });
  const raw = express.raw({ type: () => true, limit: config.webhookBodyLimitBytes });

  return (req: Request, res: Response, next: NextFunction): void => {
    const parser = RAW_BODY_ROUTES.has(req.path) && req.method === 'POST' ? raw : json;
    parser(req, res, (err?: unknown) => {
      if (!err) {
        if (Buffer.isBuffer(req.body)) {
          req.rawBody = req.body;
          req.body = undefined;
        }
        return next();
      }
      const e = err as { type?: string; status?: number };
      if (e.type === 'entity.too.large') return sendEnvelope(res, 413, 'Payload Too Large');
      if (e.type === 'entity.parse.failed') return sendEnvelope(res, 400, 'Malformed JSON body');
      if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
        return sendEnvelope(res, 415, 'Unsupported body encoding');
      }
      return sendEnvelope(res, e.status && e.status < 500 ? e.status : 400, 'Invalid request body');
    });
  };
}
