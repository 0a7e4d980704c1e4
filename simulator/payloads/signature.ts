import { createHmac } from 'node:crypto';
import { metaJson } from '../meta-json.js';

/**
 * The `X-Hub-Signature-256` header value for these exact body bytes (HMAC-SHA256 with the app secret, hex): the one
 * signer of the simulator, the tests and the benches.
 */
export function signatureHeader(body: Buffer | string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;
}

/** A webhook POST as Meta makes it: the payload serialised with Meta's escaping, signed over exactly those bytes. */
export interface SignedDelivery {
  body: Buffer;
  signature: string;
}

export function signedDelivery(payload: unknown, appSecret: string): SignedDelivery {
  const body = Buffer.from(metaJson(payload));
  return { body, signature: signatureHeader(body, appSecret) };
}
