import { isIPv4, isIPv6 } from 'node:net';
import type { Request } from 'express';

/**
 * The client address that per-address limits count: `req.ip` (X-Forwarded-For as far as TRUST_PROXY allows),
 * with an IPv6 address reduced to its /64. One IPv6 subscriber usually holds a whole /64, so counting single
 * addresses would give an attacker 2^64 fresh budgets; IPv4-mapped addresses count as their IPv4 address.
 */
export function clientAddress(req: Request): string {
  return addressKey(req.ip ?? req.socket.remoteAddress ?? 'unknown');
}

export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv4(ip) || !isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight hextets of an IPv6 address, lower-case without leading zeros (zone id dropped). */
function expandIPv6(ip: string): string[] {
  const [address] = ip.split('%');
  let text = address!.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number);
    text = text.slice(0, -v4[1]!.length) + `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((h) => parseInt(h, 16).toString(16));
}
