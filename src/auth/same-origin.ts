import type { Request } from 'express';
import { ApiError } from '../core/http/api-error.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cross-site request refusal for cookie-authenticated, state-changing requests. Browsers send Origin (and
 * Sec-Fetch-Site) on such requests: an Origin must be this service's; without one, a Sec-Fetch-Site other than
 * `same-origin` is refused too (audit 3, finding 10: `same-site` is a sibling subdomain, `none` no page of ours, and
 * both used to pass). Server-side clients (curl, tests) send neither and are not browsers carrying a victim's cookie,
 * so they pass.
 */
export function assertSameOrigin(req: Request, allowedOrigins: string[]): void {
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.headers.origin;
  if (origin) {
    if (allowedOrigins.includes(origin)) return;
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    if (host && host === req.headers.host) return;
    throw new ApiError(403, 'Cross-site request refused');
  }
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw new ApiError(403, 'Cross-site request refused');
}
