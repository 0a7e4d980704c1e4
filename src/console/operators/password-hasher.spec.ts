import { randomBytes, scryptSync } from 'node:crypto';
import { parseHash, PasswordHasher } from './password-hasher.js';

const hasher = (cost: number, scryptConcurrency = 2) =>
  new PasswordHasher({ passwordHashCost: cost, scryptConcurrency });
const hashWith = (password: string, N: number) => {
  const salt = randomBytes(16);
  return [
    'scrypt',
    N,
    8,
    1,
    salt.toString('base64url'),
    scryptSync(password, salt, 64, { N, r: 8, p: 1 }).toString('base64url'),
  ].join('$');
};

describe('PasswordHasher', () => {
  it('hashes with N = 2^cost and verifies', async () => {
    const h = hasher(10);
    const stored = await h.hash('correct horse battery');
    expect(parseHash(stored)).toMatchObject({ N: 1024, r: 8, p: 1 });
    expect(await h.verify('correct horse battery', stored)).toEqual({ valid: true, needsRehash: false });
    expect(await h.verify('wrong horse battery', stored)).toEqual({ valid: false, needsRehash: false });
  });

  it('asks for a rehash of a weaker hash only after a successful verification, never of a stronger one', async () => {
    const weaker = hashWith('pw', 512);
    expect(await hasher(10).verify('pw', weaker)).toEqual({ valid: true, needsRehash: true });
    expect(await hasher(10).verify('not pw', weaker)).toEqual({ valid: false, needsRehash: false });
    expect(await hasher(8).verify('pw', hashWith('pw', 1024))).toEqual({ valid: true, needsRehash: false });
  });

  it('refuses malformed hashes and ones whose cost would size memory from stored data, without computing them', async () => {
    const h = hasher(10);
    for (const stored of [
      '',
      'bcrypt$x',
      'scrypt$1000$8$1$AAAA$AAAA',
      `scrypt$${2 ** 21}$8$1$AAAA$AAAA`,
      'scrypt$1024$99$1$AAAA$AAAA',
      'scrypt$1024$8$1$AAAA$AAAA$extra',
    ]) {
      expect(await h.verify('pw', stored)).toEqual({ valid: false, needsRehash: false });
    }
    // No stored hash (unknown email): a dummy of the same cost is computed, and it never matches.
    expect(await h.verify('', undefined)).toEqual({ valid: false, needsRehash: false });
  });

  it('runs at most SCRYPT_CONCURRENCY derivations at once (each holds 128·N·r bytes); the rest wait, and all complete', async () => {
    const h = hasher(12, 2);
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, h.running)), 1);
    const hashes = await Promise.all(Array.from({ length: 8 }, (_, i) => h.hash(`password ${i}`)));
    clearInterval(sampler);
    expect(most).toBe(2);
    expect(await Promise.all(hashes.map((stored, i) => h.verify(`password ${i}`, stored)))).toEqual(
      hashes.map(() => ({ valid: true, needsRehash: false })),
    );
  });
});
