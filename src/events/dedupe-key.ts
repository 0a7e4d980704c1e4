// The stored dedupe key of an event: the first 16 bytes of SHA-256 of the key's text (classify.ts words the text:
// `status:<wamid>:<status>:<timestamp>`, `inbound:<wamid>`, …). The SQL function events_dedupe_hash (migration
// 20261202210000_lean_events) computes the same: it converted the keys stored before, so a redelivery of an item
// stored then is still recognised. 16 bytes: a collision of two different items among 10^12 keys has a probability
// of about 10^-15.
import { createHash } from 'node:crypto';

export function dedupeHash(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest().subarray(0, 16);
}

/** The advisory lock of a key (its hash's first 8 bytes as a signed bigint, as text for the driver). */
export function dedupeLockId(hash: Buffer): string {
  return hash.readBigInt64BE(0).toString();
}
