import { Injectable } from '@nestjs/common';
import { createHmac, hkdfSync } from 'node:crypto';
import { AppConfig } from '../core/config/app-config.js';

/**
 * A keyed hash of a contact's address (HMAC-SHA256, key derived from the newest encryption key with its own label):
 * what the audit log keeps of an erased or exported contact. Whoever holds the key and the number can prove the
 * entry is about it; nobody can read the number from it, nor test guesses without the key.
 */
@Injectable()
export class ContactHash {
  private readonly key: Buffer;

  constructor(config: AppConfig) {
    this.key = Buffer.from(
      hkdfSync('sha256', config.encryptionKeys[0]!.key, Buffer.alloc(0), 'contact-audit-hash', 32),
    );
  }

  of(address: string): string {
    return `hmac-sha256:${createHmac('sha256', this.key).update(address).digest('hex').slice(0, 32)}`;
  }
}
