import { jest } from '@jest/globals';
import type { Updateable } from 'kysely';
import pg from 'pg';
import type { MessageTable } from '../../src/core/db/database.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { AppConfig } from '../../src/core/config/app-config.js';
import { Db, txOn } from '../../src/core/db/db.js';
import type { ListMessagesQuery } from '../../src/messages/dto/list-messages.query.js';
import { MessagesRepository, type StatusCandidate } from '../../src/messages/messages.repository.js';
import { IdempotencyKeysRepository } from '../../src/messages/send/idempotency-keys.repository.js';
import { IdempotencyService } from '../../src/messages/send/idempotency.service.js';
import {
  insertMessage,
  insertSendScope,
  metaId,
  pendingMessage,
  repositoryUnderTest,
  wamid,
} from '../utils/factories.js';
import { testEnv } from '../utils/test-env.js';

describe('MessagesRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new MessagesRepository(db));
  const at = (iso: string) => new Date(iso);
  /** Changes a message behind the repository's back, as a status webhook would (updated_at with it). */
  const moveOn = (id: number, set: Updateable<MessageTable>) =>
    t.db
      .on()
      .updateTable('messages')
      .set({ ...set, updated_at: new Date() })
      .where('id', '=', id)
      .execute();
  const failure = {
    code: 131026,
    title: 'Message undeliverable',
    detail: 'Unable to deliver the message',
    category: 'permanent',
  };
  /** A pending message of a fresh send scope, and another account (of another organization) that must never see it. */
  async function pendingOfNewScope() {
    const [scope, other] = [await insertSendScope(t.db), await insertSendScope(t.db)];
    const message = await t.repo.insertPending(scope.businessAccountId, pendingMessage(scope.apiKeyId));
    return { scope, other, message };
  }

  describe('send writes', () => {
    it('stores a send as pending and returns it as stored, found only in its business account', async () => {
      const [scope, other] = [await insertSendScope(t.db), await insertSendScope(t.db)];
      const pending = pendingMessage(scope.apiKeyId, {
        type: 'template',
        templateName: 'hello',
        templateLanguage: 'en_US',
        content: { components: [{ type: 'body' }] },
      });

      const stored = await t.repo.insertPending(scope.businessAccountId, pending);
      expect(stored).toMatchObject({
        ...pending,
        businessAccountId: scope.businessAccountId,
        status: 'pending',
        upstreamMessageId: null,
        acceptedAt: null,
      });
      expect(await t.repo.findOne(scope.businessAccountId, stored.id)).toEqual(stored);
      expect(await t.repo.findOne(other.businessAccountId, stored.id)).toBeNull();
    });

    it('marks a pending message sent once, with its wamid and time, and never one of another account', async () => {
      const { scope, other, message } = await pendingOfNewScope();
      const [w, acceptedAt] = [wamid(), at('2026-03-01T10:00:00.123Z')];

      expect(await t.repo.markSent(other.businessAccountId, message.id, w, acceptedAt)).toBe(false);
      expect(await t.repo.findOne(scope.businessAccountId, message.id)).toMatchObject({
        status: 'pending',
        upstreamMessageId: null,
        sentAt: null,
      });

      expect(await t.repo.markSent(scope.businessAccountId, message.id, w, acceptedAt)).toBe(true);
      expect(await t.repo.findOne(scope.businessAccountId, message.id)).toMatchObject({
        status: 'sent',
        upstreamMessageId: w,
        acceptedAt,
        sentAt: acceptedAt,
        updatedAt: acceptedAt,
      });
      // Only from pending: a second answer (or a late one) changes nothing.
      expect(await t.repo.markSent(scope.businessAccountId, message.id, wamid(), at('2026-03-01T10:00:05.000Z'))).toBe(
        false,
      );
      expect(await t.repo.findOne(scope.businessAccountId, message.id)).toMatchObject({
        status: 'sent',
        upstreamMessageId: w,
        sentAt: acceptedAt,
      });
    });

    it('stores concurrent sends together, each caller getting its own row, and marks them sent per row and per account', async () => {
      const [a, b] = [await insertSendScope(t.db), await insertSendScope(t.db)];
      const sends = Array.from({ length: 40 }, (_, i) => {
        const scope = i % 2 ? a : b;
        return {
          scope,
          pending: pendingMessage(scope.apiKeyId, {
            to: `4915${String(i).padStart(9, '0')}`,
            content: { text: { body: `n${i}`, previewUrl: false } },
          }),
        };
      });
      // All issued in one turn of the event loop: they go to PostgreSQL in batches, not one by one.
      const stored = await Promise.all(
        sends.map(({ scope, pending }) => t.repo.insertPending(scope.businessAccountId, pending)),
      );
      expect(new Set(stored.map((m) => m.id)).size).toBe(40);
      for (const [i, m] of stored.entries()) {
        expect(m).toMatchObject({
          ...sends[i]!.pending,
          businessAccountId: sends[i]!.scope.businessAccountId,
          status: 'pending',
        });
        expect(await t.repo.findOne(sends[i]!.scope.businessAccountId, m.id)).toEqual(m);
      }

      // One batch of marks: the even ones by their own account, the odd ones claimed by the other account.
      const acceptedAt = at('2026-03-01T10:00:00.000Z');
      const wamids = stored.map(() => wamid());
      const marked = await Promise.all(
        stored.map((m, i) =>
          t.repo.markSent(
            i % 2 === 0 ? m.businessAccountId : (m.businessAccountId === a.businessAccountId ? b : a).businessAccountId,
            m.id,
            wamids[i]!,
            acceptedAt,
          ),
        ),
      );
      expect(marked).toEqual(stored.map((_, i) => i % 2 === 0));
      for (const [i, m] of stored.entries()) {
        expect(await t.repo.findOne(m.businessAccountId, m.id)).toMatchObject(
          i % 2 === 0
            ? { status: 'sent', upstreamMessageId: wamids[i], sentAt: acceptedAt }
            : { status: 'pending', upstreamMessageId: null },
        );
      }
    });

    describe('batch marks lock their messages in id order, as status chunks do (no deadlock between them)', () => {
      // Reading `messages` by a scan (index scans off for this repository's connections), as a plan does on a small
      // table: the rows then come in the heap's order, not the ids'.
      const scanning = {} as { db: Db; repo: MessagesRepository; holder: pg.Client; prober: pg.Client };
      beforeAll(async () => {
        const url = new URL(process.env.DATABASE_URL!);
        url.searchParams.set('options', '-c enable_indexscan=off -c enable_bitmapscan=off');
        scanning.db = new Db(AppConfig.fromEnv(testEnv({ DATABASE_URL: url.toString() })));
        scanning.repo = new MessagesRepository(scanning.db);
        scanning.holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
        scanning.prober = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await Promise.all([scanning.holder.connect(), scanning.prober.connect()]);
      });
      afterAll(async () => {
        await Promise.all([scanning.holder.end(), scanning.prober.end()]);
        await scanning.db.close();
      });

      it.each([
        [
          'sent marks (a campaign chunk, as the send path batches them)',
          (account: string, ids: number[]) =>
            scanning.repo.markSentMany(
              account,
              ids.map((id) => ({ messageId: id, wamid: wamid(), at: new Date() })),
            ),
        ],
        [
          'failed marks (a campaign chunk)',
          (account: string, ids: number[]) =>
            scanning.repo.markFailedMany(
              account,
              ids.map((id) => ({ messageId: id, error: failure })),
            ),
        ],
      ])('%s wait at the lowest id held elsewhere before taking any other', async (_, mark) => {
        const scope = await insertSendScope(t.db);
        const ids: number[] = [];
        for (let i = 0; i < 3; i++)
          ids.push((await t.repo.insertPending(scope.businessAccountId, pendingMessage(scope.apiKeyId))).id);
        const [lowest, highest] = [ids[0]!, ids[2]!];
        // The lowest's new version goes after the others in the heap (same page): a scan meets it last.
        await moveOn(lowest, {});
        const { holder, prober } = scanning;
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM messages WHERE id = $1 FOR UPDATE', [lowest]);
        const batch = mark(scope.businessAccountId, ids);
        await new Promise((r) => setTimeout(r, 300));
        // Waiting at the lowest, the batch holds none of the others: a status chunk could take the highest now.
        const probe = await prober.query('SELECT id FROM messages WHERE id = $1 FOR UPDATE NOWAIT', [highest]).then(
          () => 'free',
          (err: { code?: string }) => err.code,
        );
        await holder.query('ROLLBACK');
        await batch;
        expect(probe).toBe('free');
        // The batch then did its work on all three.
        for (const id of ids) expect((await t.repo.findOne(scope.businessAccountId, id))!.status).not.toBe('pending');
      });
    });

    it('does not mark sent a message a status webhook already moved on', async () => {
      const { scope, message } = await pendingOfNewScope();
      const deliveredAt = at('2026-03-01T10:00:02.000Z');
      await moveOn(message.id, { status: 'delivered', delivered_at: deliveredAt });
      expect(await t.repo.markSent(scope.businessAccountId, message.id, wamid(), at('2026-03-01T10:00:03.000Z'))).toBe(
        false,
      );
      expect(await t.repo.findOne(scope.businessAccountId, message.id)).toMatchObject({
        status: 'delivered',
        upstreamMessageId: null,
        acceptedAt: null,
        deliveredAt,
      });
    });

    it('fills in only the missing wamid and acceptance time of a message a webhook moved on, in its account only', async () => {
      const { scope, other, message } = await pendingOfNewScope();
      const [linked, deliveredAt] = [wamid(), at('2026-03-01T10:00:02.000Z')];
      await moveOn(message.id, { status: 'delivered', delivered_at: deliveredAt });

      await expect(
        t.repo.recordLateAcceptance(other.businessAccountId, message.id, wamid(), at('2026-03-01T10:00:03.000Z')),
      ).rejects.toThrow('not found');
      expect((await t.repo.findOne(scope.businessAccountId, message.id))!.upstreamMessageId).toBeNull();

      const acceptedAt = at('2026-03-01T10:00:03.000Z');
      const stored = await t.repo.recordLateAcceptance(scope.businessAccountId, message.id, linked, acceptedAt);
      expect(stored).toMatchObject({
        id: message.id,
        status: 'delivered',
        upstreamMessageId: linked,
        acceptedAt,
        deliveredAt,
        sentAt: null,
      });
      expect(await t.repo.findOne(scope.businessAccountId, message.id)).toEqual(stored);

      // Already filled in (the webhook linked the wamid by callback data): kept as it is.
      const again = await t.repo.recordLateAcceptance(
        scope.businessAccountId,
        message.id,
        wamid(),
        at('2026-03-01T10:00:09.000Z'),
      );
      expect(again).toMatchObject({ upstreamMessageId: linked, acceptedAt, status: 'delivered' });
    });

    it('marks a pending message failed with the reason, once, and never one of another account', async () => {
      const { scope, other, message } = await pendingOfNewScope();

      await expect(t.repo.markFailed(other.businessAccountId, message.id, failure)).rejects.toThrow('not found');
      expect(await t.repo.findOne(scope.businessAccountId, message.id)).toMatchObject({
        status: 'pending',
        failedAt: null,
        errorCode: null,
      });

      const before = Date.now();
      const failed = await t.repo.markFailed(scope.businessAccountId, message.id, failure);
      expect(failed).toMatchObject({
        id: message.id,
        status: 'failed',
        errorCode: 131026,
        errorTitle: failure.title,
        errorDetail: failure.detail,
        errorCategory: 'permanent',
      });
      expect(failed.failedAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(await t.repo.findOne(scope.businessAccountId, message.id)).toEqual(failed);

      // A second failure (a retry of the error path) keeps the first reason; a late acceptance does not revive it.
      expect(
        await t.repo.markFailed(scope.businessAccountId, message.id, {
          code: null,
          title: 'Internal error',
          detail: null,
          category: 'retryable',
        }),
      ).toEqual(failed);
      expect(await t.repo.markSent(scope.businessAccountId, message.id, wamid(), new Date())).toBe(false);
      expect(await t.repo.findOne(scope.businessAccountId, message.id)).toEqual(failed);
    });

    it('answers with the message as a status webhook left it when the failing call lost the race', async () => {
      const { scope, message } = await pendingOfNewScope();
      const [linked, sentAt] = [wamid(), at('2026-03-01T10:00:02.000Z')];
      await moveOn(message.id, { status: 'sent', upstream_message_id: linked, sent_at: sentAt });

      const stored = await t.repo.markFailed(scope.businessAccountId, message.id, failure);
      expect(stored).toMatchObject({
        id: message.id,
        status: 'sent',
        upstreamMessageId: linked,
        sentAt,
        failedAt: null,
        errorCode: null,
        errorTitle: null,
      });
      expect(await t.repo.findOne(scope.businessAccountId, message.id)).toEqual(stored);
    });
  });

  describe('Idempotency-Key claims (stored with the pending message)', () => {
    const keys = () => new IdempotencyKeysRepository(t.db);
    const t0 = at('2026-03-01T10:00:00.000Z');
    const secondsAfter = (s: number) => new Date(t0.getTime() + s * 1000);
    const claimAt = (key: string, body: string, s: number) =>
      IdempotencyService.claim(key, IdempotencyService.fingerprint({ body }), secondsAfter(s));
    const messagesOf = async (businessAccountId: string) =>
      (await t.repo.list(businessAccountId, {}, { page: 1, limit: 100 }, 10_000)).rows.map((m) => m.id);

    it('stores the claim and the message together, and nothing while the key is held, answered or another body waits', async () => {
      const scope = await insertSendScope(t.db);
      const key = `order-${metaId()}`;
      const m = pendingMessage(scope.apiKeyId);

      const first = await t.repo.insertPendingClaimingKey(scope.businessAccountId, m, claimAt(key, 'a', 0));
      expect(first).toMatchObject({ status: 'pending', to: m.to });
      expect(await keys().find(scope.apiKeyId, key)).toMatchObject({
        state: 'in_flight',
        requestHash: IdempotencyService.fingerprint({ body: 'a' }),
        createdAt: t0,
        lockedUntil: secondsAfter(60),
        expiresAt: secondsAfter(24 * 3600),
      });

      // In flight, its lock still running: a concurrent duplicate stores nothing.
      expect(await t.repo.insertPendingClaimingKey(scope.businessAccountId, m, claimAt(key, 'a', 30))).toBeNull();
      // The lock ran out but the body differs: not the same request, nothing stored.
      expect(await t.repo.insertPendingClaimingKey(scope.businessAccountId, m, claimAt(key, 'b', 61))).toBeNull();
      expect(await messagesOf(scope.businessAccountId)).toEqual([first!.id]);

      const outcome = { outcome: 'accepted', message: { id: first!.id } };
      expect(
        await t.repo.markSentCompletingKey(scope.businessAccountId, first!.id, wamid(), secondsAfter(1), {
          apiKeyId: scope.apiKeyId,
          key,
          outcome,
        }),
      ).toBe(true);
      expect(await keys().find(scope.apiKeyId, key)).toMatchObject({
        state: 'completed',
        responseBody: outcome,
      });
      // Answered: even after the lock's time, a retry gets the stored answer (the service reads it), not a second send.
      expect(await t.repo.insertPendingClaimingKey(scope.businessAccountId, m, claimAt(key, 'a', 3600))).toBeNull();
      expect(await messagesOf(scope.businessAccountId)).toEqual([first!.id]);
    });

    it('lets one of several concurrent duplicates claim a new key, storing one message', async () => {
      const scope = await insertSendScope(t.db);
      const key = `order-${metaId()}`;
      const claims = await Promise.all(
        Array.from({ length: 4 }, () =>
          t.repo.insertPendingClaimingKey(
            scope.businessAccountId,
            pendingMessage(scope.apiKeyId),
            claimAt(key, 'a', 0),
          ),
        ),
      );
      const won = claims.filter((m) => m !== null);
      expect(won).toHaveLength(1);
      expect(await messagesOf(scope.businessAccountId)).toEqual([won[0]!.id]);
    });

    it('lets the same body take over a claim abandoned by a crashed request, keeping its 24 h', async () => {
      const scope = await insertSendScope(t.db);
      const key = `order-${metaId()}`;
      const first = await t.repo.insertPendingClaimingKey(
        scope.businessAccountId,
        pendingMessage(scope.apiKeyId),
        claimAt(key, 'a', 0),
      );

      const retry = await t.repo.insertPendingClaimingKey(
        scope.businessAccountId,
        pendingMessage(scope.apiKeyId),
        claimAt(key, 'a', 61),
      );
      expect(retry).not.toBeNull();
      expect(retry!.id).not.toBe(first!.id);
      expect(await keys().find(scope.apiKeyId, key)).toMatchObject({
        state: 'in_flight',
        createdAt: t0,
        lockedUntil: secondsAfter(121),
        expiresAt: secondsAfter(24 * 3600),
      });
    });

    it('claims an expired key afresh, forgetting its old answer', async () => {
      const scope = await insertSendScope(t.db);
      const key = `order-${metaId()}`;
      const first = await t.repo.insertPendingClaimingKey(
        scope.businessAccountId,
        pendingMessage(scope.apiKeyId),
        claimAt(key, 'a', 0),
      );
      await t.repo.markSentCompletingKey(scope.businessAccountId, first!.id, wamid(), secondsAfter(1), {
        apiKeyId: scope.apiKeyId,
        key,
        outcome: { old: true },
      });

      const day = 24 * 3600;
      expect(
        await t.repo.insertPendingClaimingKey(
          scope.businessAccountId,
          pendingMessage(scope.apiKeyId),
          claimAt(key, 'b', day - 1),
        ),
      ).toBeNull();
      const fresh = await t.repo.insertPendingClaimingKey(
        scope.businessAccountId,
        pendingMessage(scope.apiKeyId),
        claimAt(key, 'b', day),
      );
      expect(fresh).not.toBeNull();
      expect(await keys().find(scope.apiKeyId, key)).toMatchObject({
        state: 'in_flight',
        requestHash: IdempotencyService.fingerprint({ body: 'b' }),
        responseBody: null,
        createdAt: secondsAfter(day),
        expiresAt: secondsAfter(2 * day),
      });
      expect((await messagesOf(scope.businessAccountId)).sort((x, y) => x - y)).toEqual([first!.id, fresh!.id]);
    });

    it("keeps one key pair's keys apart from another's with the same string", async () => {
      const [scope, other] = [await insertSendScope(t.db), await insertSendScope(t.db)];
      const key = `order-${metaId()}`;
      expect(
        await t.repo.insertPendingClaimingKey(
          scope.businessAccountId,
          pendingMessage(scope.apiKeyId),
          claimAt(key, 'a', 0),
        ),
      ).not.toBeNull();
      expect(
        await t.repo.insertPendingClaimingKey(
          other.businessAccountId,
          pendingMessage(other.apiKeyId),
          claimAt(key, 'a', 0),
        ),
      ).not.toBeNull();
      expect(await keys().find(other.apiKeyId, key)).toMatchObject({ state: 'in_flight' });
    });

    it('completes the key only when it moved the message to sent, and only in the account of the message', async () => {
      const [scope, other] = [await insertSendScope(t.db), await insertSendScope(t.db)];
      const key = `order-${metaId()}`;
      const message = await t.repo.insertPendingClaimingKey(
        scope.businessAccountId,
        pendingMessage(scope.apiKeyId),
        claimAt(key, 'a', 0),
      );
      const completion = { apiKeyId: scope.apiKeyId, key, outcome: { first: true } };
      const w = wamid();

      expect(
        await t.repo.markSentCompletingKey(other.businessAccountId, message!.id, w, secondsAfter(1), completion),
      ).toBe(false);
      expect(await keys().find(scope.apiKeyId, key)).toMatchObject({ state: 'in_flight', responseBody: null });
      expect(await t.repo.findOne(scope.businessAccountId, message!.id)).toMatchObject({
        status: 'pending',
        upstreamMessageId: null,
      });

      expect(
        await t.repo.markSentCompletingKey(scope.businessAccountId, message!.id, w, secondsAfter(1), completion),
      ).toBe(true);
      expect(await t.repo.findOne(scope.businessAccountId, message!.id)).toMatchObject({
        status: 'sent',
        upstreamMessageId: w,
        acceptedAt: secondsAfter(1),
        sentAt: secondsAfter(1),
      });
      // A second completion (no longer pending) neither moves the message nor rewrites the stored answer.
      expect(
        await t.repo.markSentCompletingKey(scope.businessAccountId, message!.id, wamid(), secondsAfter(2), {
          ...completion,
          outcome: { second: true },
        }),
      ).toBe(false);
      expect(await keys().find(scope.apiKeyId, key)).toMatchObject({
        state: 'completed',
        responseBody: { first: true },
      });
      expect(await t.repo.findOne(scope.businessAccountId, message!.id)).toMatchObject({ upstreamMessageId: w });
    });
  });

  describe('reads', () => {
    const range = { since: at('2026-03-01T00:00:00.000Z'), until: at('2026-03-04T00:00:00.000Z') };
    /**
     * A known history of one business account (7 messages from 1 to 3 March, one on another number) beside
     * messages just outside the range and another account's message inside it.
     */
    async function history() {
      const [scope, other] = [await insertSendScope(t.db), await insertSendScope(t.db)];
      const [number, otherNumber] = [metaId(), metaId()];
      const undeliverable = { errorCode: 131026, errorTitle: 'Message undeliverable' };
      const insert = (createdAt: string, data: Parameters<typeof insertMessage>[2] = {}) =>
        insertMessage(t.db, scope.businessAccountId, { phoneNumberId: number, createdAt: at(createdAt), ...data });
      const template = (templateName: string) => ({ type: 'template', templateName, templateLanguage: 'en_US' });
      const sent = () => ({ upstreamMessageId: wamid() });
      const rows = {
        read: await insert('2026-03-01T10:00:00.000Z', {
          ...template('hello'),
          ...sent(),
          status: 'read',
          deliveredAt: at('2026-03-01T10:00:05.000Z'),
          readAt: at('2026-03-01T10:01:00.000Z'),
        }),
        rejected: await insert('2026-03-01T23:59:59.999Z', {
          ...template('hello'),
          status: 'failed',
          ...undeliverable,
        }),
        delivered: await insert('2026-03-03T00:00:00.000Z', {
          ...sent(),
          status: 'delivered',
          deliveredAt: at('2026-03-03T00:00:04.000Z'),
        }),
        failedAfterSent: await insert('2026-03-03T08:00:00.000Z', {
          ...template('promo'),
          ...sent(),
          status: 'failed',
          ...undeliverable,
        }),
        unknownOutcome: await insert('2026-03-03T09:00:00.000Z', {
          ...template('hello'),
          status: 'failed',
          errorTitle: 'Internal error',
          errorCategory: 'retryable',
        }),
        pending: await insert('2026-03-03T10:00:00.000Z'),
        otherNumber: await insert('2026-03-03T11:00:00.000Z', {
          ...template('hello'),
          ...sent(),
          status: 'sent',
          phoneNumberId: otherNumber,
        }),
      };
      await insert('2026-02-28T23:59:59.999Z', { ...sent(), status: 'read' });
      await insert('2026-03-04T00:00:00.000Z', { ...sent(), status: 'read' });
      await insertMessage(t.db, other.businessAccountId, {
        phoneNumberId: number,
        createdAt: at('2026-03-02T12:00:00.000Z'),
        ...sent(),
        status: 'read',
      });
      return { scope, other, number, rows };
    }
    const query = (filters: Partial<ListMessagesQuery> = {}) =>
      ({ page: 1, limit: 100, ...filters }) as ListMessagesQuery;
    const list = (businessAccountId: string, q: ListMessagesQuery) =>
      t.repo.list(
        businessAccountId,
        { ...q, since: q.since ? new Date(q.since) : undefined, until: q.until ? new Date(q.until) : undefined },
        { page: q.page ?? 1, limit: q.limit },
        10_000,
      );

    it("lists one account's messages newest first, with exact totals under every filter", async () => {
      const { scope, other, number, rows } = await history();
      const ids = async (filters: Partial<ListMessagesQuery>) => {
        const { rows: listed, total } = await list(scope.businessAccountId, query(filters));
        expect(total).toBe(listed.length);
        return listed.map((m) => m.id);
      };
      const inRange = { since: range.since.toISOString(), until: range.until.toISOString() };

      expect(await ids(inRange)).toEqual(
        [
          rows.otherNumber,
          rows.pending,
          rows.unknownOutcome,
          rows.failedAfterSent,
          rows.delivered,
          rows.rejected,
          rows.read,
        ].map((m) => m.id),
      );
      const page2 = await list(scope.businessAccountId, query({ ...inRange, page: 2, limit: 3 }));
      expect([page2.total, page2.rows.map((m) => m.id)]).toEqual([
        7,
        [rows.failedAfterSent.id, rows.delivered.id, rows.rejected.id],
      ]);
      expect(await ids({ ...inRange, status: 'failed' })).toEqual([
        rows.unknownOutcome.id,
        rows.failedAfterSent.id,
        rows.rejected.id,
      ]);
      expect(await ids({ ...inRange, templateName: 'hello', phoneNumberId: number })).toEqual([
        rows.unknownOutcome.id,
        rows.rejected.id,
        rows.read.id,
      ]);
      expect(await ids({ ...inRange, type: 'text' })).toEqual([rows.pending.id, rows.delivered.id]);
      expect(await ids({ to: rows.read.to! })).toEqual([rows.read.id]);
      expect(await ids({ since: '2026-03-01T00:00:00.000Z', until: '2026-03-03T00:00:00.000Z' })).toEqual([
        rows.rejected.id,
        rows.read.id,
      ]);
      expect((await list(scope.businessAccountId, query())).total).toBe(9);
      expect((await list(other.businessAccountId, query())).total).toBe(1);
      expect(await t.repo.findOne(other.businessAccountId, rows.read.id)).toBeNull();
      expect(await t.repo.findOne(scope.businessAccountId, rows.read.id)).toEqual(rows.read);
    });

    it('counts up to the count limit: past it the total is the limit, said to be a lower bound (issue 37)', async () => {
      const { scope } = await history();
      const counted = (countLimit: number) =>
        t.repo.list(scope.businessAccountId, {}, { page: 1, limit: 2 }, countLimit);
      const capped = await counted(4);
      expect([capped.total, capped.totalIsLowerBound, capped.rows.length]).toEqual([4, true, 2]);
      const exact = await counted(9);
      expect([exact.total, exact.totalIsLowerBound]).toEqual([9, false]);
    });

    it('aggregates totals, every day of the range (zeros included), failure reasons and templates', async () => {
      const { scope } = await history();
      const figures = await t.repo.analytics(scope.businessAccountId, { ...range, granularity: 'day' });

      expect(figures.totals).toEqual({ total: 7, sent: 4, delivered: 2, read: 1, failed: 3 });
      expect(figures.series).toEqual([
        { bucket: at('2026-03-01T00:00:00.000Z'), sent: 1, delivered: 1, read: 1, failed: 1 },
        { bucket: at('2026-03-02T00:00:00.000Z'), sent: 0, delivered: 0, read: 0, failed: 0 },
        { bucket: at('2026-03-03T00:00:00.000Z'), sent: 3, delivered: 1, read: 0, failed: 2 },
      ]);
      expect(figures.failureReasons).toEqual([
        { code: 131026, title: 'Message undeliverable', count: 2 },
        { code: null, title: 'Internal error', count: 1 },
      ]);
      expect(figures.templates).toEqual([
        { templateName: 'hello', total: 4, delivered: 1, read: 1, failed: 2 },
        { templateName: 'promo', total: 1, delivered: 0, read: 0, failed: 1 },
      ]);
    });

    it('aggregates by hour within the bounds, and under the number and template filters', async () => {
      const { scope, number } = await history();
      const hourly = await t.repo.analytics(scope.businessAccountId, {
        since: at('2026-03-03T07:30:00.000Z'),
        until: at('2026-03-03T10:00:00.000Z'),
        granularity: 'hour',
      });
      expect(hourly.totals).toEqual({ total: 2, sent: 1, delivered: 0, read: 0, failed: 2 });
      expect(hourly.series.map((b) => [b.bucket.toISOString(), b.sent, b.failed])).toEqual([
        ['2026-03-03T07:00:00.000Z', 0, 0],
        ['2026-03-03T08:00:00.000Z', 1, 1],
        ['2026-03-03T09:00:00.000Z', 0, 1],
      ]);

      const hello = await t.repo.analytics(scope.businessAccountId, {
        ...range,
        granularity: 'day',
        phoneNumberId: number,
        templateName: 'hello',
      });
      expect(hello.totals).toEqual({ total: 3, sent: 1, delivered: 1, read: 1, failed: 2 });
      expect(hello.templates).toEqual([{ templateName: 'hello', total: 3, delivered: 1, read: 1, failed: 2 }]);
      expect(hello.series.map((b) => b.failed)).toEqual([1, 0, 1]);

      const nothing = await t.repo.analytics(scope.businessAccountId, {
        ...range,
        granularity: 'day',
        templateName: 'unknown',
      });
      expect(nothing.totals).toEqual({ total: 0, sent: 0, delivered: 0, read: 0, failed: 0 });
      expect([nothing.series.length, nothing.failureReasons, nothing.templates]).toEqual([3, [], []]);
    });
  });

  it('the database refuses a status no rule knows (messages_status_check): a typo in a statement fails loudly', async () => {
    const { message } = await pendingOfNewScope();
    await expect(moveOn(message.id, { status: 'delivred' })).rejects.toThrow(/messages_status_check/);
    expect((await t.repo.findOne(message.businessAccountId, message.id))?.status).toBe('pending');
  });

  describe('status webhooks (the worker)', () => {
    const unitOfWork = () => new UnitOfWork(t.db);
    const lock = (wamids: string[], callbackIds: number[]) =>
      unitOfWork().run((tx) => t.repo.lockForStatuses(tx, wamids, callbackIds));
    const statusColumns = ({
      id,
      status,
      upstreamMessageId,
      errorCode,
      errorTitle,
      errorDetail,
      errorCategory,
      sentAt,
      deliveredAt,
      readAt,
      failedAt,
    }: StatusCandidate) => ({
      id,
      status,
      upstreamMessageId,
      errorCode,
      errorTitle,
      errorDetail,
      errorCategory,
      sentAt,
      deliveredAt,
      readAt,
      failedAt,
    });
    /** Messages of two accounts: sent (with a wamid), pending (none yet), and a retryable failure of the other account. */
    async function messagesOfTwoAccounts() {
      const [scope, other] = [await insertSendScope(t.db), await insertSendScope(t.db)];
      const sent = await insertMessage(t.db, scope.businessAccountId, {
        status: 'sent',
        upstreamMessageId: wamid(),
        sentAt: at('2026-03-01T10:00:00.000Z'),
      });
      const pending = await insertMessage(t.db, scope.businessAccountId);
      const timedOut = await insertMessage(t.db, other.businessAccountId, {
        status: 'failed',
        upstreamMessageId: wamid(),
        errorTitle: 'Internal error',
        errorCategory: 'retryable',
        failedAt: at('2026-03-01T10:00:30.000Z'),
      });
      return { scope, other, sent, pending, timedOut };
    }

    it('locks messages by wamid, and by callback id only while they have no wamid, in id order with their wabaId', async () => {
      const { scope, other, sent, pending, timedOut } = await messagesOfTwoAccounts();
      const notAsked = await insertMessage(t.db, scope.businessAccountId);

      const rows = await lock(
        [timedOut.upstreamMessageId!, 'wamid.unknown', sent.upstreamMessageId!],
        [timedOut.id, pending.id, 2_000_000_000],
      );
      expect(rows.map((m) => [m.id, m.wabaId, m.upstreamMessageId])).toEqual([
        [sent.id, scope.wabaId, sent.upstreamMessageId],
        [pending.id, scope.wabaId, null],
        [timedOut.id, other.wabaId, timedOut.upstreamMessageId],
      ]);
      expect(statusColumns(rows[2]!)).toEqual(statusColumns({ ...timedOut, wabaId: other.wabaId }));
      // Asked by callback id only: a message that already has its wamid is found by that wamid, not by the id.
      expect((await lock([], [sent.id, pending.id, notAsked.id])).map((m) => m.id)).toEqual([pending.id, notAsked.id]);
    });

    it('holds the lock until the unit of work ends', async () => {
      const { sent } = await messagesOfTwoAccounts();
      // On a connection of its own (outside the unit of work in progress), as another process's statement.
      const lockedElsewhere = () =>
        Db.outside(() =>
          t.db.on().selectFrom('messages').select('id').where('id', '=', sent.id).forUpdate().noWait().execute(),
        );
      await unitOfWork().run(async (tx) => {
        expect(await t.repo.lockForStatuses(tx, [sent.upstreamMessageId!], [])).toHaveLength(1);
        await expect(lockedElsewhere()).rejects.toThrow(/lock/);
      });
      await expect(lockedElsewhere()).resolves.toHaveLength(1);
    });

    it('writes every status column of the changed messages, and nothing of the others', async () => {
      const { scope, other, sent, pending, timedOut } = await messagesOfTwoAccounts();
      const linked = wamid();
      const [t1, t2, t3] = [
        at('2026-03-01T10:00:01.000Z'),
        at('2026-03-01T10:00:02.000Z'),
        at('2026-03-01T10:00:03.000Z'),
      ];

      const changed = await unitOfWork().run(async (tx) => {
        const [s, p, f] = await t.repo.lockForStatuses(
          tx,
          [sent.upstreamMessageId!, timedOut.upstreamMessageId!],
          [pending.id],
        );
        const updates: StatusCandidate[] = [
          { ...s!, status: 'read', deliveredAt: t1, readAt: t2 },
          // Linked by callback data and failed at once: every error column.
          {
            ...p!,
            upstreamMessageId: linked,
            status: 'failed',
            sentAt: t1,
            failedAt: t2,
            errorCode: 131049,
            errorTitle: 'Healthy ecosystem',
            errorDetail: 'Not delivered',
            errorCategory: 'permanent',
          },
          // Real progress after a timeout: the failure is cleared.
          { ...f!, status: 'delivered', deliveredAt: t3, failedAt: null, errorTitle: null, errorCategory: null },
        ];
        await t.repo.writeStatuses(tx, updates);
        return updates;
      });

      const stored = [
        await t.repo.findOne(scope.businessAccountId, sent.id),
        await t.repo.findOne(scope.businessAccountId, pending.id),
        await t.repo.findOne(other.businessAccountId, timedOut.id),
      ];
      expect(stored.map((m) => statusColumns({ ...m!, wabaId: '' }))).toEqual(changed.map(statusColumns));
      expect(stored[0]!.sentAt).toEqual(sent.sentAt);
      expect(stored.map((m, i) => m!.updatedAt > [sent, pending, timedOut][i]!.updatedAt)).toEqual([true, true, true]);

      const untouched = await insertMessage(t.db, scope.businessAccountId);
      await unitOfWork().run((tx) => t.repo.writeStatuses(tx, []));
      expect(await t.repo.findOne(scope.businessAccountId, untouched.id)).toEqual(untouched);
    });

    it('writes nothing, and links no wamid, when the unit of work it ran in fails', async () => {
      const { scope, sent, pending } = await messagesOfTwoAccounts();
      await expect(
        unitOfWork().run(async (tx) => {
          const rows = await t.repo.lockForStatuses(tx, [sent.upstreamMessageId!], [pending.id]);
          await t.repo.writeStatuses(
            tx,
            rows.map((m) => ({
              ...m,
              status: 'delivered',
              deliveredAt: new Date(),
              upstreamMessageId: m.upstreamMessageId ?? wamid(),
            })),
          );
          throw new Error('the events could not be marked processed');
        }),
      ).rejects.toThrow('marked processed');

      expect(await t.repo.findOne(scope.businessAccountId, sent.id)).toEqual(sent);
      expect(await t.repo.findOne(scope.businessAccountId, pending.id)).toEqual(pending);
      // Still unlinked: the next delivery of the status finds it by its callback id again.
      expect((await lock([], [pending.id])).map((m) => m.id)).toEqual([pending.id]);
    });
  });

  /**
   * Regression guard: markSent and markFailed once found the row through the (business_account_id, to,
   * created_at) index and read every message of the account on each send (a generic plan made before the
   * table had statistics). Their statements, as the repository sends them, are planned here on a copy of
   * `messages` that has no statistics (a temporary table of the same shape, never analysed): a named statement
   * as a generic plan (EXPLAIN GENERIC_PLAN, PostgreSQL 16+), on the empty copy; the batched markSent, which is
   * sent unnamed and so planned for its values on each run, with its own values on a copy that grew to 20,000
   * rows without statistics. Every scan of `messages` must be on its primary key.
   */
  describe('finds the row by primary key', () => {
    /** The statement the repository sends to the pool for `call` (text and values). */
    async function statementOf(call: () => Promise<unknown>): Promise<pg.QueryConfig> {
      const spy = jest.spyOn(t.db.pool, 'query');
      try {
        await call();
        return spy.mock.calls[0]![0] as unknown as pg.QueryConfig;
      } finally {
        spy.mockRestore();
      }
    }
    type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };
    const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

    /**
     * How `messages` is scanned by the plan of `statement` on a table of the same shape without statistics: the
     * generic plan of a named statement (on an empty table), the plan for its values of an unnamed one (on a
     * table of `rows` rows, never analysed).
     */
    async function scansOfMessages(statement: pg.QueryConfig, rows = 0): Promise<Array<[string, string | undefined]>> {
      const client = await t.db.pool.connect();
      try {
        await client.query('BEGIN');
        // Shadows public.messages in this transaction only (pg_temp is searched first), and is dropped with it.
        await client.query('CREATE TEMPORARY TABLE messages (LIKE public.messages INCLUDING ALL) ON COMMIT DROP');
        if (rows > 0) {
          await client.query(
            // Rows as wide as real ones (a text body, a recipient, a phone number id): the planner weighs pages.
            `INSERT INTO messages (business_account_id, phone_number_id, "to", type, status, content, updated_at)
             SELECT gen_random_uuid(), '106540352242922', '4477' || (10000000 + g), 'text', 'pending',
                    jsonb_build_object('text', jsonb_build_object('body', repeat('x', 200), 'previewUrl', false)), now()
               FROM generate_series(1, $1::int) g`,
            [rows],
          );
        }
        const { rows: plan } = statement.name
          ? await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
              `EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${statement.text}`,
            )
          : await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
              `EXPLAIN (FORMAT JSON) ${statement.text}`,
              statement.values,
            );
        return nodesOf(plan[0]!['QUERY PLAN'][0].Plan)
          .filter((n) => n['Relation Name'] === 'messages' && n['Node Type'].endsWith('Scan'))
          .map((n) => [n['Node Type'], n['Index Name']]);
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    }

    it('markSent', async () => {
      const { scope, message } = await pendingOfNewScope();
      const markSent = await statementOf(() =>
        t.repo.markSent(scope.businessAccountId, message.id, wamid(), new Date()),
      );
      expect(markSent.name).toBeUndefined();
      // The rows locked in id order first (lockedInIdOrder), then updated: both found by primary key.
      expect(await scansOfMessages(markSent, 20_000)).toEqual([
        ['Index Scan', 'messages_pkey'],
        ['Index Scan', 'messages_pkey'],
      ]);
    });

    it("lockForStatuses (the worker's batches)", async () => {
      let statement: pg.QueryConfig | undefined;
      // Only to capture the statement the repository sends; it is then planned on the real PostgreSQL below.
      const capturing = txOn({
        query: async (config: pg.QueryConfig) => ((statement = config), { rows: [], rowCount: 0 }),
      } as unknown as pg.ClientBase);
      await t.repo.lockForStatuses(capturing, Array.from({ length: 100 }, wamid), [1, 2, 3]);
      expect(statement!.name).toBeUndefined();
      const scans = await scansOfMessages(statement!, 20_000);
      // Three lookups (by wamid, by callback id, then the rows to lock by id), each through an index.
      expect(scans).toHaveLength(3);
      expect(scans.filter(([type]) => !['Index Scan', 'Bitmap Heap Scan'].includes(type))).toEqual([]);
    });

    it('markFailed', async () => {
      const { scope, message } = await pendingOfNewScope();
      const markFailed = await statementOf(() => t.repo.markFailed(scope.businessAccountId, message.id, failure));
      const scans = await scansOfMessages(markFailed);
      expect(scans.length).toBeGreaterThanOrEqual(2);
      expect(scans.filter(([type, index]) => type !== 'Index Scan' || index !== 'messages_pkey')).toEqual([]);
    });
  });
});
