import { Injectable } from '@nestjs/common';
import { SecretBox } from '../../core/crypto/secret-box.js';
import { BusinessAccountsRepository } from '../business-accounts/business-accounts.repository.js';

const BATCH = 200;

export interface RotationProgress {
  /** Accounts looked at so far, of `total` (counted at the start). */
  seen: number;
  total: number;
  /** Re-sealed under the newest key. */
  rotated: number;
  /** Left as they were because a reconnect replaced the token meanwhile (already under the newest key). */
  skipped: number;
  /** Could not be opened with any key of the ring (listed by wabaId, never the token). */
  failed: string[];
}

/**
 * Re-seals every stored upstream token under the newest key of ENCRYPTION_KEYS (`npm run keys:rotate`),
 * bound to its account. Old-format and older-key ciphertexts are opened with the ring and sealed again; the
 * write only happens if the stored ciphertext is still the one read, so a reconnect during the rotation is
 * never overwritten. Safe to run again (tokens already current are left alone) and while the service runs
 * with the same key ring: the token's version changes, so the processes' token caches follow.
 */
@Injectable()
export class CredentialRotation {
  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly secrets: SecretBox,
  ) {}

  async rotateAll(onProgress: (progress: RotationProgress) => void = () => {}): Promise<RotationProgress> {
    const progress: RotationProgress = { seen: 0, total: await this.accounts.countAll(), rotated: 0, skipped: 0, failed: [] };
    let after: string | undefined;
    for (;;) {
      const batch = await this.accounts.credentialsAfter(after, BATCH);
      if (batch.length === 0) break;
      for (const account of batch) {
        progress.seen++;
        if (this.secrets.isCurrent(account.accessTokenEncrypted)) continue;
        let token: string;
        try {
          token = this.secrets.open(account.accessTokenEncrypted, account.wabaId);
        } catch {
          progress.failed.push(account.wabaId);
          continue;
        }
        const replaced = await this.accounts.replaceCredentialIf(account.id, account.accessTokenEncrypted, this.secrets.seal(token, account.wabaId));
        if (replaced) progress.rotated++;
        else progress.skipped++;
      }
      after = batch[batch.length - 1]!.id;
      onProgress({ ...progress, failed: [...progress.failed] });
    }
    return progress;
  }
}
