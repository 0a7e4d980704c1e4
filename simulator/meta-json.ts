import { randomBytes, randomInt } from 'node:crypto';

/**
 * Serialises JSON the way Meta's servers do: every non-ASCII UTF-16 unit as `\uXXXX` and `/` as `\/`.
 * The bytes therefore differ from `JSON.stringify` of the parsed value, which is what catches a
 * receiver that checks the signature over a re-serialised body instead of the raw bytes.
 */
export function metaJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/\//g, '\\/');
}

/** Opaque trace id in the style of Meta's `fbtrace_id`. */
export function fbtraceId(): string {
  return `A${randomBytes(8).toString('base64url')}`;
}

/** A unique message id shaped like Meta's (`wamid.` + base64 that embeds the recipient). */
export function newWamid(recipientDigits: string): string {
  const raw = `${recipientDigits}:${randomBytes(12).toString('hex').toUpperCase()}`;
  return `wamid.${Buffer.from(raw).toString('base64')}`;
}

/** A media id as Meta issues them: 15–16 digits. */
export function newMediaId(): string {
  return `10${randomInt(10 ** 12, 10 ** 13 - 1)}`;
}

export function unixSeconds(ms = Date.now()): number {
  return Math.floor(ms / 1000);
}
