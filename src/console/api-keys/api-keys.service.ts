import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { ApiKeyAuthenticator } from '../../auth/api-keys/api-key.authenticator.js';
import { randomToken, sha256Hex } from '../../core/crypto/tokens.js';
import { NotFoundError } from '../../core/http/api-error.js';
import { skipTake, toPage, type Page } from '../../core/http/pagination.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { AuditService } from '../audit/audit.service.js';
import { BusinessAccountsRepository } from '../business-accounts/business-accounts.repository.js';
import type { ApiKeyView, CreatedApiKeyView } from './dto/api-key.view.js';

export const API_KEY_NOT_FOUND = 'API key not found';
const KEY_BYTES = 24;

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly accounts: BusinessAccountsRepository,
    private readonly audit: AuditService,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  /** Issues a pair; the secret exists only in this response (we keep its SHA-256). */
  async create(operator: ConsoleScope, wabaId: string, name: string): Promise<CreatedApiKeyView> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const accessKey = randomToken(KEY_BYTES, 'ak_');
    const secretKey = randomToken(KEY_BYTES, 'sk_');
    const key = await this.prisma.$transaction(async (tx) => {
      const created = await tx.apiKey.create({
        data: {
          organizationId: operator.organizationId,
          businessAccountId: account.id,
          name: name.trim(),
          accessKey,
          secretHash: sha256Hex(secretKey),
          createdById: operator.operatorId,
        },
      });
      await this.audit.record(tx, operator, 'api_key.created', { type: 'api_key', id: created.id }, { name: created.name, wabaId, accessKey });
      return created;
    });
    return { id: key.id, name: key.name, wabaId, accessKey, secretKey, createdAt: key.createdAt.toISOString() };
  }

  async list(organizationId: string, query: { page: number; limit: number; wabaId?: string }): Promise<Page<ApiKeyView>> {
    const where = { organizationId, ...(query.wabaId ? { businessAccount: { wabaId: query.wabaId } } : {}) };
    const [rows, total] = await Promise.all([
      this.prisma.apiKey.findMany({ where, include: { businessAccount: { select: { wabaId: true } } }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...skipTake(query) }),
      this.prisma.apiKey.count({ where }),
    ]);
    return toPage(rows.map(toView), total, query);
  }

  /** Revokes a pair: refused from its next request on (every API process within API_KEY_CACHE_TTL_MS). */
  async revoke(operator: ConsoleScope, id: string): Promise<ApiKeyView> {
    const key = await this.prisma.apiKey.findFirst({ where: { organizationId: operator.organizationId, id }, include: { businessAccount: { select: { wabaId: true } } } });
    if (!key) throw new NotFoundError(API_KEY_NOT_FOUND);
    if (key.revokedAt) return toView(key);
    const revoked = await this.prisma.$transaction(async (tx) => {
      const updated = await tx.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() }, include: { businessAccount: { select: { wabaId: true } } } });
      await this.audit.record(tx, operator, 'api_key.revoked', { type: 'api_key', id: key.id }, { name: key.name, accessKey: key.accessKey });
      return updated;
    });
    this.authenticator.invalidate(key.accessKey);
    return toView(revoked);
  }
}

function toView(k: { id: string; name: string; accessKey: string; createdAt: Date; lastUsedAt: Date | null; revokedAt: Date | null; businessAccount: { wabaId: string } }): ApiKeyView {
  return {
    id: k.id,
    name: k.name,
    wabaId: k.businessAccount.wabaId,
    accessKey: k.accessKey,
    createdAt: k.createdAt.toISOString(),
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
  };
}
