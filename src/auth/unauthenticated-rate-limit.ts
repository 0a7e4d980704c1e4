import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../core/config/app-config.js';
import { ApiError } from '../core/http/api-error.js';
import { clientAddress } from '../core/http/client-address.js';
import { sendEnvelope } from '../core/http/envelope.js';
import { enforceRateLimit, type RateLimiterService } from '../core/rate-limit/rate-limiter.service.js';
import { readSessionCookie } from './cookies.js';

/** Public routes that take a body: always counted, whatever credentials the request claims to carry. */
export const PUBLIC_BODY_ROUTES: readonly string[] = ['/auth/login', '/auth/signup', '/auth/password-reset'];

/**
 * Meta's signed webhooks: excluded. Meta posts from a few addresses at high rates, so a per-address bucket would
 * refuse it; the receiver refuses an unsigned request from its headers before reading a byte of the body.
 */
const EXCLUDED = new Set(['/webhooks/whatsapp']);

const WITHOUT_BODY = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Does the per-address bucket count this request? Requests with a body that carry no credentials, and the public body routes. */
export function countsAsUnauthenticated(req: Request, config: AppConfig): boolean {
  if (WITHOUT_BODY.has(req.method) || EXCLUDED.has(req.path)) return false;
  if (PUBLIC_BODY_ROUTES.includes(req.path)) return true;
  return req.headers['x-access-key'] === undefined && readSessionCookie(req, config) === undefined;
}

/**
 * Audit 2, finding 7: a token bucket per client address (UNAUTHENTICATED_RATE_LIMIT_*, 2/s, burst 30) taken
 * BEFORE the body is parsed, for requests nobody is signed in for (login, signup and invitation acceptance,
 * password-reset links, and any request with a body but no session cookie or key pair). Past it: 429 +
 * Retry-After at once, the body never read (the connection closes). Requests with a key pair or a session are
 * limited by their own buckets (per key pair and account, per session and the console's per-address bucket).
 * Redis unreachable: it lets requests through (the login and signup budgets behind it fail closed).
 */
export function unauthenticatedRateLimit(limiter: RateLimiterService, config: AppConfig) {
  const rule = { perSecond: config.unauthenticatedRateLimitPerSecond, burst: config.unauthenticatedRateLimitBurst };
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!countsAsUnauthenticated(req, config)) return next();
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
}
