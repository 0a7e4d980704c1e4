import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box.js';
import { digestsEqual, randomToken, sha256Hex } from './tokens.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.encrypt('EAAG-upstream-token');
    expect(sealed).not.toContain('EAAG');
    expect(box.decrypt(sealed)).toBe('EAAG-upstream-token');
    expect(box.encrypt('same')).not.toBe(box.encrypt('same'));
  });

  it('refuses a tampered ciphertext or another key', () => {
    const sealed = box.encrypt('secret');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => box.decrypt(parts.join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).decrypt(sealed)).toThrow();
  });
});

describe('tokens', () => {
  it('makes prefixed URL-safe tokens with the requested entropy', () => {
    const token = randomToken(24, 'ak_');
    expect(token).toMatch(/^ak_[A-Za-z0-9_-]{32}$/);
    expect(randomToken(24)).not.toBe(randomToken(24));
  });

  it('compares digests', () => {
    expect(digestsEqual(sha256Hex('a'), sha256Hex('a'))).toBe(true);
    expect(digestsEqual(sha256Hex('a'), sha256Hex('b'))).toBe(false);
  });
});
