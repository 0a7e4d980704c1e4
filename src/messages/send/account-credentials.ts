import { Injectable } from '@nestjs/common';
import { credentialVersionOf } from '../../auth/api-keys/api-key.authenticator.js';
import type { ApiKeyScope } from '../../auth/request-scope.js';
import { SecretBox } from '../../core/crypto/secret-box.js';
import { ApiError } from '../../core/http/api-error.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';

/**
 * The decrypted upstream token of a business account, cached per process so a send costs no extra query or
 * decryption. The cache is keyed by the token's version, which the key-pair lookup reads (at most 1 s old):
 * a reconnect with a new token is used from the next send that sees the new version.
 */
@Injectable()
export class AccountCredentials {
  private readonly cache = new Map<string, { token: string; version: string }>();

  constructor(
    private readonly prisma: PrismaService,
    private readonly secrets: SecretBox,
  ) {}

  async tokenFor(scope: Pick<ApiKeyScope, 'businessAccountId' | 'credentialVersion'>): Promise<string> {
    const hit = this.cache.get(scope.businessAccountId);
    if (hit && hit.version === scope.credentialVersion) return hit.token;
    const account = await this.prisma.businessAccount.findUnique({ where: { id: scope.businessAccountId }, select: { accessTokenEncrypted: true, disconnectedAt: true } });
    if (!account || account.disconnectedAt) throw new ApiError(401, 'Invalid API key');
    const token = this.secrets.decrypt(account.accessTokenEncrypted);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(scope.businessAccountId, { token, version: credentialVersionOf(account.accessTokenEncrypted) });
    return token;
  }
}
