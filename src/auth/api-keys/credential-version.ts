import { sha256Hex } from '../../core/crypto/tokens.js';

/** A fingerprint of an encrypted upstream token: a new encryption (any reconnect) gives a new one. */
export function credentialVersionOf(accessTokenEncrypted: string): string {
  return sha256Hex(accessTokenEncrypted).slice(0, 16);
}
