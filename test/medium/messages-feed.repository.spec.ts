import { jest } from '@jest/globals';
import pg from 'pg';
import { Db } from '../../src/core/db/db.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import type { FeedPosition } from '../../src/events/feed-cursor.js';
import {
  MessagesRepository,
  type InboundMessageRow,
  type StatusCandidate,
} from '../../src/messages/messages.repository.js';
import { EventsRepository } from '../../src/events/events.repository.js';
import {
  eventRow,
  eventually,
  insertDelivery,
  insertSendScope,
  pendingMessage,
  repositoryUnderTest,
  wamid,
} from '../utils/factories.js';

jest.setTimeout(180_000);

type Scope = Awaited<ReturnType<typeof insertSendScope>>;

/**
 * The messages side of conversations against the real PostgreSQL: inbound rows stored once, the feed's order and
 * horizon over (changed_xid, id) with the trigger that moves a changed message, and the one-snapshot list.
 */
describe('MessagesRepository: inbound messages and the feed (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new MessagesRepository(db));
  const uow = () => new UnitOfWork(t.db);
  const START: FeedPosition = { xid: 0n, id: 0 };
  const inbound = (scope: Scope, overrides: Partial<InboundMessageRow> = {}): InboundMessageRow => ({
    wabaId: scope.wabaId,
    phoneNumberId: '402000000000011',
    from: '447700900123',
    userId: null,
    handledBy: null,
    type: 'text',
    content: { text: { body: 'hello' } },
    wamid: wamid(),
    ...overrides,
  });

  /** Every page of the account's feed from `after` until one comes back empty; the last position reached. */
  async function follow(scope: Scope, after: FeedPosition, limit = 50) {
    const seen: Array<{ id: number; status: string; xid: string }> = [];
    let position = after;
    for (;;) {
      const page = await t.repo.feed(scope.businessAccountId, {}, position, limit);
      if (page.rows.length === 0) return { seen, position, beyond: page.beyond };
      seen.push(...page.rows.map((r) => ({ id: r.id, status: r.status, xid: r.xid })));
      const last = page.rows.at(-1)!;
      position = { xid: BigInt(last.xid), id: last.id };
    }
  }

  /** The feed once every row written so far is below the horizon (another file's open transaction can hold it a moment). */
  const settled = async (scope: Scope, after: FeedPosition, expected: number) =>
    (await eventually(async () => {
      const r = await follow(scope, after);
      return r.seen.length >= expected && r.beyond === undefined ? r : undefined;
    }))!;

  it('stores an inbound message once per wamid, in the account that owns the receiving WABA, and nothing for an unknown WABA', async () => {
    const scope = await insertSendScope(t.db);
    const row = inbound(scope, { from: null, userId: 'US.777' });
    expect(
      await uow().run((tx) => t.repo.insertInbound(tx, [row, inbound({ ...scope, wabaId: '999000000000001' })])),
    ).toBe(1);
    // A redelivery (same wamid) in a later transaction stores nothing.
    expect(await uow().run((tx) => t.repo.insertInbound(tx, [row]))).toBe(0);
    const { rows } = await t.repo.list(
      scope.businessAccountId,
      { direction: 'inbound' },
      { page: 1, limit: 10 },
      10_000,
    );
    expect(rows).toEqual([
      expect.objectContaining({
        direction: 'inbound',
        status: 'received',
        from: null,
        userId: 'US.777',
        to: null,
        upstreamMessageId: row.wamid,
        content: row.content,
        phoneNumberId: row.phoneNumberId,
      }),
    ]);
    expect(
      (await t.repo.list(scope.businessAccountId, { direction: 'outbound' }, { page: 1, limit: 10 }, 10_000)).total,
    ).toBe(0);
  });

  it("lists a message again, once, in its latest state when its status changes; other writes don't move it", async () => {
    const scope = await insertSendScope(t.db);
    const sent = await t.repo.insertPending(scope.businessAccountId, pendingMessage(scope.apiKeyId));
    const first = await settled(scope, START, 1);
    expect(first.seen.map((s) => [s.id, s.status])).toEqual([[sent.id, 'pending']]);

    const w = wamid();
    expect(await t.repo.markSent(scope.businessAccountId, sent.id, w, new Date())).toBe(true);
    const second = await settled(scope, first.position, 1);
    expect(second.seen.map((s) => [s.id, s.status])).toEqual([[sent.id, 'sent']]);
    expect(BigInt(second.seen[0]!.xid)).toBeGreaterThan(BigInt(first.seen[0]!.xid));

    // The worker's status write: delivered, with pricing.
    await uow().run(async (tx) => {
      const [locked] = await t.repo.lockForStatuses(tx, [w], []);
      const changed: StatusCandidate = {
        ...locked!,
        status: 'delivered',
        deliveredAt: new Date(),
        pricingCategory: 'utility',
      };
      await t.repo.writeStatuses(tx, [changed]);
    });
    const third = await settled(scope, second.position, 1);
    expect(third.seen.map((s) => [s.id, s.status])).toEqual([[sent.id, 'delivered']]);

    // A write of nothing the feed follows (the late acceptance fills only what is missing) leaves it where it is.
    await t.repo.recordLateAcceptance(scope.businessAccountId, sent.id, w, new Date());
    await new Promise((r) => setTimeout(r, 50));
    expect((await follow(scope, third.position)).seen).toEqual([]);
  });

  it('never passes a message of a transaction still open: it comes after, in order, once that transaction ends', async () => {
    const scope = await insertSendScope(t.db);
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO messages (business_account_id, phone_number_id, "to", type, status, updated_at) VALUES ($1, '402000000000011', '447700900001', 'text', 'pending', now()) RETURNING id`,
        [scope.businessAccountId],
      );
      const early = Number(rows[0]!.id);
      const later = await t.repo.insertPending(scope.businessAccountId, pendingMessage(scope.apiKeyId));
      // The later message has committed, but the open transaction is older: the feed holds it back and says so.
      const held = await t.repo.feed(scope.businessAccountId, {}, START, 10);
      expect(held.rows).toEqual([]);
      expect(held.beyond).toBeDefined();
      await client.query('COMMIT');
      const after = await settled(scope, START, 2);
      expect(after.seen.map((s) => s.id)).toEqual([early, later.id]);
    } finally {
      await client.end();
    }
  });

  it('hands every change to a poller once, in order, while 4 writers insert and move messages concurrently', async () => {
    const scope = await insertSendScope(t.db);
    const WRITERS = 4;
    const ROUNDS = 25;
    const finals = new Map<number, string>();
    let writing = true;
    const writers = Array.from({ length: WRITERS }, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        // Each round: a pending send (its own statement) and an inbound burst in a worker-style transaction.
        const sent = await t.repo.insertPending(scope.businessAccountId, pendingMessage(scope.apiKeyId));
        finals.set(sent.id, 'pending');
        if (round % 2 === 0 && (await t.repo.markSent(scope.businessAccountId, sent.id, wamid(), new Date())))
          finals.set(sent.id, 'sent');
        await uow().run((tx) => t.repo.insertInbound(tx, [inbound(scope), inbound(scope)]));
      }
    });
    const polled = new Map<number, string>();
    const order: string[] = [];
    let position = START;
    const poller = (async () => {
      for (;;) {
        const stillWriting = writing;
        const page = await t.repo.feed(scope.businessAccountId, {}, position, 37);
        for (const r of page.rows) {
          polled.set(r.id, r.status);
          order.push(`${r.xid}:${r.id}`);
        }
        if (page.rows.length > 0) position = { xid: BigInt(page.rows.at(-1)!.xid), id: page.rows.at(-1)!.id };
        else if (!stillWriting && page.beyond === undefined) return;
        else await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await Promise.all(writers);
    writing = false;
    await poller;

    const pages = await Promise.all(
      [1, 2, 3].map((page) => t.repo.list(scope.businessAccountId, {}, { page, limit: 100 }, 10_000)),
    );
    expect(pages[0]!.total).toBe(WRITERS * ROUNDS * 3);
    const stored = new Map(pages.flatMap((p) => p.rows).map((m) => [m.id, m.status]));
    // Every message seen, each last in its stored state; positions strictly increasing (nothing twice, nothing behind).
    expect(polled).toEqual(stored);
    for (const [id, status] of finals) expect(stored.get(id)).toBe(status);
    const keys = order.map((k) => k.split(':').map(BigInt) as [bigint, bigint]);
    for (let i = 1; i < keys.length; i++)
      expect(keys[i]![0] > keys[i - 1]![0] || (keys[i]![0] === keys[i - 1]![0] && keys[i]![1] > keys[i - 1]![1])).toBe(
        true,
      );
  });

  it('reads a message and its status history in one snapshot: a status committed between the two reads shows in neither', async () => {
    const scope = await insertSendScope(t.db);
    const events = new EventsRepository(t.db);
    const sent = await t.repo.insertPending(scope.businessAccountId, pendingMessage(scope.apiKeyId));
    const w = wamid();
    await t.repo.markSent(scope.businessAccountId, sent.id, w, new Date());
    const deliveryId = (await insertDelivery(t.db, { wabaIds: [scope.wabaId] })).id;
    // The worker's transaction: the `delivered` event and the message's new status together.
    const deliver = () =>
      uow().run(async (tx) => {
        await events.insert(tx, [eventRow(deliveryId, scope.wabaId, { messageId: w, processed: true })]);
        const [locked] = await t.repo.lockForStatuses(tx, [w], []);
        await t.repo.writeStatuses(tx, [{ ...locked!, status: 'delivered', deliveredAt: new Date() }]);
      });
    const read = await uow().snapshot(async (tx) => {
      const message = await t.repo.findOne(scope.businessAccountId, sent.id, tx);
      await Db.outside(deliver); // another transaction, committed between the two reads
      const history = await events.statusHistory(scope.wabaId, w, message!.createdAt, tx);
      return { status: message!.status, history: history.map((h) => h.status) };
    });
    expect(read).toEqual({ status: 'sent', history: [] });
    const after = await uow().snapshot(async (tx) => ({
      status: (await t.repo.findOne(scope.businessAccountId, sent.id, tx))!.status,
      history: (await events.statusHistory(scope.wabaId, w, undefined, tx)).map((h) => h.status),
    }));
    expect(after).toEqual({ status: 'delivered', history: ['delivered'] });
  });

  it('reads a page and its total in one snapshot, and finds a message only in its own account', async () => {
    const [scope, other] = [await insertSendScope(t.db), await insertSendScope(t.db)];
    await uow().run((tx) =>
      t.repo.insertInbound(tx, [
        inbound(scope),
        inbound(scope, { type: 'image', content: { image: { id: '1', mime_type: 'image/png' } } }),
      ]),
    );
    const page = await t.repo.list(scope.businessAccountId, { type: 'image' }, { page: 1, limit: 10 }, 10_000);
    expect([page.total, page.rows.map((r) => r.type)]).toEqual([1, ['image']]);
    expect(await t.repo.findOne(other.businessAccountId, page.rows[0]!.id)).toBeNull();
    expect(await uow().snapshot((tx) => t.repo.findOne(scope.businessAccountId, page.rows[0]!.id, tx))).toEqual(
      page.rows[0],
    );
  });
});
