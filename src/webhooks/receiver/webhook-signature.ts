import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * `X-Hub-Signature-256: sha256=<hex>` checked over the exact bytes received (never a re-serialised body,
 * which would differ from Meta's escaped JSON), in constant time.
 */
export function isValidSignature(rawBody: Buffer, header: unknown, appSecret: string): boolean {
  if (typeof header !== 'string') return false;
  const match = SIGNATURE.exec(header.trim());
  if (!match) return false;
  const given = Buffer.from(match[1]!, 'hex');
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Whether the header has the shape `sha256=<64 hex digits>` at all: checked before the body is read. */
export function isWellFormedSignature(header: unknown): boolean {
  return typeof header === 'string' && SIGNATURE.test(header.trim());
}

/** Constant-time string comparison that also hides the length: both sides are hashed first. */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
