import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../core/config/app-config.js';
import { ApiError } from '../core/http/api-error.js';
import { hasBody, normalisedPath } from '../core/http/body-parsers.js';
import { clientAddress } from '../core/http/client-address.js';
import { sendEnvelope } from '../core/http/envelope.js';
import { enforceRateLimit, type RateLimiterService } from '../core/rate-limit/rate-limiter.service.js';
import type { ApiKeyAuthenticator } from './api-keys/api-key.authenticator.js';
import { readSessionCookie } from './cookies.js';
import type { SessionsService } from './sessions/sessions.service.js';

/** Public routes that take a body: always counted, whatever credentials the request carries (normalised paths). */
export const PUBLIC_BODY_ROUTES: readonly string[] = ['/auth/login', '/auth/signup', '/auth/password-reset'];

/**
 * Meta's signed webhooks: excluded. Meta posts from a few addresses at high rates, so a per-address bucket would
 * refuse it; the receiver refuses an unsigned request from its headers before reading a byte of the body.
 */
const EXCLUDED = new Set(['/webhooks/whatsapp']);

const WITHOUT_BODY = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Does the request send (or may it send) a body the parser would read? */
function mayCarryBody(req: Request): boolean {
  return !WITHOUT_BODY.has(req.method) || hasBody(req);
}

/**
 * Verifies the credential the request carries, from its headers alone: a key pair through the authenticator
 * (cached per process: no database read per send), a session cookie through the sessions (the result is kept on
 * the request, and the guard uses it instead of a second lookup). Any failure (made-up, expired, revoked, the
 * database unreachable) leaves the caller unknown.
 */
async function verifyCaller(
  req: Request,
  apiKeys: ApiKeyAuthenticator,
  sessions: SessionsService,
  config: AppConfig,
): Promise<void> {
  const accessKey = req.headers['x-access-key'];
  const secretKey = req.headers['x-secret-key'];
  if (typeof accessKey === 'string' && typeof secretKey === 'string') {
    try {
      req.apiKey = await apiKeys.authenticate(accessKey, secretKey);
      req.bodyCaller = 'apiKey';
    } catch {
      // Unknown: the guard answers it.
    }
    return;
  }
  const token = readSessionCookie(req, config);
  if (token === undefined) return;
  try {
    const result = await sessions.authenticateSliding(token);
    req.sessionCheck = { token, result };
    if (result) req.bodyCaller = 'session';
  } catch {
    // Unknown: the guard looks again and answers it.
  }
}

/**
 * Issue 37, finding 1: nobody's body is read before the sender is known. Ahead of the body parser, every request
 * that may carry a body has its credential verified (a live session, a key pair that authenticates); the parser then
 * reads bodies of verified callers up to their route's limit and everybody else's up to
 * UNAUTHENTICATED_BODY_LIMIT_BYTES (core/http/body-parsers.ts).
 *
 * Audit 2, finding 7, completed: a token bucket per client address (UNAUTHENTICATED_RATE_LIMIT_*, 2/s, burst 30)
 * counts every such request whose credential did not verify (none, made-up, expired: merely carrying a cookie or an
 * `x-access-key` header exempts nothing) and the public body routes (login, signup and invitation acceptance,
 * password-reset links) always, matched on the normalised path (`/Auth/Login/` is `/auth/login`). Past it: 429 +
 * Retry-After at once, the body never read (the connection closes). Verified callers are limited by their own
 * buckets (per key pair and account, per session and the console's per-address bucket).
 * Redis unreachable: it lets requests through (the login and signup budgets behind it fail closed).
 */
export function unauthenticatedRateLimit(
  limiter: RateLimiterService,
  apiKeys: ApiKeyAuthenticator,
  sessions: SessionsService,
  config: AppConfig,
) {
  const rule = { perSecond: config.unauthenticatedRateLimitPerSecond, burst: config.unauthenticatedRateLimitBurst };
  const count = (req: Request, res: Response, next: NextFunction): void => {
    limiter.take(`unauthenticated:${clientAddress(req)}`, rule).then(
      (decision) => {
        try {
          enforceRateLimit(res, [decision]);
        } catch (error) {
          if (!(error instanceof ApiError)) return next(error);
          for (const [name, value] of Object.entries(error.details.headers ?? {})) res.setHeader(name, value);
          res.setHeader('connection', 'close');
          return sendEnvelope(res, error.getStatus(), error.message);
        }
        next();
      },
      (error: unknown) => next(error),
    );
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    // The receiver's exact path only (its raw-bytes parser takes no other): any variant is counted.
    if (!mayCarryBody(req) || EXCLUDED.has(req.path)) return next();
    const path = normalisedPath(req);
    if (PUBLIC_BODY_ROUTES.includes(path)) return count(req, res, next);
    verifyCaller(req, apiKeys, sessions, config).then(
      () => (req.bodyCaller === undefined ? count(req, res, next) : next()),
      (error: unknown) => next(error),
    );
  };
}
