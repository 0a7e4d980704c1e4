import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiCookieAuth, ApiSecurity } from '@nestjs/swagger';
import { ApiErrors } from '../core/http/openapi.js';

export const AUTH_KIND = 'authKind';
export type AuthKind = 'public' | 'apiKey' | 'console';

/** The session cookie's base name; production adds the `__Host-` prefix (see `sessionCookieName`). */
export const SESSION_COOKIE = 'bm_session';
export const SWAGGER_ACCESS_KEY = 'accessKey';
export const SWAGGER_SECRET_KEY = 'secretKey';
export const SWAGGER_SESSION = 'session';

/** No credentials needed (health, Meta's webhook receiver which checks its own signature). */
export const Public = () => SetMetadata(AUTH_KIND, 'public' satisfies AuthKind);

/**
 * An API key pair (x-access-key + x-secret-key); the key's business account becomes the request's scope. In the
 * OpenAPI document one security requirement names both schemes (both headers together), so Swagger UI's
 * "Try it out" and generated clients send the pair, not either one.
 */
export const ApiKeyAuth = () =>
  applyDecorators(
    SetMetadata(AUTH_KIND, 'apiKey' satisfies AuthKind),
    ApiSecurity({ [SWAGGER_ACCESS_KEY]: [], [SWAGGER_SECRET_KEY]: [] }),
  );

/**
 * A console session cookie; the operator's organization becomes the request's scope. Console routes are
 * rate limited per session and per client address (console-rate-limit.guard.ts), hence the 429.
 */
export const ConsoleAuth = () =>
  applyDecorators(
    SetMetadata(AUTH_KIND, 'console' satisfies AuthKind),
    ApiCookieAuth(SWAGGER_SESSION),
    ApiErrors({
      429: 'Rate limit exceeded (per session or per client address): wait `Retry-After` seconds; RateLimit-* headers on every answer',
    }),
  );

export const SAME_ORIGIN_ONLY = 'sameOriginOnly';
/** Refuse cross-site browser requests on a public but state-changing route (login, signup). */
export const SameOriginOnly = () => SetMetadata(SAME_ORIGIN_ONLY, true);
