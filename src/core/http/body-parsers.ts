import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppConfig } from '../config/app-config.js';
import type { DomainError } from '../errors/domain-errors.js';
import { clientAddress } from './client-address.js';
import { sendEnvelope } from './envelope.js';
import { httpAnswerOfKind } from './error-mapper.js';

/**
 * Who the middleware ahead of the parser (auth/caller-before-body.ts) verified the caller to be, from the
 * credential itself (a live session, a key pair that authenticates), before a byte of the body is read.
 * Unset: nobody is known, and the body is read under UNAUTHENTICATED_BODY_LIMIT_BYTES.
 */
export type BodyCaller = 'session' | 'apiKey';

declare module 'express-serve-static-core' {
  interface Request {
    bodyCaller?: BodyCaller;
  }
}

/**
 * The path exact-path rules match against: lower-case, without trailing slashes. Express routes case-insensitively
 * and ignores a trailing slash, so `/Auth/Login/` reaches the same handler as `/auth/login` and must meet the same
 * rules.
 */
export function normalisedPath(req: Request): string {
  const path = req.path.toLowerCase().replace(/\/+$/, '');
  return path === '' ? '/' : path;
}

/** Whether the request carries a body (a length above 0, or chunked), whatever its method and headers say. */
export function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

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
const MULTIPART_ROUTE = /^\/business-accounts\/[^/]+\/phone-numbers\/[^/]+\/media\/?$/i;

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
const CAMPAIGN_CREATION = /^\/business-accounts\/[^/]+\/campaigns\/?$/i;

/**
 * Routes whose handlers need the exact raw bytes (signature checks), each with a check of its headers made
 * before the body is read (a refusal is answered at once, and the connection closed rather than drained).
 * Everything else gets parsed JSON.
 */
export type RawBodyRoutes = Record<string, (req: Request) => DomainError | undefined>;

/**
 * Bodies being read at once per client address, for the bodies that are not ordinary signed-in traffic: every body
 * of a caller not verified yet, and every campaign-sized body. Past BODY_PARSES_PER_ADDRESS the request is refused
 * 429 before its body is read. In memory, per process: the counter lives exactly as long as the reads it counts.
 */
class ParsesInFlight {
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** A release function, or undefined when the address already has `max` bodies being read. */
  enter(address: string): (() => void) | undefined {
    const now = this.byAddress.get(address) ?? 0;
    if (now >= this.max) return undefined;
    this.byAddress.set(address, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left <= 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    };
  }
}

export const TOO_MANY_BODIES = 'Too many request bodies in flight from this address';

/**
 * Body parsing with errors in the envelope: malformed JSON → 400, too large → 413. Done here rather than by
 * Nest's default parser because body-parser errors happen before Nest's router and would otherwise be
 * answered by Express's HTML error page.
 *
 * Issue 37, finding 1: a body's size is decided by who sent it, known before it is read (`req.bodyCaller`):
 * nobody verified → UNAUTHENTICATED_BODY_LIMIT_BYTES; a verified caller → BODY_LIMIT_BYTES; a verified console
 * session creating a campaign → CAMPAIGN_BODY_LIMIT_BYTES. Compressed JSON bodies are refused (415): a limit on
 * inflated bytes still lets a small upload cost a large parse, and nothing the API takes needs compression.
 */
export function bodyParsers(config: AppConfig, rawRoutes: RawBodyRoutes) {
  const options = { strict: true, inflate: false };
  const unverifiedJson = express.json({ ...options, limit: config.unauthenticatedBodyLimitBytes });
  const json = express.json({ ...options, limit: config.bodyLimitBytes });
  // A campaign carries up to 100,000 recipients (docs/campaigns.md): its creation alone may be this large.
  const campaignJson = express.json({ ...options, limit: config.campaignBodyLimitBytes });
  // Meta's webhooks keep their inflation (the fast path hands compressed deliveries to this route): the signature
  // header is checked before a byte is read, the limit counts inflated bytes, and raw bytes are not parsed.
  const raw = express.raw({ type: () => true, limit: config.webhookBodyLimitBytes });
  const inFlight = new ParsesInFlight(config.bodyParsesPerAddress);
  /** Each parser's limit, as the 413 says it. */
  const limits = new Map<typeof json, number>([
    [unverifiedJson, config.unauthenticatedBodyLimitBytes],
    [json, config.bodyLimitBytes],
    [campaignJson, config.campaignBodyLimitBytes],
    [raw, config.webhookBodyLimitBytes],
  ]);

  const parserOf = (req: Request, gate: unknown): { parser: typeof json; counted: boolean } => {
    if (gate) return { parser: raw, counted: false };
    if (req.bodyCaller === undefined) return { parser: unverifiedJson, counted: true };
    if (req.bodyCaller === 'session' && req.method === 'POST' && CAMPAIGN_CREATION.test(req.path))
      return { parser: campaignJson, counted: true };
    return { parser: json, counted: false };
  };

  return (req: Request, res: Response, next: NextFunction): void => {
    // The exact path only: a variant (`/Webhooks/WhatsApp/`) reaches the handler without its raw bytes and is refused.
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
    const { parser, counted } = parserOf(req, gate);
    let release: (() => void) | undefined;
    if (counted && hasBody(req)) {
      release = inFlight.enter(clientAddress(req));
      if (!release) {
        res.setHeader('Retry-After', '1');
        res.setHeader('connection', 'close');
        return sendEnvelope(res, 429, TOO_MANY_BODIES);
      }
      res.once('close', release);
    }
    parser(req, res, (err?: unknown) => {
      release?.();
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
        const limit = limits.get(parser)!;
        return sendEnvelope(res, 413, tooLargeMessage(limit), {
          errors: [{ field: 'body', message: `must be at most ${limit} bytes` }],
        });
      }
      if (e.type === 'entity.parse.failed') return sendEnvelope(res, 400, 'Malformed JSON body');
      if (e.type === 'encoding.unsupported') {
        return sendEnvelope(res, 415, 'Unsupported body encoding', {
          errors: [{ field: 'content-encoding', message: 'must be identity (compressed bodies are not accepted)' }],
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
