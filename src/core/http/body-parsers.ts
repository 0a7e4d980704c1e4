import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppConfig } from '../config/app-config.js';
import type { ApiError } from './api-error.js';
import { sendEnvelope } from './envelope.js';

/** Far deeper than any request body of the API (template components are about 5 levels deep). */
export const MAX_JSON_DEPTH = 32;

/** Nesting depth of a parsed JSON value, iteratively; stops counting once past `limit`. */
export function nestingDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const d = depth + 1;
    if (d > max) max = d;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d]);
  }
  return max;
}

/** POST /business-accounts/{wabaId}/campaigns: the one route whose body may exceed BODY_LIMIT_BYTES. */
const CAMPAIGN_CREATION = /^\/business-accounts\/[^/]+\/campaigns\/?$/;

/**
 * Routes whose handlers need the exact raw bytes (signature checks), each with a check of its headers made
 * before the body is read (a refusal is answered at once, and the connection closed rather than drained).
 * Everything else gets parsed JSON.
 */
export type RawBodyRoutes = Record<string, (req: Request) => ApiError | undefined>;

/**
 * Body parsing with errors in the envelope: malformed JSON → 400, too large → 413. Done here rather than by
 * Nest's default parser because body-parser errors happen before Nest's router and would otherwise be
 * answered by Express's HTML error page.
 */
export function bodyParsers(config: AppConfig, rawRoutes: RawBodyRoutes) {
  const json = express.json({ limit: config.bodyLimitBytes, strict: true });
  // A campaign carries up to 100,000 recipients (docs/campaigns.md): its creation alone may be this large.
  const campaignJson = express.json({ limit: config.campaignBodyLimitBytes, strict: true });
  const raw = express.raw({ type: () => true, limit: config.webhookBodyLimitBytes });

  return (req: Request, res: Response, next: NextFunction): void => {
    const gate = req.method === 'POST' && Object.hasOwn(rawRoutes, req.path) ? rawRoutes[req.path] : undefined;
    const refusal = gate?.(req);
    if (refusal) {
      res.setHeader('connection', 'close');
      return sendEnvelope(res, refusal.getStatus(), refusal.message);
    }
    const parser = gate ? raw : req.method === 'POST' && CAMPAIGN_CREATION.test(req.path) ? campaignJson : json;
    parser(req, res, (err?: unknown) => {
      if (!err) {
        if (Buffer.isBuffer(req.body)) {
          req.rawBody = req.body;
          req.body = undefined;
        }
        // Validation walks bodies recursively; a pathological nesting would exhaust the stack (500).
        if (nestingDepth(req.body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return sendEnvelope(res, 400, `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`);
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
