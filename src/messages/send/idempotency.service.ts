import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Conflict, InvalidInput } from '../../core/errors/domain-errors.js';
import type { KeyClaim, KeyCompletion } from '../messages.repository.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import { earlierOutcomeOf, recordOf, type EarlierOutcome, type FinalOutcome } from './send-outcome.js';
import type { IdempotencyKeys } from './send.ports.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const KEEP_MS = 24 * 3600 * 1000;
/** A claim older than this is taken to belong to a crashed request and may be taken over. */
const LOCK_MS = 60 * 1000;

/**
 * Idempotency-Key rules; the records are in PostgreSQL, scoped to the key pair and kept 24 h. A key is claimed
 * by the same statement that stores the pending message (before the upstream call, so a concurrent duplicate
 * gets 409 instead of a second send) and completed with the send's outcome, which later requests with the same
 * key and body get answered with again (the edge presents it as it presented the first).
 *
 * Why PostgreSQL and not Redis: the record is the promise "never sent twice for one key"; Redis here may lose
 * its data (no AOF required, see README), which would turn a retry into a second message. Riding on the
 * message's own statements costs no extra round trip anyway.
 */
@Injectable()
export class IdempotencyService {
  constructor(@Inject(IdempotencyKeysRepository) private readonly keys: IdempotencyKeys) {}

  static validateKey(value: unknown): string | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.length === 0 || value.length > 255 || !/^[\x21-\x7e]+$/.test(value)) {
      throw InvalidInput.of(IDEMPOTENCY_HEADER, 'Idempotency-Key must be 1 to 255 visible ASCII characters');
    }
    return value;
  }

  static fingerprint(body: unknown): string {
    return createHash('sha256').update(canonicalJson(body)).digest('hex');
  }

  /** The claim to store with the pending message: new, expired, or abandoned by a crashed request. */
  static claim(key: string, requestHash: string, now = new Date()): KeyClaim {
    return {
      key,
      requestHash,
      now,
      lockedUntil: new Date(now.getTime() + LOCK_MS),
      expiresAt: new Date(now.getTime() + KEEP_MS),
    };
  }

  /** The completion to write with the `pending → sent` move of a keyed send (MessagesRepository.markSentCompletingKey). */
  static completion(apiKeyId: string, key: string, outcome: FinalOutcome): KeyCompletion {
    return { apiKeyId, key, outcome: recordOf(outcome) };
  }

  /**
   * What an earlier request with this key decides for this one: its outcome (replay), InvalidInput for another
   * body, Conflict while it is still in flight; null when no live record holds the key (it may be claimed).
   */
  async earlierOutcome(apiKeyId: string, key: string, requestHash: string): Promise<EarlierOutcome | null> {
    const existing = await this.keys.find(apiKeyId, key);
    const now = new Date();
    if (!existing || existing.expiresAt <= now) return null;
    if (existing.requestHash !== requestHash) {
      throw InvalidInput.of(IDEMPOTENCY_HEADER, 'this Idempotency-Key was already used with a different request body');
    }
    if (existing.state === 'completed') return earlierOutcomeOf(existing);
    if (existing.lockedUntil > now) throw inProgress();
    return null;
  }

  complete(apiKeyId: string, key: string, outcome: FinalOutcome): Promise<void> {
    return this.keys.complete(apiKeyId, key, recordOf(outcome));
  }

  /** Forget a claim: retryable outcomes are not stored against the key, so a retry tries again. */
  release(apiKeyId: string, key: string): Promise<void> {
    return this.keys.release(apiKeyId, key);
  }
}

export const inProgress = () => new Conflict('A request with this Idempotency-Key is still in progress');

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
