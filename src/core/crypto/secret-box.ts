import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** A key of the ring: its id is written into every ciphertext it seals. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

const LEGACY = 'v1';
const CURRENT = 'v2';

/**
 * AES-256-GCM for secrets at rest (upstream access tokens), with a key ring for rotation.
 *
 * Format `v2.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts): the key id says which key of the ring
 * opens it, and the ciphertext is bound to a context (the business account's wabaId) as additional
 * authenticated data, so a ciphertext copied onto another account does not open there. New ciphertexts use
 * the first (newest) key; older keys still open what they sealed until `npm run keys:rotate` has re-sealed it.
 *
 * `v1.<iv>.<tag>.<ciphertext>` (before key ids, no context: any key of the ring opened it, on any account) is
 * refused by `open` since audit 2 (finding 7); only `reseal` still opens it, to write it again as v2. The processes
 * re-seal every stored v1 token when they start, and `npm run keys:rotate` does too.
 */
export class SecretBox {
  private readonly keys: SecretKey[];

  constructor(keys: SecretKey[] | Buffer) {
    this.keys = Buffer.isBuffer(keys) ? [{ id: 'k0', key: keys }] : keys;
    if (this.keys.length === 0) throw new Error('SecretBox needs at least one key');
    for (const { id, key } of this.keys) {
      if (key.length !== 32) throw new Error(`SecretBox key "${id}" is not 32 bytes`);
      if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`SecretBox key id "${id}" must be letters, digits, _ or -`);
    }
  }

  /** Sealed under the newest key and bound to `context`. */
  seal(plaintext: string, context: string): string {
    const { id, key } = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(additionalData(id, context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [CURRENT, id, ...[iv, cipher.getAuthTag(), ciphertext].map((p) => p.toString('base64url'))].join('.');
  }

  /**
   * Throws when no key of the ring opens it, it was tampered with, it was sealed for another context, or it is of
   * the retired v1 format.
   */
  open(sealed: string, context: string): string {
    const parts = sealed.split('.');
    if (parts[0] === CURRENT && parts.length === 5) {
      const [, id, iv, tag, ciphertext] = parts as [string, string, string, string, string];
      const entry = this.keys.find((k) => k.id === id);
      if (!entry) throw new Error(`Sealed secret uses key "${id}", which is not in the key ring`);
      return decrypt(entry.key, iv, tag, ciphertext, additionalData(id, context));
    }
    if (parts[0] === LEGACY)
      throw new Error(
        'Sealed secret is in the retired v1 format: re-seal it (the processes do at start; npm run keys:rotate)',
      );
    throw new Error('Unrecognised sealed secret');
  }

  /** Whether it is of the retired v1 format (re-sealed at start and by keys:rotate). */
  isLegacy(sealed: string): boolean {
    return sealed.startsWith(`${LEGACY}.`);
  }

  /**
   * The same secret sealed under the newest key, bound to `context`: opened with the ring (a v1 ciphertext with
   * whichever key sealed it, a v2 one as `open` does). Throws when no key opens it.
   */
  reseal(sealed: string, context: string): string {
    return this.seal(this.isLegacy(sealed) ? this.openLegacy(sealed) : this.open(sealed, context), context);
  }

  private openLegacy(sealed: string): string {
    const parts = sealed.split('.');
    if (parts.length === 4) {
      const [, iv, tag, ciphertext] = parts as [string, string, string, string];
      for (const { key } of this.keys) {
        try {
          return decrypt(key, iv, tag, ciphertext);
        } catch {
          // GCM's tag tells a wrong key apart: try the next one
        }
      }
      throw new Error('No key of the ring opens this sealed secret');
    }
    throw new Error('Unrecognised sealed secret');
  }

  /** Sealed under the newest key in the current format: nothing for a rotation to do. */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`${CURRENT}.${this.keys[0]!.id}.`);
  }
}

/** Key id and context, length-prefixed so no two different pairs give the same bytes. */
function additionalData(keyId: string, context: string): Buffer {
  const id = Buffer.from(keyId, 'utf8');
  const ctx = Buffer.from(context, 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(id.length);
  return Buffer.concat([header, id, ctx]);
}

function decrypt(key: Buffer, iv: string, tag: string, ciphertext: string, aad?: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
