import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyScope } from '../../auth/request-scope.js';
import { SecretBox } from '../../core/crypto/secret-box.js';
import { CredentialRejected, Unauthenticated } from '../../core/errors/domain-errors.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { BusinessAccountsRepository } from './business-accounts.repository.js';
import { credentialVersionOf } from '../../auth/api-keys/credential-version.js';

/**
 * The business accounts' upstream tokens, the one place that seals and opens them (AES-256-GCM at rest).
 * For sends, the decrypted token is cached per process so a send costs no extra query or decryption. The
 * cache is keyed by the token's version, which the key-pair lookup reads (at most 1 s old): a reconnect
 * with a new token is used from the next send that sees the new version.
 */
@Injectable()
export class AccountCredentials {
  private readonly cache = new Map<string, { token: string; version: string }>();

  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly secrets: SecretBox,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** What is stored for a new token of the business account `wabaId` (the ciphertext is bound to it). */
  seal(accessToken: string, wabaId: string): string {
    return this.secrets.seal(accessToken, wabaId);
  }

  /**
   * The token of an account already read (a console action on the operator's behalf). A ciphertext that
   * does not open (sealed for another account, tampered with, or under a key no longer in ENCRYPTION_KEYS)
   * is a credential the operator has to replace: 424 "reconnect", logged as an error for the administrator.
   */
  open(account: { wabaId: string; accessTokenEncrypted: string }): string {
    try {
      return this.secrets.open(account.accessTokenEncrypted, account.wabaId);
    } catch (err) {
      this.logger.error(
        { err, wabaId: account.wabaId },
        'stored upstream token cannot be decrypted (wrong account, tampered, or its key is not in ENCRYPTION_KEYS)',
      );
      throw new CredentialRejected('the stored token cannot be decrypted');
    }
  }

  /** The token for a send through a key pair of the account. */
  async tokenFor(scope: Pick<ApiKeyScope, 'businessAccountId' | 'credentialVersion'>): Promise<string> {
    const hit = this.cache.get(scope.businessAccountId);
    if (hit && hit.version === scope.credentialVersion) return hit.token;
    const credential = await this.accounts.findCredential(scope.businessAccountId);
    if (!credential) throw new Unauthenticated('Invalid API key'); // disconnected since the key lookup
    const token = this.open(credential);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(scope.businessAccountId, { token, version: credentialVersionOf(credential.accessTokenEncrypted) });
    return token;
  }
}
