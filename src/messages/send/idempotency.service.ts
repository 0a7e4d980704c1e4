import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Prisma } from '../../generated/prisma/client.js';
import { ApiError, FieldValidationError } from '../../core/http/api-error.js';
import type { Envelope } from '../../core/http/envelope.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const KEEP_MS = 24 * 3600 * 1000;
/** A claim older than this is taken to belong to a crashed request and may be taken over. */
const LOCK_MS = 60 * 1000;

export interface StoredResponse {
  statusCode: number;
  body: Envelope;
}

export type Claim = { kind: 'claimed' } | { kind: 'replay'; response: StoredResponse };

/**
 * Idempotency-Key records in PostgreSQL, scoped to the key pair and kept 24 h. A key is claimed before the
 * upstream call (so a concurrent duplicate gets 409 instead of a second send) and completed with the
 * response, which later requests with the same key and body get back unchanged.
 */
@Injectable()
export class IdempotencyService {
  constructor(private readonly prisma: PrismaService) {}

  static validateKey(value: unknown): string | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.length === 0 || value.length > 255 || !/^[\x21-\x7e]+$/.test(value)) {
      throw FieldValidationError.of(IDEMPOTENCY_HEADER, 'Idempotency-Key must be 1 to 255 visible ASCII characters');
    }
    return value;
  }

  static fingerprint(body: unknown): string {
    return createHash('sha256').update(canonicalJson(body)).digest('hex');
  }

  async claim(apiKeyId: string, key: string, requestHash: string): Promise<Claim> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const now = new Date();
      const created = await this.prisma.idempotencyKey.createMany({
        data: [{ apiKeyId, key, requestHash, state: 'in_flight', lockedUntil: new Date(now.getTime() + LOCK_MS), expiresAt: new Date(now.getTime() + KEEP_MS) }],
        skipDuplicates: true,
      });
      if (created.count === 1) return { kind: 'claimed' };

      const existing = await this.prisma.idempotencyKey.findUnique({ where: { apiKeyId_key: { apiKeyId, key } } });
      if (!existing) continue; // released meanwhile: try again
      if (existing.expiresAt <= now) {
        await this.prisma.idempotencyKey.deleteMany({ where: { apiKeyId, key, expiresAt: { lte: now } } });
        continue;
      }
      if (existing.requestHash !== requestHash) {
        throw FieldValidationError.of(IDEMPOTENCY_HEADER, 'this Idempotency-Key was already used with a different request body');
      }
      if (existing.state === 'completed' && existing.responseStatus !== null) {
        return { kind: 'replay', response: { statusCode: existing.responseStatus, body: existing.responseBody as unknown as Envelope } };
      }
      if (existing.lockedUntil > now) throw new ApiError(409, 'A request with this Idempotency-Key is still in progress');
      const taken = await this.prisma.idempotencyKey.updateMany({
        where: { apiKeyId, key, state: 'in_flight', lockedUntil: { lte: now } },
        data: { lockedUntil: new Date(now.getTime() + LOCK_MS) },
      });
      if (taken.count === 1) return { kind: 'claimed' };
      throw new ApiError(409, 'A request with this Idempotency-Key is still in progress');
    }
    throw new ApiError(409, 'A request with this Idempotency-Key is still in progress');
  }

  async complete(apiKeyId: string, key: string, response: StoredResponse): Promise<void> {
    await this.prisma.idempotencyKey.update({
      where: { apiKeyId_key: { apiKeyId, key } },
      data: { state: 'completed', responseStatus: response.statusCode, responseBody: response.body as unknown as Prisma.InputJsonValue },
    });
  }

  /** Forget a claim: validation failures and retryable outcomes are not stored against the key. */
  async release(apiKeyId: string, key: string): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({ where: { apiKeyId, key, state: 'in_flight' } });
  }
}

/** JSON with object keys sorted, so the same body in another key order has the same fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
