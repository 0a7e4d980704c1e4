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
