import { sql } from 'kysely';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { EVENT_KINDS } from '../../src/events/classify.js';
import { dedupeHash } from '../../src/events/dedupe-key.js';
import { EventsRepository, type EventRow } from '../../src/events/events.repository.js';
import { FEED_START } from '../../src/events/feed-cursor.js';
import { eventsPageOf, type EventFilter } from '../../src/events/statements/reads.js';
import {
  encodeEventType,
  encodeKind,
  encodeStatus,
  leanRaw,
  readRaw,
  statusTitle,
} from '../../src/events/statements/lean-encoding.js';
import {
  eventRow,
  eventually,
  insertDelivery,
  metaId,
  momentIn,
  repositoryUnderTest,
  wamid,
} from '../utils/factories.js';

describe('EventsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new EventsRepository(db));
  const unitOfWork = () => new UnitOfWork(t.db);
  const insert = (rows: EventRow[]) => unitOfWork().run((tx) => t.repo.insert(tx, rows));
  /** A delivery of `wabaId` and that many of its events, stored; the events' ids in the order given. */
  async function stored(wabaId: string, ...overrides: Partial<EventRow>[]) {
    const delivery = await insertDelivery(t.db, { wabaIds: [wabaId] });
    const rows = overrides.map((o) => eventRow(delivery.id, wabaId, o));
    const inserted = await insert(rows);
    const refs = rows.map((r) => inserted.get(r.dedupeKey)!);
    return { deliveryId: delivery.id, ids: refs.map((e) => e.id), refs };
  }
  const everything = { page: 1, limit: 100 };
  /** The page of a filter lists `expected` (newest first) and totals their number. */
  async function expectPage(wabaId: string, filter: EventFilter, expected: readonly (number | undefined)[]) {
    const page = await t.repo.page(wabaId, filter, everything);
    expect({ filter, ids: page.rows.map((e) => e.id), total: page.total }).toEqual({
      filter,
      ids: expected,
      total: expected.length,
    });
  }

  describe('insert', () => {
    it('stores a dedupe key once, and returns only what this call inserted', async () => {
      const wabaId = metaId();
      const delivery = await insertDelivery(t.db, { wabaIds: [wabaId] });
      const [a, b, c] = [
        eventRow(delivery.id, wabaId),
        eventRow(delivery.id, wabaId, { status: 'read' }),
        eventRow(delivery.id, wabaId),
      ];
      const redelivered = { ...a, title: 'the same item again' };

      const first = await insert([a, redelivered, b]);
      expect([...first.keys()].sort()).toEqual([a.dedupeKey, b.dedupeKey].sort());
      const second = await insert([c, b, a]);
      expect([...second.keys()]).toEqual([c.dedupeKey]);
      expect(second.get(c.dedupeKey)!.id).toBeGreaterThan(Math.max(...[...first.values()].map((e) => e.id)));

      const page = await t.repo.page(wabaId, {}, everything);
      expect(page.total).toBe(3);
      const ids = [first.get(a.dedupeKey)!.id, first.get(b.dedupeKey)!.id, second.get(c.dedupeKey)!.id];
      expect(page.rows.map((e) => e.id).sort()).toEqual(ids.sort());
      expect(page.rows.find((e) => e.id === first.get(b.dedupeKey)!.id)).toMatchObject({
        deliveryId: delivery.id,
        status: 'read',
        kind: 'status_update',
        processed: false,
      });
    });

    it('marks rows stored as applied processed', async () => {
      const wabaId = metaId();
      const { ids } = await stored(wabaId, { processed: true }, { attempts: 1 });
      const rows = new Map((await t.repo.page(wabaId, {}, everything)).rows.map((e) => [e.id, e]));
      expect(rows.get(ids[0]!)).toMatchObject({ processed: true, attempts: 0 });
      expect(rows.get(ids[1]!)).toMatchObject({ processed: false, attempts: 1 });
    });

    it('stores nothing, and counts nothing, when the unit of work it ran in fails', async () => {
      const wabaId = metaId();
      const delivery = await insertDelivery(t.db, { wabaIds: [wabaId] });
      const rows = [eventRow(delivery.id, wabaId), eventRow(delivery.id, wabaId)];
      await expect(
        unitOfWork().run(async (tx) => {
          expect((await t.repo.insert(tx, rows)).size).toBe(2);
          throw new Error('the message update failed');
        }),
      ).rejects.toThrow('message update');
      expect(await t.repo.page(wabaId, {}, everything)).toEqual({ rows: [], total: 0 });
      expect(await t.repo.page(wabaId, { kind: 'status_update' }, everything)).toEqual({ rows: [], total: 0 });
      // Nothing of the failed try blocks the next one.
      expect((await insert(rows)).size).toBe(2);
    });
  });

  describe('lean columns', () => {
    it("encodes in the worker exactly as the migration's SQL functions do (the rows it converted, every read)", async () => {
      const one = async <T>(query: ReturnType<typeof sql<{ v: T }>>) => (await query.execute(t.db.on())).rows[0]!.v;
      for (const kind of EVENT_KINDS)
        expect(encodeKind(kind)).toBe(await one<number>(sql`SELECT events_kind_code(${kind}) AS v`));
      const statuses = [null, 'sent', 'delivered', 'read', 'failed', 'played', 'deleted', 'warning', 'connect'];
      for (const status of [...statuses, 'terminate', 'ringing', 'accepted', 'rejected', 'completed', 'zapped', '']) {
        const code = await one<number | null>(sql`SELECT events_status_code(${status}::text) AS v`);
        expect(encodeStatus(status)).toEqual([code, code === 0 ? status : null]);
      }
      const fields = [
        'messages',
        'message_template_status_update',
        'calls',
        'security',
        'history',
        'a_field_from_2027',
      ];
      for (const field of fields) {
        const code = await one<number>(sql`SELECT events_type_code(${field}) AS v`);
        expect(encodeEventType(field)).toEqual([code, code === 0 ? field : null]);
      }
      for (const status of [...statuses, 'zapped'])
        for (const [errorTitle, errorCode] of [
          [null, null],
          ['Re-engagement message', 131047],
          [null, 131026],
          ['Rate limit hit', null],
        ] as const) {
          const sqlTitle = await one<string>(
            sql`SELECT events_status_title(${status}::text, ${errorTitle}::text, ${errorCode}::int) AS v`,
          );
          expect(statusTitle(status, errorTitle, errorCode)).toBe(sqlTitle);
        }
      const item = { id: 'wamid.A', status: 'read', recipient_id: '447700900123', timestamp: '1796262642' };
      const cases = [
        { kind: 'status_update', raw: item, messageId: 'wamid.A', status: 'read', recipient: '447700900123' },
        { kind: 'status_update', raw: item, messageId: 'wamid.A', status: 'read', recipient: null },
        { kind: 'status_update', raw: item, messageId: 'wamid.A', status: null, recipient: null },
        { kind: 'status_update', raw: item, messageId: 'wamid.B', status: 'read', recipient: '447700900123' },
        { kind: 'status_update', raw: item, messageId: 'wamid.A', status: 'delivered', recipient: '447700900123' },
        { kind: 'status_update', raw: item, messageId: 'wamid.A', status: 'read', recipient: '447700900999' },
        { kind: 'status_update', raw: { ...item, id: 7 }, messageId: '7', status: 'read', recipient: null },
        { kind: 'status_update', raw: item, messageId: null, status: 'read', recipient: null },
        { kind: 'inbound_message', raw: item, messageId: 'wamid.A', status: null, recipient: null },
      ] as const;
      for (const c of cases) {
        const sqlRaw = await one<Record<string, unknown>>(
          sql`SELECT events_raw_lean(${JSON.stringify(c.raw)}::jsonb, ${c.kind === 'status_update'}, ${c.messageId}::text, ${c.status}::text, ${c.recipient}::text) AS v`,
        );
        expect(leanRaw(c)).toEqual(sqlRaw);
        // Read back (readRaw, in TypeScript) as the migration's events_raw reads it, key order included: a row stored
        // before migration lean_status_items (no `lean`) reads as it did.
        const stored = await one<unknown>(sql`SELECT ${JSON.stringify(sqlRaw)}::jsonb AS v`);
        const sqlRead = await one<unknown>(
          sql`SELECT events_raw(${JSON.stringify(stored)}::jsonb, ${c.kind === 'status_update'}, ${c.messageId}::text, ${c.status}::text, ${c.recipient}::text) AS v`,
        );
        const read = readRaw({
          ...c,
          raw: stored,
          phoneNumberId: null,
          upstreamTimestamp: null,
          lean: null,
          displayPhone: null,
          callbackId: null,
        });
        expect(JSON.stringify(read)).toBe(JSON.stringify(sqlRead));
      }
    });

    /** The row as stored, beside how the repository reads it back. */
    const storedRow = (id: number) =>
      sql<{
        event_type: number;
        event_type_other: string | null;
        kind: number;
        status: number | null;
        status_other: string | null;
        title: string | null;
        raw: Record<string, unknown>;
        lean: number | null;
        display_phone: number | null;
        callback_id: number | null;
        dedupe_key: Buffer;
      }>`SELECT event_type, event_type_other, kind, status, status_other, title, raw, lean, display_phone, callback_id, dedupe_key FROM events WHERE id = ${id}`
        .execute(t.db.on())
        .then((r) => r.rows[0]!);

    it('stores kind, status and webhook field as codes, an unknown status or field as its text, and reads back the names', async () => {
      const wabaId = metaId();
      const pricing = { billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' };
      const { ids } = await stored(
        wabaId,
        { status: 'read', title: 'Message read', pricing, raw: { id: 'x', status: 'read', pricing } },
        { status: 'zapped', title: 'Message status: zapped', eventType: 'a_field_from_2027' },
        {
          kind: 'inbound_message',
          status: null,
          title: 'Inbound text from 447700900123',
          raw: { id: 'y', text: { body: 'hi' } },
        },
        { kind: 'call', eventType: 'calls', status: 'connect', title: 'Call from 447700900123: connect' },
      );
      const all = await Promise.all(ids.map(storedRow));
      const [read, zapped, inbound, call] = [all[0]!, all[1]!, all[2]!, all[3]!];
      expect(read).toMatchObject({ event_type: 1, event_type_other: null, kind: 2, status: 3, status_other: null });
      expect(zapped).toMatchObject({
        event_type: 0,
        event_type_other: 'a_field_from_2027',
        status: 0,
        status_other: 'zapped',
      });
      expect(inbound).toMatchObject({ kind: 1, status: null, status_other: null });
      expect(call).toMatchObject({ event_type: 13, kind: 5, status: 8 });
      // The 16-byte key of dedupe-key.ts, the same as the SQL function the migration converted the old keys with.
      expect(read.dedupe_key).toHaveLength(16);
      const hashed = await sql<{ h: Buffer }>`SELECT events_dedupe_hash(${'a key'}) AS h`.execute(t.db.on());
      expect(hashed.rows[0]!.h.equals(dedupeHash('a key'))).toBe(true);

      const rows = new Map((await t.repo.page(wabaId, {}, everything)).rows.map((e) => [e.id, e]));
      expect(rows.get(ids[0]!)).toMatchObject({ eventType: 'messages', kind: 'status_update', status: 'read' });
      expect(rows.get(ids[1]!)).toMatchObject({
        eventType: 'a_field_from_2027',
        kind: 'status_update',
        status: 'zapped',
      });
      expect(rows.get(ids[2]!)).toMatchObject({ eventType: 'messages', kind: 'inbound_message', status: null });
      expect(rows.get(ids[3]!)).toMatchObject({ eventType: 'calls', kind: 'call', status: 'connect' });

      // Filters and exact totals by the names, an unknown status included.
      for (const [filter, expected] of [
        [{ status: 'zapped' }, [ids[1]]],
        [{ status: 'read' }, [ids[0]]],
        [{ status: 'connect', kind: 'call' }, [ids[3]]],
        [{ kind: 'inbound_message' }, [ids[2]]],
        [{ status: 'delivered' }, []],
      ] as const)
        await expectPage(wabaId, filter, expected);
    });

    it("keeps a status's title and raw item once, and reads both back whole (pricing from the item)", async () => {
      const wabaId = metaId();
      const phoneNumberId = metaId();
      const w = wamid();
      const pricing = { billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' };
      const raw = {
        id: w,
        status: 'failed',
        // The event's upstreamTimestamp (2026-03-01T10:00:00Z) in Unix seconds.
        timestamp: '1772359200',
        recipient_id: '447700900123',
        pricing,
        errors: [{ code: 131047 }],
        metadata: { display_phone_number: '15550001111', phone_number_id: phoneNumberId },
        // What the send path sets (`bm:<message id>`) and Meta echoes in every status of the message.
        biz_opaque_callback_data: 'bm:4242',
      };
      const { ids } = await stored(
        wabaId,
        {
          messageId: w,
          status: 'failed',
          recipient: '447700900123',
          title: 'Message failed: Re-engagement message (131047)',
          errorCode: 131047,
          errorTitle: 'Re-engagement message',
          raw,
          pricing,
          phoneNumberId,
        },
        // Words the generic function does not give: kept as sent, as is an item whose id is not its message id.
        { title: 'Message delivered (by the relay)', raw: { id: 'another-id', status: 'delivered' } },
      );
      const [failed, other] = [await storedRow(ids[0]!), await storedRow(ids[1]!)];
      expect(failed.title).toBeNull();
      // Every key another column holds is out of the row (`lean` names the last five), the rest kept as sent.
      expect(failed.raw).toEqual({ errors: [{ code: 131047 }] });
      expect(failed.display_phone).toBe(15550001111);
      expect(failed.callback_id).toBe(4242);
      expect(failed.lean).not.toBeNull();
      expect(other.title).toBe('Message delivered (by the relay)');
      expect(other.raw).toEqual({ id: 'another-id', status: 'delivered' });
      expect(other.lean).toBeNull();

      const event = await t.repo.findInAccounts([wabaId], ids[0]!);
      expect(event).toMatchObject({ title: 'Message failed: Re-engagement message (131047)', raw, pricing });
      expect(JSON.stringify(event)).not.toMatch(/displayPhone|callbackId|"lean"/);
      expect(JSON.stringify(event!.raw)).toBe(
        JSON.stringify(
          (await sql<{ j: unknown }>`SELECT ${JSON.stringify(raw)}::jsonb AS j`.execute(t.db.on())).rows[0]!.j,
        ),
      );
      expect(await t.repo.findInAccounts([wabaId], ids[1]!)).toMatchObject({
        title: 'Message delivered (by the relay)',
        raw: { id: 'another-id', status: 'delivered' },
        pricing: null,
      });
      const [pending] = (
        await t.repo.pendingOf([(await t.repo.findInAccounts([wabaId], ids[0]!))!.deliveryId], new Date(0))
      ).filter((e) => e.id === ids[0]);
      expect(pending).toMatchObject({ status: 'failed', kind: 'status_update', raw, pricing });
      const [listed] = (await t.repo.page(wabaId, { status: 'failed' }, everything)).rows;
      expect(JSON.stringify(listed!.raw)).toBe(JSON.stringify(event!.raw));
      // Another test file's open transaction may hold the feed's horizon back for a moment.
      const fed = await eventually(async () =>
        (await t.repo.feed(wabaId, {}, FEED_START, 10)).rows.find((e) => e.id === ids[0]),
      );
      expect(fed).toMatchObject({ raw, pricing });
      expect(JSON.stringify(fed!.raw)).toBe(JSON.stringify(event!.raw));
    });
  });

  it("lists a delivery's unprocessed events, oldest first, from the given time on", async () => {
    const wabaId = metaId();
    const one = await stored(wabaId, {}, { processed: true }, {});
    const two = await stored(wabaId, {});
    const elsewhere = await stored(wabaId, {});
    const stale = await stored(wabaId, {});
    const since = new Date(Date.now() - 60_000);
    await t.db
      .on()
      .updateTable('events')
      .set({ created_at: new Date(since.getTime() - 1) })
      .where('id', '=', stale.ids[0]!)
      .execute();

    const pending = await t.repo.pendingOf([two.deliveryId, one.deliveryId, stale.deliveryId], since);
    expect(pending.map((e) => [e.id, e.deliveryId])).toEqual(
      [
        [one.ids[0]!, one.deliveryId],
        [one.ids[2]!, one.deliveryId],
        [two.ids[0]!, two.deliveryId],
      ].sort(([x], [y]) => x! - y!),
    );
    expect(pending[0]).toMatchObject({ wabaId, kind: 'status_update', status: 'delivered' });
    expect(pending.some((e) => e.deliveryId === elsewhere.deliveryId)).toBe(false);
  });

  it('claims unprocessed events once: a second claim of the same ids gets none, a rolled-back one leaves them', async () => {
    const wabaId = metaId();
    const { deliveryId, ids, refs } = await stored(wabaId, {}, {}, { processed: true });
    const since = new Date(Date.now() - 60_000);

    await expect(
      unitOfWork().run(async (tx) => {
        await t.repo.claim(tx, refs);
        throw new Error('effect failed');
      }),
    ).rejects.toThrow('effect failed');
    expect((await t.repo.pendingOf([deliveryId], since)).map((e) => e.id)).toEqual(
      [ids[0]!, ids[1]!].sort((x, y) => x - y),
    );

    expect(await unitOfWork().run((tx) => t.repo.claim(tx, refs))).toEqual(new Set([ids[0], ids[1]]));
    expect(await unitOfWork().run((tx) => t.repo.claim(tx, refs))).toEqual(new Set());
    expect(await t.repo.pendingOf([deliveryId], since)).toEqual([]);
    expect((await t.repo.page(wabaId, {}, everything)).rows.every((e) => e.processed)).toBe(true);
  });

  it('lists deliveries with statuses still waiting, until their tries run out', async () => {
    const t0 = momentIn(1990, 2000);
    const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
    const wabaId = metaId();
    const age = async (ids: number[], minutes: number) => {
      await t.db
        .on()
        .updateTable('events')
        .set({ created_at: at(minutes) })
        .where('id', 'in', ids)
        .execute();
    };
    const waiting = await stored(wabaId, {}, { status: 'read' });
    const alsoWaiting = await stored(wabaId, {});
    const applied = await stored(wabaId, { processed: true });
    const inbound = await stored(wabaId, { kind: 'inbound_message', eventType: 'messages', status: null });
    const triedOut = await stored(wabaId, { attempts: 3 });
    const tooOld = await stored(wabaId, {});
    const tooNew = await stored(wabaId, {});
    for (const d of [waiting, alsoWaiting, applied, inbound, triedOut]) await age(d.ids, 10);
    await age(tooOld.ids, 0);
    await age(tooNew.ids, 20);
    const query = { maxAttempts: 3, createdAfter: at(0), createdBefore: at(20), limit: 10 };

    expect((await t.repo.deliveriesWithWaitingStatuses(query)).sort((x, y) => x - y)).toEqual([
      waiting.deliveryId,
      alsoWaiting.deliveryId,
    ]);
    expect(await t.repo.deliveriesWithWaitingStatuses({ ...query, limit: 1 })).toHaveLength(1);

    // Each run that finds them still waiting counts a try; processed events are not counted.
    const aged = [...waiting.ids, ...applied.ids].map((id) => ({ id, createdAt: at(10) }));
    for (let run = 0; run < 3; run++) await unitOfWork().run((tx) => t.repo.countWait(tx, aged));
    expect(await t.repo.deliveriesWithWaitingStatuses(query)).toEqual([alsoWaiting.deliveryId]);
    const attempts = await t.db
      .on()
      .selectFrom('events')
      .select('attempts')
      .where('id', 'in', [...waiting.ids, ...applied.ids])
      .orderBy('id')
      .execute();
    expect(attempts.map((e) => e.attempts)).toEqual([3, 3, 0]);
  });

  it("gives a message's status history oldest first: status updates of that account and wamid only", async () => {
    const [wabaId, otherWabaId, w] = [metaId(), metaId(), wamid()];
    const second = (s: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, s));
    const of = (status: string | null, upstreamTimestamp: Date | null, more: Partial<EventRow> = {}) => ({
      messageId: w,
      status,
      upstreamTimestamp,
      ...more,
    });
    // Meta's deliveries arrive out of order (read before sent); a tie in the same second keeps the order of arrival.
    await stored(wabaId, of('read', second(7)), of('sent', second(1)));
    await stored(
      wabaId,
      of('delivered', second(7)),
      of(null, second(0), { kind: 'inbound_message', eventType: 'messages' }),
    );
    await stored(wabaId, of('failed', null), { status: 'sent', upstreamTimestamp: second(2) });
    await stored(otherWabaId, of('delivered', second(3)));

    const history = await t.repo.statusHistory(wabaId, w);
    expect(history.map((e) => [e.status, e.upstreamTimestamp])).toEqual([
      ['sent', second(1)],
      ['read', second(7)],
      ['delivered', second(7)],
      ['failed', null],
    ]);
    expect(history.every((e) => e.createdAt instanceof Date)).toBe(true);
    expect(await t.repo.statusHistory(otherWabaId, w)).toEqual([
      expect.objectContaining({ status: 'delivered', upstreamTimestamp: second(3) }),
    ]);
    expect(await t.repo.statusHistory(wabaId, wamid())).toEqual([]);
  });

  it("pages one business account's events newest first, with exact totals under every filter", async () => {
    const [wabaId, otherWabaId] = [metaId(), metaId()];
    const customer = '447700900123';
    const first = await stored(
      wabaId,
      { recipient: customer },
      { status: 'read', recipient: customer },
      { kind: 'inbound_message', status: null },
    );
    const second = await stored(wabaId, { status: 'failed', errorCode: 131026, errorTitle: 'Message undeliverable' });
    await stored(otherWabaId, { recipient: customer }, { status: 'read' });
    const newestFirst = [...second.ids, ...first.ids].sort((x, y) => y - x);

    const page1 = await t.repo.page(wabaId, {}, { page: 1, limit: 3 });
    expect([page1.total, page1.rows.map((e) => e.id)]).toEqual([4, newestFirst.slice(0, 3)]);
    const page2 = await t.repo.page(wabaId, {}, { page: 2, limit: 3 });
    expect([page2.total, page2.rows.map((e) => e.id)]).toEqual([4, newestFirst.slice(3)]);
    expect(page1.rows[0]).toMatchObject({
      wabaId,
      deliveryId: second.deliveryId,
      status: 'failed',
      errorCode: 131026,
      errorTitle: 'Message undeliverable',
    });

    const totalOf = async (filter: Parameters<EventsRepository['page']>[1]) => {
      const { rows, total } = await t.repo.page(wabaId, filter, everything);
      expect(rows.every((e) => e.wabaId === wabaId)).toBe(true);
      return [rows.length, total];
    };
    expect(await totalOf({ kind: 'status_update' })).toEqual([3, 3]);
    expect(await totalOf({ kind: 'status_update', status: 'read' })).toEqual([1, 1]);
    expect(await totalOf({ status: 'failed' })).toEqual([1, 1]);
    expect(await totalOf({ recipient: customer })).toEqual([2, 2]);
    expect(
      await totalOf({ messageId: (await t.repo.page(wabaId, { status: 'failed' }, everything)).rows[0]!.messageId! }),
    ).toEqual([1, 1]);
    expect(await totalOf({ since: new Date(Date.now() - 60_000), kind: 'inbound_message' })).toEqual([1, 1]);
    expect(await totalOf({ until: new Date(Date.now() - 60_000) })).toEqual([0, 0]);
    expect(await t.repo.page(metaId(), {}, everything)).toEqual({ rows: [], total: 0 });
  });

  it('filters by business-scoped user id (pages and feed), stores pricing, and plans the filter on the partial user_id index', async () => {
    const [wabaId, otherWabaId] = [metaId(), metaId()];
    const userId = 'US.13491208655302741918';
    const pricing = { pricing_model: 'PMP', category: 'utility', type: 'regular', billable: true };
    const mine = await stored(
      wabaId,
      // The pricing of a status is its item's (classify: pricingOf(item.pricing)); stored once, in the item.
      { recipient: null, userId, pricing, raw: { id: 'wamid.x', status: 'delivered', pricing } },
      { kind: 'inbound_message', status: null, recipient: null, userId },
      {},
    );
    await stored(otherWabaId, { userId });
    const { rows, total } = await t.repo.page(wabaId, { userId }, everything);
    expect([total, rows.map((e) => e.id).sort()]).toEqual([2, mine.ids.slice(0, 2).sort()]);
    expect(rows.find((e) => e.kind === 'status_update')).toMatchObject({ recipient: null, userId, pricing });
    // Another test file's open transaction may hold the feed's horizon back for a moment.
    const feed = await eventually(async () => {
      const page = await t.repo.feed(wabaId, { userId }, { xid: 0n, id: 0 }, 100);
      return page.rows.length === 2 ? page : undefined;
    });
    expect(feed!.rows.map((e) => e.id).sort()).toEqual(mine.ids.slice(0, 2).sort());

    // The weekly partitions of a fresh database are too small for the planner to prefer an index over reading them:
    // with sequential scans off it still has to pick the partial index of each partition (their names end the same).
    const plan = await t.db.transaction(async (tx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(t.db.on(tx));
      return sql<{
        'QUERY PLAN': string;
      }>`EXPLAIN SELECT id FROM events WHERE waba_id = ${wabaId} AND user_id = ${userId} ORDER BY created_at DESC, id DESC LIMIT 20`.execute(
        t.db.on(tx),
      );
    });
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('waba_id_user_id_created_at_id_idx');
  });

  it("plans the rare kinds and statuses on their partial indexes, and the usual ones on the account's newest-first index", async () => {
    const wabaId = metaId();
    const { ids } = await stored(
      wabaId,
      { status: 'failed', errorCode: 131047, errorTitle: 'Re-engagement message' },
      { kind: 'inbound_message', status: null },
      { status: 'read' },
    );
    for (const [filter, expected] of [
      [{ status: 'failed' }, [ids[0]]],
      [{ kind: 'inbound_message' }, [ids[1]]],
      [{ status: 'read' }, [ids[2]]],
      // One insert, one created_at: newest first is by id then (the insert orders its rows by dedupe key).
      [{ kind: 'status_update' }, [ids[0]!, ids[2]!].sort((a, b) => b - a)],
      [{ kind: 'status_update', status: 'failed' }, [ids[0]]],
    ] as const)
      await expectPage(wabaId, filter, expected);
    // Left empty, a week's partition gives the planner no reason to prefer a partial index (every path costs the same
    // and the first index wins the tie): as in production, most of the week is usual statuses, and it is analyzed.
    const usual = await stored(metaId(), ...Array.from({ length: 600 }, () => ({ status: 'delivered' as const })));
    const { rows: where } = await sql<{
      part: string;
    }>`SELECT tableoid::regclass::text AS part FROM events WHERE id = ${usual.ids[0]!}`.execute(t.db.on());
    await sql`ANALYZE ${sql.table(where[0]!.part)}`.execute(t.db.on());
    // The page statement's generic plan, as the read pool runs it (sequential scans off: see the user id test above).
    const planOf = (filter: EventFilter) =>
      t.db.transaction(async (tx) => {
        await sql`SET LOCAL enable_seqscan = off`.execute(t.db.on(tx));
        const text = eventsPageOf({ wabaId, take: 20, skip: 0, ...filter }).text;
        const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN (GENERIC_PLAN) ${sql.raw(text)}`.execute(
          t.db.on(tx),
        );
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    expect(await planOf({ kind: 'inbound_message' })).toContain('waba_id_kind_created_at_id_idx');
    expect(await planOf({ status: 'failed' })).toContain('waba_id_status_created_at_id_idx');
    expect(await planOf({ status: 'a_status_from_2027' })).toContain('waba_id_status_created_at_id_idx');
    for (const usual of [{ kind: 'status_update' as const }, { status: 'delivered' }]) {
      const plan = await planOf(usual);
      expect(plan).toContain('hashtextextended_created_at_idx');
      expect(plan).not.toMatch(/kind_created_at|status_created_at/);
    }
  });

  /**
   * PostgreSQL left to itself re-plans these statements on every run (≈ 1 ms of the 1.4 ms an events page cost); on
   * the read pool they are planned once, generically, and still answer by the account's newest rows.
   */
  it('plans the page, count and feed once, generically, on the read pool', async () => {
    const wabaId = metaId();
    const { ids } = await stored(wabaId, { status: 'sent' }, { status: 'read' });
    for (let i = 0; i < 7; i++) {
      expect((await t.repo.page(wabaId, { status: 'read' }, everything)).rows.map((e) => e.id)).toEqual([ids[1]]);
      expect((await t.repo.feed(wabaId, {}, { xid: 0n, id: 0 }, 10)).rows.length).toBeLessThanOrEqual(2);
    }
    // Every connection of the read pool (at most its size), each asked for its own prepared statements.
    const size = (t.db.partitionReads as unknown as { options: { max: number } }).options.max;
    const clients = await Promise.all(Array.from({ length: size }, () => t.db.partitionReads.connect()));
    try {
      const plans = await Promise.all(
        clients.map((c) =>
          c.query<{ name: string; generic: number; custom: number }>(
            `SELECT name, generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements
              WHERE name LIKE 'sql_events_page%' OR name LIKE 'sql_events_feed%'`,
          ),
        ),
      );
      const rows = plans.flatMap((p) => p.rows);
      expect(new Set(rows.map((r) => r.name.replace(/_[^_]*$/, '')))).toEqual(
        new Set(['sql_events_page', 'sql_events_feed']),
      );
      expect(rows.reduce((n, r) => n + Number(r.generic), 0)).toBeGreaterThanOrEqual(14);
      expect(rows.reduce((n, r) => n + Number(r.custom), 0)).toBe(0);
    } finally {
      for (const c of clients) c.release();
    }
  });

  describe('feed', () => {
    const start = { xid: 0n, id: 0 };
    const idsOf = (page: { rows: { id: number }[] }) => page.rows.map((e) => e.id);

    it('stops short of a transaction still open, even when later ones have committed, and names it as beyond', async () => {
      const wabaId = metaId();
      const delivery = await insertDelivery(t.db, { wabaIds: [wabaId] });
      const before = await insert([eventRow(delivery.id, wabaId)]);
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let inserted!: () => void;
      const wrote = new Promise<void>((r) => (inserted = r));
      const open = unitOfWork().run(async (tx) => {
        // Another status than the later rows': its event_counts row lock must not make them wait.
        await t.repo.insert(tx, [eventRow(delivery.id, wabaId, { status: 'sent' })]);
        inserted();
        await held;
      });
      await wrote;
      const after = await insert([eventRow(delivery.id, wabaId), eventRow(delivery.id, wabaId)]);
      try {
        // The later transaction committed, but the open one has a smaller xid: the feed ends before both.
        // (Other test files' transactions may hold the horizon back for a moment: `before` shows up once they end.)
        const page = await eventually(async () => {
          const p = await t.repo.feed(wabaId, {}, start, 100);
          return p.rows.length > 0 ? p : undefined;
        });
        expect(idsOf(page!)).toEqual([...before.values()].map((e) => e.id));
        expect(page!.beyond).toBeDefined();
        expect(BigInt(page!.rows[0]!.xid)).toBeLessThan(page!.horizon);
        expect(page!.beyond! >= page!.horizon).toBe(true);
      } finally {
        release();
        await open;
      }
      const all = (await eventually(async () => {
        const p = await t.repo.feed(wabaId, {}, start, 100);
        return p.rows.length === 4 ? p : undefined;
      }))!;
      expect(all.rows).toHaveLength(4);
      expect(idsOf(all).slice(-2).sort()).toEqual([...after.values()].map((e) => e.id).sort());
      // Oldest first by (xid, id), from a position on, with filters.
      const last = all.rows[1]!;
      expect(idsOf(await t.repo.feed(wabaId, {}, { xid: BigInt(last.xid), id: last.id }, 100))).toEqual(
        idsOf(all).slice(2),
      );
      expect(idsOf(await t.repo.feed(wabaId, { status: 'read' }, start, 100))).toEqual([]);
      expect(idsOf(await t.repo.feed(metaId(), {}, start, 100))).toEqual([]);
      expect(await t.repo.feedHorizon()).toBeGreaterThan(BigInt(all.rows[3]!.xid));
    });

    it('orders by transaction id as a number, across the place where xids gain a digit', async () => {
      // Text order would put xid 10 before 9 and 100 before 99: a cursor would then skip or repeat events.
      const wabaId = metaId();
      const { ids } = await stored(wabaId, {}, {}, {}, {});
      const xids = ['100', '99', '10', '9'];
      for (const [i, id] of ids.entries())
        await t.db.pool.query(`UPDATE events SET xid = $1::xid8 WHERE id = $2`, [xids[i], id]);
      const byXid = [ids[3], ids[2], ids[1], ids[0]];
      expect(idsOf(await t.repo.feed(wabaId, {}, start, 100))).toEqual(byXid);
      // Followed one event at a time, the cursor walks the same order, each once.
      const walked: number[] = [];
      let at = start;
      for (let i = 0; i < 6; i++) {
        const p = await t.repo.feed(wabaId, {}, at, 1);
        if (p.rows.length === 0) break;
        walked.push(p.rows[0]!.id);
        at = { xid: BigInt(p.rows[0]!.xid), id: p.rows[0]!.id };
      }
      expect(walked).toEqual(byXid);
    });
  });
});
