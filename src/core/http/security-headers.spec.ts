import http, { type IncomingMessage } from 'node:http';
import { plainHttpSecurityHeaders, securityHeaders } from './security-headers.js';

/** What securityHeaders sets on a real response, name (lowercase) to value. */
function setByMiddleware(isProduction: boolean): Record<string, string> {
  const res = new http.ServerResponse({ method: 'POST' } as IncomingMessage);
  securityHeaders({ isProduction })({} as IncomingMessage, res, () => undefined);
  return Object.fromEntries(Object.entries(res.getHeaders()).map(([k, v]) => [k, String(v)]));
}

/** plainHttpSecurityHeaders' name/value list as the same record. */
function precomputed(isProduction: boolean): Record<string, string> {
  const list = plainHttpSecurityHeaders({ isProduction });
  const out: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) out[list[i]!.toLowerCase()] = list[i + 1]!;
  return out;
}

describe('the security headers worked out once for the webhook fast path', () => {
  it.each([false, true])('are the ones the middleware sets on a plain-http answer (production %s)', (isProduction) => {
    expect(precomputed(isProduction)).toEqual(setByMiddleware(isProduction));
    expect(precomputed(isProduction)['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('pin HTTPS for a year in production only', () => {
    expect(precomputed(true)['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect(precomputed(false)).not.toHaveProperty('strict-transport-security');
  });
});
