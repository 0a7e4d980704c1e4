import { Injectable } from '@nestjs/common';
import { SecretBox } from '../../core/crypto/secret-box.js';
import { ApiError } from '../../core/http/api-error.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';

const TTL_MS = 30_000;

/**
 * The decrypted upstream token of a business account, cached briefly per process so a send costs no
 * extra query or decryption. A reconnect (new token) is picked up within TTL_MS.
 */
@Injectable()
export class AccountCredentials {
  private readonly cache = new Map<string, { token: string; at: number }>();

  constructor(
    private readonly prisma: PrismaService,
    private readonly secrets: SecretBox,
  ) {}

  async tokenFor(businessAccountId: string): Promise<string> {
    const hit = this.cache.get(businessAccountId);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.token;
    const account = await this.prisma.businessAccount.findUnique({ where: { id: businessAccountId }, select: { accessTokenEncrypted: true, disconnectedAt: true } });
    if (!account || account.disconnectedAt) throw new ApiError(401, 'Invalid API key');
    const token = this.secrets.decrypt(account.accessTokenEncrypted);
    this.cache.set(businessAccountId, { token, at: Date.now() });
    return token;
  }
}
