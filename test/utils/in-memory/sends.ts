import {
  pendingRow,
  type KeyClaim,
  type KeyCompletion,
  type MessageFailure,
  type MessagesRepository,
  type PendingMessage,
  type StoredMessage,
} from '../../../src/messages/messages.repository.js';
import type {
  IdempotencyKey,
  IdempotencyKeysRepository,
} from '../../../src/messages/send/idempotency-keys.repository.js';
import { asJsonb, key as keyOf, MemoryDatabase } from './memory-database.js';

type SendStatements = Pick<
  MessagesRepository,
  | 'insertPending'
  | 'insertPendingClaimingKey'
  | 'markSent'
  | 'markSentCompletingKey'
  | 'recordLateAcceptance'
  | 'markFailed'
>;
type KeyStatements = Pick<IdempotencyKeysRepository, 'find' | 'complete' | 'release'>;

/**
 * The send path's statements on `messages` and `idempotency_keys`, in memory, with the rules the SQL holds:
 * a message moves off `pending` once; a key is claimed when new, expired, or abandoned in flight by the same body;
 * a keyed `pending → sent` completes the key only if it moved the message. For service tests of SendMessageService
 * (test/service; the statements themselves are tested against PostgreSQL in test/medium). Like the webhook
 * pipeline's stand-ins (repositories.ts) it runs on a MemoryDatabase: one id sequence, and `db.failAt(statement)`
 * (e.g. 'messages.markSent') makes a statement fail as PostgreSQL would refuse it. Its rows are whole messages and
 * key records, kept here (MemoryMessages keeps only the columns the webhook pipeline reads).
 */
export class MemorySends implements SendStatements, KeyStatements {
  readonly messages = new Map<number, StoredMessage>();
  readonly keys = new Map<string, IdempotencyKey>();

  constructor(readonly db = new MemoryDatabase()) {}

  insertPending(businessAccountId: string, m: PendingMessage): Promise<StoredMessage> {
    this.db.autocommit('messages.insertPending');
    return Promise.resolve(this.insert(businessAccountId, m));
  }

  insertPendingClaimingKey(
    businessAccountId: string,
    m: PendingMessage,
    claim: KeyClaim,
  ): Promise<StoredMessage | null> {
    this.db.autocommit('messages.insertPendingClaimingKey');
    const apiKeyId = m.apiKeyId ?? '';
    const existing = this.keys.get(keyOf(apiKeyId, claim.key));
    const claimable =
      !existing ||
      existing.expiresAt <= claim.now ||
      (existing.state === 'in_flight' &&
        existing.lockedUntil <= claim.now &&
        existing.requestHash === claim.requestHash);
    if (!claimable) return Promise.resolve(null);
    const expired = !existing || existing.expiresAt <= claim.now;
    this.keys.set(keyOf(apiKeyId, claim.key), {
      apiKeyId,
      key: claim.key,
      requestHash: claim.requestHash,
      state: 'in_flight',
      responseBody: null,
      lockedUntil: claim.lockedUntil,
      createdAt: expired ? claim.now : existing.createdAt,
      expiresAt: expired ? claim.expiresAt : existing.expiresAt,
    });
    return Promise.resolve(this.insert(businessAccountId, m));
  }

  markSent(businessAccountId: string, messageId: number, wamid: string, at: Date): Promise<boolean> {
    this.db.autocommit('messages.markSent');
    const m = this.owned(businessAccountId, messageId);
    if (m.status !== 'pending') return Promise.resolve(false);
    Object.assign(m, { status: 'sent', upstreamMessageId: wamid, acceptedAt: at, sentAt: at, updatedAt: at });
    return Promise.resolve(true);
  }

  async markSentCompletingKey(
    businessAccountId: string,
    messageId: number,
    wamid: string,
    at: Date,
    completion: KeyCompletion,
  ): Promise<boolean> {
    const moved = await this.markSent(businessAccountId, messageId, wamid, at);
    if (moved) await this.complete(completion.apiKeyId, completion.key, completion.outcome);
    return moved;
  }

  recordLateAcceptance(businessAccountId: string, messageId: number, wamid: string, at: Date): Promise<StoredMessage> {
    const m = this.owned(businessAccountId, messageId);
    m.upstreamMessageId ??= wamid;
    m.acceptedAt ??= at;
    return Promise.resolve({ ...m });
  }

  markFailed(businessAccountId: string, messageId: number, error: MessageFailure): Promise<StoredMessage> {
    this.db.autocommit('messages.markFailed');
    const m = this.owned(businessAccountId, messageId);
    if (m.status === 'pending') {
      const now = new Date();
      Object.assign(m, {
        status: 'failed',
        errorCode: error.code,
        errorTitle: error.title,
        errorDetail: error.detail,
        errorCategory: error.category,
        failedAt: now,
        updatedAt: now,
      });
    }
    return Promise.resolve({ ...m });
  }

  find(apiKeyId: string, key: string): Promise<IdempotencyKey | null> {
    const row = this.keys.get(keyOf(apiKeyId, key));
    return Promise.resolve(row ? { ...row } : null);
  }

  complete(apiKeyId: string, key: string, outcome: unknown): Promise<void> {
    const row = this.keys.get(keyOf(apiKeyId, key));
    if (row) Object.assign(row, { state: 'completed', responseBody: asJsonb(outcome) });
    return Promise.resolve();
  }

  release(apiKeyId: string, key: string): Promise<void> {
    if (this.keys.get(keyOf(apiKeyId, key))?.state === 'in_flight') this.keys.delete(keyOf(apiKeyId, key));
    return Promise.resolve();
  }

  /** A status webhook found the message by its callback data and moved it on (the worker's write). */
  statusArrives(messageId: number, status: 'sent' | 'delivered' | 'read', wamid: string): void {
    const m = this.messages.get(messageId);
    if (!m) throw new Error(`message ${messageId} not stored`);
    const at = new Date();
    Object.assign(m, {
      status,
      upstreamMessageId: wamid,
      sentAt: at,
      updatedAt: at,
      ...(status === 'delivered' ? { deliveredAt: at } : {}),
      ...(status === 'read' ? { readAt: at } : {}),
    });
  }

  /** Another request's live claim of a key (in flight), or a crashed one's (its lock ran out). */
  holdKey(apiKeyId: string, key: string, requestHash: string, lockedUntil: Date): void {
    const now = new Date();
    this.keys.set(keyOf(apiKeyId, key), {
      apiKeyId,
      key,
      requestHash,
      state: 'in_flight',
      responseBody: null,
      lockedUntil,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 24 * 3600 * 1000),
    });
  }

  private insert(businessAccountId: string, m: PendingMessage): StoredMessage {
    const now = new Date();
    const stored = pendingRow(
      businessAccountId,
      { ...m, content: asJsonb(m.content) },
      { id: this.db.nextId(), createdAt: now, updatedAt: now },
    );
    this.messages.set(stored.id, stored);
    return { ...stored };
  }

  private owned(businessAccountId: string, messageId: number): StoredMessage {
    const m = this.messages.get(messageId);
    if (!m || m.businessAccountId !== businessAccountId)
      throw new Error(`message ${messageId} not found for ${businessAccountId}`);
    return m;
  }
}
