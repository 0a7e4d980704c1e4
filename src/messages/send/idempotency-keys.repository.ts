import { Injectable } from '@nestjs/common';
import type { IdempotencyKey, Prisma } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';

/** Where a composed statement keeps each value of a claim: its placeholders (`$2`, …). */
export interface ClaimParams {
  apiKeyId: string;
  key: string;
  requestHash: string;
  now: string;
  lockedUntil: string;
  expiresAt: string;
}

/**
 * The claim of a key, as the body of a CTE that returns one row when the claim was taken: when the key is new,
 * when its record expired (24 h), or when an in-flight claim of the same body was abandoned (its lock ran out: a
 * crashed request). MessagesRepository puts it in front of the insert of the pending message, so that a claim
 * and its message commit together and a keyed send costs no round trip more than an unkeyed one.
 */
export const claimKeySql = (p: ClaimParams) => `INSERT INTO idempotency_keys AS k (api_key_id, key, request_hash, state, locked_until, created_at, expires_at)
     VALUES (${p.apiKeyId}::uuid, ${p.key}, ${p.requestHash}, 'in_flight', ${p.lockedUntil}, ${p.now}, ${p.expiresAt})
     ON CONFLICT (api_key_id, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, state = 'in_flight', response_status = NULL, response_body = NULL,
            locked_until = EXCLUDED.locked_until,
            created_at = CASE WHEN k.expires_at <= ${p.now} THEN EXCLUDED.created_at ELSE k.created_at END,
            expires_at = CASE WHEN k.expires_at <= ${p.now} THEN EXCLUDED.expires_at ELSE k.expires_at END
      WHERE k.expires_at <= ${p.now} OR (k.state = 'in_flight' AND k.locked_until <= ${p.now} AND k.request_hash = EXCLUDED.request_hash)
     RETURNING 1`;

/**
 * The completion of a key with its outcome, as the body of a CTE that runs only when `guard` (an SQL condition
 * of the composing statement) holds: MessagesRepository completes it in the statement that moves the message
 * `pending → sent`, and only if that statement moved it.
 */
export const completeKeySql = (p: { apiKeyId: string; key: string; outcome: string; guard: string }) =>
  `UPDATE idempotency_keys SET state = 'completed', response_status = NULL, response_body = ${p.outcome}::jsonb
      WHERE api_key_id = ${p.apiKeyId}::uuid AND key = ${p.key} AND ${p.guard}`;

/**
 * `idempotency_keys`, scoped to the key pair (its id is the first argument). A completed key keeps the send's
 * outcome (JSON, see messages/send/send-outcome.ts) in `response_body`; `response_status` is set only on records
 * completed before outcomes were kept (an HTTP answer), read as such until they expire. Every statement that writes this
 * table is in this file: the claim and the completion that ride on a message's own writes are the SQL above,
 * composed into MessagesRepository's statements (insertPendingClaimingKey, markSentCompletingKey).
 */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  find(apiKeyId: string, key: string): Promise<IdempotencyKey | null> {
    return this.prisma.idempotencyKey.findUnique({ where: { apiKeyId_key: { apiKeyId, key } } });
  }

  async complete(apiKeyId: string, key: string, outcome: unknown): Promise<void> {
    await this.prisma.idempotencyKey.updateMany({
      where: { apiKeyId, key },
      data: { state: 'completed', responseStatus: null, responseBody: outcome as Prisma.InputJsonValue },
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
