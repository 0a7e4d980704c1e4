import { createCipheriv, randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box.js';
import { digestsEqual, randomToken, sha256Hex } from './tokens.js';

/** A ciphertext as the service wrote them before key ids and account binding (`v1.<iv>.<tag>.<ct>`). */
function legacySeal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', ...[iv, cipher.getAuthTag(), ciphertext].map((p) => p.toString('base64url'))].join('.');
}

describe('SecretBox', () => {
  const oldKey = { id: 'k1', key: randomBytes(32) };
  const newKey = { id: 'k2', key: randomBytes(32) };
  const box = new SecretBox([oldKey]);

  it('round-trips, names its key and never stores the plaintext', () => {
    const sealed = box.seal('EAAG-upstream-token', '310000000000001');
    expect(sealed).not.toContain('EAAG');
    expect(sealed.startsWith('v2.k1.')).toBe(true);
    expect(box.open(sealed, '310000000000001')).toBe('EAAG-upstream-token');
    expect(box.seal('same', 'a')).not.toBe(box.seal('same', 'a'));
  });

  it('refuses a tampered ciphertext, another key, or another account (copied ciphertext)', () => {
    const sealed = box.seal('secret', '310000000000001');
    const parts = sealed.split('.');
    parts[4] = Buffer.from('tampered').toString('base64url');
    expect(() => box.open(parts.join('.'), '310000000000001')).toThrow();
    expect(() => new SecretBox([{ id: 'k1', key: randomBytes(32) }]).open(sealed, '310000000000001')).toThrow();
    expect(() => box.open(sealed, '310000000000002')).toThrow();
    // Relabelling the key id is caught too: the id is part of the authenticated data.
    const relabelled = new SecretBox([{ id: 'k9', key: oldKey.key }]);
    expect(() => relabelled.open(sealed.replace('v2.k1.', 'v2.k9.'), '310000000000001')).toThrow();
  });

  it('rotation: new writes use the newest key, old keys still open, the old key alone no longer opens new ones', () => {
    const before = box.seal('token-A', 'waba-1');
    const ring = new SecretBox([newKey, oldKey]);
    expect(ring.open(before, 'waba-1')).toBe('token-A');
    expect(ring.isCurrent(before)).toBe(false);
    const after = ring.seal(ring.open(before, 'waba-1'), 'waba-1');
    expect(ring.isCurrent(after)).toBe(true);
    expect(new SecretBox([newKey]).open(after, 'waba-1')).toBe('token-A');
    expect(() => box.open(after, 'waba-1')).toThrow(/not in the key ring/);
  });

  it('refuses to open ciphertexts of the old v1 format (any key opened them, on any account); only re-sealing still reads them (issue 29, finding 7)', () => {
    const legacy = legacySeal(oldKey.key, 'legacy-token');
    const ring = new SecretBox([newKey, oldKey]);
    expect(() => ring.open(legacy, 'any-account')).toThrow(/retired v1 format/);
    expect(ring.isLegacy(legacy)).toBe(true);
    const resealed = ring.reseal(legacy, 'waba-9');
    expect(ring.isCurrent(resealed)).toBe(true);
    expect(ring.open(resealed, 'waba-9')).toBe('legacy-token');
    expect(() => ring.open(resealed, 'waba-10')).toThrow();
    expect(new SecretBox(oldKey.key).reseal(legacy, 'waba-9')).toMatch(/^v2\.k0\./);
    expect(() => new SecretBox([newKey]).reseal(legacy, 'waba-9')).toThrow(
      'No key of the ring opens this sealed secret',
    );
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
