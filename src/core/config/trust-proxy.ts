import { isIP } from 'node:net';

/** What Express's `trust proxy` setting gets: off, a hop count, or the addresses/CIDRs of trusted proxies. */
export type TrustProxy = false | number | string[];

/** Express's names for address ranges (`loopback` = 127.0.0.1/8 and ::1/128, …). */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY: `false`/`0` (the socket's address is the client), a hop count (`1` = one proxy in front: the
 * client is the address that proxy saw, whatever else X-Forwarded-For says), or a comma-separated list of
 * the proxies' addresses/CIDRs. `true` is refused: it trusts any X-Forwarded-For, so every client could
 * choose the address its login attempts are counted under.
 */
export function parseTrustProxy(value: string): TrustProxy {
  const lower = value.toLowerCase();
  if (['false', 'no', '0'].includes(lower)) return false;
  if (['true', 'yes'].includes(lower)) {
    throw new Error(
      'must not be true (that trusts any X-Forwarded-For, so clients choose their own address): give the number of proxies in front of the API (e.g. 1) or their addresses/CIDRs (e.g. 10.0.0.0/8,loopback)',
    );
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw new Error(`must be a hop count of at most 10 (got ${hops})`);
    return hops;
  }
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = entries.filter((entry) => !isProxyAddress(entry));
  if (bad.length > 0)
    throw new Error(`must be false, a hop count, or proxy addresses/CIDRs (not understood: ${bad.join(', ')})`);
  return entries;
}

function isProxyAddress(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}
