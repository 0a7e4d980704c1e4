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
    const progress: RotationProgress = {
      seen: 0,
      total: await this.accounts.countAll(),
      rotated: 0,
      skipped: 0,
      failed: [],
    };
    let after: string | undefined;
    for (;;) {
      const batch = await this.accounts.credentialsAfter(after, BATCH);
      if (batch.length === 0) break;
      for (const account of batch) {
        progress.seen++;
        if (this.secrets.isCurrent(account.accessTokenEncrypted)) continue;
        const outcome = await this.reseal(account);
        if (outcome === 'failed') progress.failed.push(account.wabaId);
        else progress[outcome]++;
      }
      after = batch[batch.length - 1]!.id;
      onProgress({ ...progress, failed: [...progress.failed] });
    }
    return progress;
  }

  /**
   * Re-seals every token still in the retired v1 format (which `SecretBox.open` refuses) under the newest key.
   * The API and the worker run it when they start, so an upgrade needs no step of its own; `keys:rotate` covers
   * them too. Conditional writes: several processes starting at once re-seal each token once.
   */
  async resealLegacy(): Promise<{ rotated: number; skipped: number; failed: string[] }> {
    const result = { rotated: 0, skipped: 0, failed: [] as string[] };
    let after: string | undefined;
    for (;;) {
      const batch = await this.accounts.legacyCredentialsAfter(after, BATCH);
      if (batch.length === 0) break;
      for (const account of batch) {
        const outcome = await this.reseal(account);
        if (outcome === 'failed') result.failed.push(account.wabaId);
        else result[outcome]++;
      }
      after = batch[batch.length - 1]!.id;
    }
    return result;
  }

  private async reseal(account: {
    id: string;
    wabaId: string;
    accessTokenEncrypted: string;
  }): Promise<'rotated' | 'skipped' | 'failed'> {
    let resealed: string;
    try {
      resealed = this.secrets.reseal(account.accessTokenEncrypted, account.wabaId);
    } catch {
      return 'failed';
    }
    return (await this.accounts.replaceCredentialIf(account.id, account.accessTokenEncrypted, resealed))
      ? 'rotated'
      : 'skipped';
  }
}
