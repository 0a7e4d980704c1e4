import { createHmac } from 'node:crypto';
import { isValidSignature, secretsEqual } from './webhook-signature.js';

const secret = 'app-secret-123';
const body = Buffer.from(
  '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[]}],"name":"Jo\\u00e3o"}',
);
const sign = (bytes: Buffer, key = secret) => `sha256=${createHmac('sha256', key).update(bytes).digest('hex')}`;

describe('isValidSignature', () => {
  it('accepts the HMAC of the exact bytes, in either hex case', () => {
    expect(isValidSignature(body, sign(body), secret)).toBe(true);
    expect(isValidSignature(body, sign(body).toUpperCase().replace('SHA256=', 'sha256='), secret)).toBe(true);
  });

  it('rejects a signature over re-serialised JSON (Meta escapes unicode, JSON.stringify does not)', () => {
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))));
    expect(reserialised.equals(body)).toBe(false);
    expect(isValidSignature(body, sign(reserialised), secret)).toBe(false);
  });

  it('rejects a missing, malformed, truncated or wrongly keyed signature', () => {
    expect(isValidSignature(body, undefined, secret)).toBe(false);
    expect(isValidSignature(body, '', secret)).toBe(false);
    expect(isValidSignature(body, sign(body).slice('sha256='.length), secret)).toBe(false);
    expect(isValidSignature(body, sign(body).slice(0, -2), secret)).toBe(false);
    expect(isValidSignature(body, `sha1=${'0'.repeat(40)}`, secret)).toBe(false);
    expect(isValidSignature(body, sign(body, 'other-secret'), secret)).toBe(false);
    expect(isValidSignature(body, ['a', 'b'], secret)).toBe(false);
  });
});

describe('secretsEqual', () => {
  it('compares regardless of length', () => {
    expect(secretsEqual('verify-token', 'verify-token')).toBe(true);
    expect(secretsEqual('verify-toke', 'verify-token')).toBe(false);
    expect(secretsEqual('', 'verify-token')).toBe(false);
  });
});
