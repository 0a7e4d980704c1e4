import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';
import type { AppConfig } from '../config/app-config.js';

/**
 * One Content-Security-Policy for every answer (API JSON, Swagger UI, the console and Bull Board): everything
 * from this origin only (the service must work offline; no CDN, no web fonts), no inline scripts, no
 * framing. Inline styles are allowed for SVG chart attributes, Swagger UI's and Bull Board's page styles.
 */
export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  frameAncestors: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
};

/** HSTS: a year, subdomains included; sent only where the browser reached us over TLS (see below). */
const HSTS_MAX_AGE_SECONDS = 365 * 24 * 3600;

/**
 * Security headers on every response (helmet): CSP above, `X-Content-Type-Options: nosniff`,
 * `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer`, cross-origin isolation headers, and
 * `Strict-Transport-Security` in production (which runs behind TLS; see the README's checklist) or on a
 * request that arrived over TLS (`req.secure`, which honours TRUST_PROXY). HSTS over plain http on a
 * developer's machine would pin localhost to https for a year.
 *
 * Plain node:http types, so that the webhook fast path (node:http in front of Express), which answers
 * Meta's POSTs without Express, can run the same function: `securityHeaders(config)(req, res, () => …)`.
 */
export function securityHeaders(
  config: Pick<AppConfig, 'isProduction'>,
): (req: IncomingMessage & { secure?: boolean }, res: ServerResponse, next: (error?: unknown) => void) => void {
  const common = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    strictTransportSecurity: false,
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  });
  const hsts = helmet.strictTransportSecurity({ maxAge: HSTS_MAX_AGE_SECONDS, includeSubDomains: true });
  return (req, res, next) => {
    common(req, res, (error?: unknown) => {
      if (error) return next(error);
      if (config.isProduction || req.secure) return hsts(req, res, next);
      next();
    });
  };
}

/**
 * The headers `securityHeaders` gives an answer to a plain-http request (no TLS, so HSTS only in production), name
 * and value in turn (as `writeHead` takes them), worked out once by running it against a recording response: the
 * webhook fast path writes them with its answer in one go instead of running helmet's dozen middlewares per request.
 * The same function, so the same headers (test/e2e/webhooks-fast-path.e2e-spec.ts compares them with the Nest route's).
 */
export function plainHttpSecurityHeaders(config: Pick<AppConfig, 'isProduction'>): string[] {
  const headers = new Map<string, [string, string]>();
  const recorder = {
    setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), [name, String(value)]),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  };
  let done = false;
  securityHeaders(config)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error('the security headers failed');
    done = true;
  });
  // helmet's middlewares are synchronous; one that was not would have left its header out.
  if (!done) throw new Error('the security headers did not complete synchronously');
  return [...headers.values()].flat();
}
