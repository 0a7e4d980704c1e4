import { Injectable } from '@nestjs/common';
import type { ApiKey } from '../../generated/prisma/client.js';
import { skipTake } from '../../core/http/pagination.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';

/** A key with the wabaId of its business account, as the console shows it. */
export type ApiKeyRow = ApiKey & { businessAccount: { wabaId: string } };

/** What authenticating a key needs: the key and the state of its business account. */
export type ApiKeyWithAccount = ApiKey & {
  businessAccount: { id: string; wabaId: string; disconnectedAt: Date | null; accessTokenEncrypted: string; heldSince: Date | null; readableUntil: Date | null };
};

const WITH_WABA_ID = { businessAccount: { select: { wabaId: true } } } as const;

/**
 * Owns `api_keys`. Reads join the key's business account for its wabaId (and, for authentication, its state):
 * one statement on the hot key lookup instead of two.
 */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Authentication: the key behind an access key, whatever its organization (the caller has no scope yet). */
  findForAuthentication(accessKey: string): Promise<ApiKeyWithAccount | null> {
    return clientOf(this.prisma).apiKey.findUnique({
      where: { accessKey },
      include: { businessAccount: { select: { id: true, wabaId: true, disconnectedAt: true, accessTokenEncrypted: true, heldSince: true, readableUntil: true } } },
    });
  }

  /** Moves lastUsedAt forward only (batched writes may arrive out of order). */
  async touchLastUsed(id: string, at: Date): Promise<void> {
    await clientOf(this.prisma).apiKey.updateMany({ where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: at } }] }, data: { lastUsedAt: at } });
  }

  /**
   * Active (not revoked) key pairs of a business account, counted under a transaction-scoped lock of the
   * account's keys, so concurrent creations cannot both see room for one more (call inside a unit of work).
   */
  async countActiveLocked(businessAccountId: string): Promise<number> {
    const client = clientOf(this.prisma);
    await client.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${`api_keys:${businessAccountId}`}))::text`;
    return client.apiKey.count({ where: { businessAccountId, revokedAt: null } });
  }

  create(
    organizationId: string,
    key: { businessAccountId: string; name: string; accessKey: string; secretHash: string; createdById: string | null },
  ): Promise<ApiKeyRow> {
    return clientOf(this.prisma).apiKey.create({ data: { organizationId, ...key }, include: WITH_WABA_ID });
  }

  /** Newest first, optionally only one business account's. */
  async page(organizationId: string, query: { page: number; limit: number; wabaId?: string }): Promise<{ rows: ApiKeyRow[]; total: number }> {
    const where = { organizationId, ...(query.wabaId ? { businessAccount: { wabaId: query.wabaId } } : {}) };
    const db = clientOf(this.prisma);
    const [rows, total] = await Promise.all([
      db.apiKey.findMany({ where, include: WITH_WABA_ID, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...skipTake(query) }),
      db.apiKey.count({ where }),
    ]);
    return { rows, total };
  }

  findOwned(organizationId: string, id: string): Promise<ApiKeyRow | null> {
    return clientOf(this.prisma).apiKey.findFirst({ where: { organizationId, id }, include: WITH_WABA_ID });
  }

  revoke(organizationId: string, id: string, at: Date): Promise<ApiKeyRow> {
    return clientOf(this.prisma).apiKey.update({ where: { id, organizationId }, data: { revokedAt: at }, include: WITH_WABA_ID });
  }

  /** Revokes every live key of a business account; returns their access keys (to drop them from caches). */
  async revokeAllOf(businessAccountId: string, at: Date): Promise<string[]> {
    const db = clientOf(this.prisma);
    const keys = await db.apiKey.findMany({ where: { businessAccountId, revokedAt: null }, select: { id: true, accessKey: true } });
    if (keys.length) await db.apiKey.updateMany({ where: { id: { in: keys.map((k) => k.id) }, revokedAt: null }, data: { revokedAt: at } });
    return keys.map((k) => k.accessKey);
  }
}
