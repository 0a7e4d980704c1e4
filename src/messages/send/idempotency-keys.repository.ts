import { Injectable } from '@nestjs/common';
import type { IdempotencyKey, Prisma } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';

/** An Idempotency-Key's answer as kept for replays. */
export interface StoredResponse {
  statusCode: number;
  body: unknown;
}

/**
 * `idempotency_keys`, scoped to the key pair (its id is the first argument). Two more statements write this
 * table and live in MessagesRepository on purpose: the claim rides on the insert of the pending message and
 * the completion on its `pending → sent` write, so that a claim and its message commit together and a keyed
 * send costs no round trip more than an unkeyed one (insertPendingClaimingKey, markSentCompletingKey).
 */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  find(apiKeyId: string, key: string): Promise<IdempotencyKey | null> {
    return this.prisma.idempotencyKey.findUnique({ where: { apiKeyId_key: { apiKeyId, key } } });
  }

  async complete(apiKeyId: string, key: string, response: StoredResponse): Promise<void> {
    await this.prisma.idempotencyKey.updateMany({
      where: { apiKeyId, key },
      data: { state: 'completed', responseStatus: response.statusCode, responseBody: response.body as Prisma.InputJsonValue },
    });
  }

  /** Forget a claim: retryable outcomes are not stored against the key. */
  async release(apiKeyId: string, key: string): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({ where: { apiKeyId, key, state: 'in_flight' } });
  }

  /** Deletes up to `limit` keys whose time is over (`expires_at` before `now`), oldest first; returns how many. */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    const { rowCount } = await this.prisma.pool.query(
      `DELETE FROM idempotency_keys WHERE (api_key_id, key) IN (
         SELECT api_key_id, key FROM idempotency_keys WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
      [now, limit],
    );
    return rowCount ?? 0;
  }
}
