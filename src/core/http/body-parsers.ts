import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppConfig } from '../config/app-config.js';
import type { DomainError } from '../errors/domain-errors.js';
import { sendEnvelope } from './envelope.js';
import { httpAnswerOfKind } from './error-mapper.js';

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

/** The one multipart route: a media upload (`POST /business-accounts/:wabaId/phone-numbers/:phoneNumberId/media`). */
const MULTIPART_ROUTE = /^\/business-accounts\/[^/]+\/phone-numbers\/[^/]+\/media\/?$/;

/** Whether the request carries a body (a length above 0, or chunked), whatever its headers say it is. */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * A body that is not JSON (no Content-Type, text/plain, curl's default form encoding…) is refused with 415 naming
 * the header, instead of reaching validation as an empty object ("phoneNumberId is required" for a body that
 * held it). `undefined` when the body may be read as JSON (or is the upload route's multipart).
 */
export function contentTypeRefusal(
  req: Request,
): { message: string; errors: Array<{ field: string; message: string }> } | undefined {
  if (!hasBody(req) || req.is(['application/json', '+json'])) return undefined;
  if (req.method === 'POST' && MULTIPART_ROUTE.test(req.path) && req.is('multipart/form-data')) return undefined;
  const given = req.headers['content-type'];
  const message = given
    ? `Content-Type ${given.split(';')[0]!.trim()} is not supported: send application/json`
    : 'Content-Type missing: send Content-Type: application/json';
  return { message, errors: [{ field: 'content-type', message: 'must be application/json' }] };
}

/** POST /business-accounts/{wabaId}/campaigns: the one route whose body may exceed BODY_LIMIT_BYTES. */
const CAMPAIGN_CREATION = /^\/business-accounts\/[^/]+\/campaigns\/?$/;

/**
 * Routes whose handlers need the exact raw bytes (signature checks), each with a check of its headers made
 * before the body is read (a refusal is answered at once, and the connection closed rather than drained).
 * Everything else gets parsed JSON.
 */
export type RawBodyRoutes = Record<string, (req: Request) => DomainError | undefined>;

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
      const answer = httpAnswerOfKind(refusal);
      for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
      res.setHeader('connection', 'close');
      return sendEnvelope(res, answer.statusCode, answer.message, { errors: refusal.fields });
    }
    if (!gate) {
      const wrongType = contentTypeRefusal(req);
      if (wrongType) return sendEnvelope(res, 415, wrongType.message, { errors: wrongType.errors });
    }
    const parser = gate ? raw : req.method === 'POST' && CAMPAIGN_CREATION.test(req.path) ? campaignJson : json;
    parser(req, res, (err?: unknown) => {
      if (!err) {
        if (Buffer.isBuffer(req.body)) {
          req.rawBody = req.body;
          req.body = undefined;
        }
        // Validation walks bodies recursively; a pathological nesting would exhaust the stack (500).
        if (nestingDepth(req.body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
          return sendEnvelope(res, 400, `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`);
        return next();
      }
      const e = err as { type?: string; status?: number };
      if (e.type === 'entity.too.large') {
        const limit =
          parser === raw
            ? config.webhookBodyLimitBytes
            : parser === json
              ? config.bodyLimitBytes
              : config.campaignBodyLimitBytes;
        return sendEnvelope(res, 413, tooLargeMessage(limit), {
          errors: [{ field: 'body', message: `must be at most ${limit} bytes` }],
        });
      }
      if (e.type === 'entity.parse.failed') return sendEnvelope(res, 400, 'Malformed JSON body');
      if (e.type === 'encoding.unsupported') {
        return sendEnvelope(res, 415, 'Unsupported body encoding', {
          errors: [{ field: 'content-encoding', message: 'must be identity, gzip, deflate or br' }],
        });
      }
      if (e.type === 'charset.unsupported') {
        return sendEnvelope(res, 415, 'Unsupported body encoding', {
          errors: [{ field: 'content-type', message: 'charset must be utf-8' }],
        });
      }
      return sendEnvelope(res, e.status && e.status < 500 ? e.status : 400, 'Invalid request body');
    });
  };
}

/** A body over its route's limit: the message says the limit, so the caller knows what to send instead. */
export function tooLargeMessage(limitBytes: number): string {
  return `Payload Too Large: the request body is over this route's limit of ${limitBytes} bytes`;
}
