import { MessagesRepository } from '../../src/messages/messages.repository.js';
import { IdempotencyKeysRepository } from '../../src/messages/send/idempotency-keys.repository.js';
import { IdempotencyService } from '../../src/messages/send/idempotency.service.js';
import { insertSendScope, metaId, pendingMessage, repositoryUnderTest } from '../utils/factories.js';

/** Claims are stored with their pending message by MessagesRepository (see messages.repository.spec.ts); here, the rest. */
describe('IdempotencyKeysRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new IdempotencyKeysRepository(db));
  const claimedAt = new Date('2026-03-01T10:00:00.000Z');
  const hash = IdempotencyService.fingerprint({ to: '447700900123' });
  /** Two key pairs (of two accounts) that both hold an in-flight claim of the same key string. */
  async function twoClaimsOfOneKey() {
    const messages = new MessagesRepository(t.db);
    const [scope, other] = [await insertSendScope(t.db), await insertSendScope(t.db)];
    const key = `order-${metaId()}`;
    for (const s of [scope, other]) {
      const claimed = await messages.insertPendingClaimingKey(
        s.businessAccountId,
        pendingMessage(s.apiKeyId),
        IdempotencyService.claim(key, hash, claimedAt),
      );
      if (!claimed) throw new Error('the key could not be claimed');
    }
    return { messages, scope, other, key };
  }

  it('finds a claim by key pair and key only', async () => {
    const { scope, other, key } = await twoClaimsOfOneKey();
    expect(await t.repo.find(scope.apiKeyId, key)).toMatchObject({
      apiKeyId: scope.apiKeyId,
      key,
      requestHash: hash,
      state: 'in_flight',
      createdAt: claimedAt,
    });
    expect(await t.repo.find(scope.apiKeyId, `${key}-2`)).toBeNull();
    expect(await t.repo.find(scope.apiKeyId, key.toUpperCase())).toBeNull();
    expect((await t.repo.find(other.apiKeyId, key))!.apiKeyId).toBe(other.apiKeyId);
  });

  it("completes one key pair's claim with the outcome to replay, leaving the other's in flight", async () => {
    const { scope, other, key } = await twoClaimsOfOneKey();
    const outcome = {
      outcome: 'rejected',
      reason: { kind: 'upstream_rejected', message: 'Recipient not in allowed list' },
      message: { id: 1, status: 'failed' },
    };
    await t.repo.complete(scope.apiKeyId, key, outcome);

    expect(await t.repo.find(scope.apiKeyId, key)).toMatchObject({
      state: 'completed',
      responseBody: outcome,
      requestHash: hash,
      createdAt: claimedAt,
    });
    expect(await t.repo.find(other.apiKeyId, key)).toMatchObject({
      state: 'in_flight',
      responseBody: null,
    });
  });

  it("releases one key pair's in-flight claim, so that the key can be claimed again at once, but never an answered one", async () => {
    const { messages, scope, other, key } = await twoClaimsOfOneKey();
    await t.repo.release(scope.apiKeyId, key);
    expect(await t.repo.find(scope.apiKeyId, key)).toBeNull();
    expect(await t.repo.find(other.apiKeyId, key)).toMatchObject({ state: 'in_flight' });

    // Released: a retry seconds later (the lock would still run) claims the key again.
    const retry = IdempotencyService.claim(key, hash, new Date(claimedAt.getTime() + 5000));
    expect(
      await messages.insertPendingClaimingKey(scope.businessAccountId, pendingMessage(scope.apiKeyId), retry),
    ).not.toBeNull();

    await t.repo.complete(scope.apiKeyId, key, { ok: true });
    await t.repo.release(scope.apiKeyId, key);
    expect(await t.repo.find(scope.apiKeyId, key)).toMatchObject({ state: 'completed', responseBody: { ok: true } });
  });

  it('purges keys past their expiry and keeps the others', async () => {
    const messages = new MessagesRepository(t.db);
    const scope = await insertSendScope(t.db);
    // Claimed in 1999 (expired by 2000-01-01, the purge's "now") and now (kept): no other test's keys are that old.
    const old = `old-${metaId()}`;
    const fresh = `fresh-${metaId()}`;
    await messages.insertPendingClaimingKey(
      scope.businessAccountId,
      pendingMessage(scope.apiKeyId),
      IdempotencyService.claim(old, hash, new Date('1999-12-30T00:00:00.000Z')),
    );
    await messages.insertPendingClaimingKey(
      scope.businessAccountId,
      pendingMessage(scope.apiKeyId),
      IdempotencyService.claim(fresh, hash, new Date()),
    );
    expect(await t.repo.find(scope.apiKeyId, old)).not.toBeNull();

    await t.repo.deleteExpired(new Date('2000-01-01T00:00:00.000Z'), 1000);
    expect(await t.repo.find(scope.apiKeyId, old)).toBeNull();
    expect(await t.repo.find(scope.apiKeyId, fresh)).toMatchObject({ state: 'in_flight' });
  });
});
