import { jest } from '@jest/globals';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { EventsRepository, type EventRow } from '../../src/events/events.repository.js';
import { FeedWaiters } from '../../src/events/feed-waiters.js';
import { createTenant, eventRow, insertDelivery, type Tenant } from '../utils/factories.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

jest.setTimeout(300_000);

/**
 * An event as the worker stores one it has applied. The feed is under test here, not processing: statuses stored as
 * waiting for their message (eventRow's default) would be re-run by every worker of the run's shared database for two
 * hours (delivery.sweeper.ts), 10,000 of them slowing every later test's webhooks (a slow-host run of 2026-12-02).
 */
const appliedEvent = (deliveryId: number, wabaId: string, overrides: Partial<EventRow> = {}): EventRow =>
  eventRow(deliveryId, wabaId, { processed: true, ...overrides });

const unlimited = {
  DATABASE_POOL_SIZE: '12',
  CONSOLE_RATE_LIMIT_PER_SECOND: '100000',
  CONSOLE_RATE_LIMIT_BURST: '100000',
  CONSOLE_ADDRESS_RATE_LIMIT_PER_SECOND: '100000',
  CONSOLE_ADDRESS_RATE_LIMIT_BURST: '100000',
};

interface FeedItem {
  id: number;
  kind: string;
  status: string | null;
  recipient: string | null;
}
interface Feed {
  items: FeedItem[];
  nextCursor: string;
  limit: number;
}

/**
 * GET /webhooks/events?after=<cursor>: the feed a poller follows. Events are written through the worker's
 * own insert (EventsRepository.insert in a UnitOfWork transaction), in transactions the tests control.
 */
describe('Webhooks: the events feed (after=cursor, wait=seconds)', () => {
  let t: TestApp;
  let repo: EventsRepository;
  let unitOfWork: UnitOfWork;

  beforeAll(async () => {
    // A poller following 10,000 events makes a few hundred requests in seconds: the console limits are not under test.
    t = await startTestApp(unlimited);
    repo = t.app.get(EventsRepository);
    unitOfWork = t.app.get(UnitOfWork);
  });
  afterAll(async () => {
    await t?.close();
  });

  const deliveryOf = async (tenant: Tenant) => (await insertDelivery(t.db, { wabaIds: [tenant.account.wabaId] })).id;
  /** Stores the rows in one transaction; their ids in the order given. */
  const store = async (rows: EventRow[]) => {
    const inserted = await unitOfWork.run((tx) => repo.insert(tx, rows));
    return rows.map((r) => inserted.get(r.dedupeKey)!.id);
  };
  const feed = async (app: TestApp, tenant: Tenant, query: Record<string, string | number>) => {
    const res = await app.http
      .get('/webhooks/events')
      .query({ wabaId: tenant.account.wabaId, ...query })
      .set('cookie', tenant.operator.cookie);
    expect(res.status).toBe(200);
    return res.body.data as Feed;
  };

  it('hands out each event exactly once to a poller following the cursor while 4 writers commit 10,000 events out of id order', async () => {
    const tenant = await createTenant(t);
    const deliveryId = await deliveryOf(tenant);
    const TOTAL = 10_000;
    const WRITERS = 4;
    const written = new Set<number>();
    let writing = true;

    // A transaction that inserts early (small ids, small xid) and stays open while the others commit thousands.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let heldIds: number[] = [];
    let heldOpen = true;
    let committedWhileHeld = 0;
    const heldTx = unitOfWork.run(async (tx) => {
      const rows = Array.from({ length: 4 }, () => appliedEvent(deliveryId, tenant.account.wabaId));
      const inserted = await repo.insert(tx, rows);
      heldIds = rows.map((r) => inserted.get(r.dedupeKey)!.id);
      await held;
      heldOpen = false;
    });
    await sleep(50);
    // Released while the writers are busy (not after them: writers sharing its event_counts shard wait on it): once
    // COMMITTED_WHILE_HELD events of theirs have committed past it, however long that takes on this host (the
    // timer is only a ceiling for a host where none gets through).
    const COMMITTED_WHILE_HELD = 200;
    const releaseTimer = setTimeout(() => release(), 60_000);

    const writer = async (share: number, seed: number) => {
      let left = share;
      let n = seed;
      while (left > 0) {
        n = (n * 1103515245 + 12345) % 2 ** 31;
        const size = Math.min(left, 1 + (n % 25));
        left -= size;
        const holdMs = n % 3 === 0 ? n % 40 : 0;
        // Insert, then (sometimes) stay open while later transactions of the other writers commit.
        const ids = await unitOfWork.run(async (tx) => {
          const rows = Array.from({ length: size }, () => appliedEvent(deliveryId, tenant.account.wabaId));
          const inserted = await repo.insert(tx, rows);
          if (holdMs) await sleep(holdMs);
          return [...inserted.values()].map((e) => e.id);
        });
        for (const id of ids) written.add(id);
        if (heldOpen) committedWhileHeld += ids.length;
        if (heldOpen && committedWhileHeld >= COMMITTED_WHILE_HELD) release();
      }
    };
    const writers = Promise.all(Array.from({ length: WRITERS }, (_, i) => writer((TOTAL - 4) / WRITERS, i * 7919 + 17)))
      .then(async () => {
        clearTimeout(releaseTimer);
        release();
        await heldTx;
        for (const id of heldIds) written.add(id);
      })
      .finally(() => (writing = false));

    const seen: number[] = [];
    const seenOnce = new Set<number>();
    let duplicates = 0;
    let cursor = '0';
    let pages = 0;
    let idWentBack = false;
    // After the writers are done, the feed must be complete within a few reads (a miss would never show up).
    let emptyAfterWriters = 0;
    while (writing || (seenOnce.size < written.size && emptyAfterWriters < 5)) {
      const page = await feed(t, tenant, { after: cursor, limit: 100, wait: writing ? 1 : 0 });
      pages++;
      for (const e of page.items) {
        if (seenOnce.has(e.id)) duplicates++;
        if (seen.length > 0 && e.id < seen.at(-1)!) idWentBack = true;
        seen.push(e.id);
        seenOnce.add(e.id);
      }
      if (page.items.length === 0) expect(page.nextCursor).toBe(cursor);
      if (!writing && page.items.length === 0) emptyAfterWriters++;
      cursor = page.nextCursor;
    }
    await writers;

    expect(written.size).toBe(TOTAL);
    expect(duplicates).toBe(0);
    expect(seen.length).toBe(TOTAL);
    expect([...written].filter((id) => !seenOnce.has(id))).toEqual([]);
    // The test means something only if commits really were out of id order: an id lower than one handed
    // out before it (the held transaction's two, at least), which an "id > last id" cursor would have skipped.
    expect(idWentBack).toBe(true);
    expect(committedWhileHeld).toBeGreaterThan(0);
    // The held transaction wrote first (smallest xid): its events lead the feed although thousands of later
    // ones committed before it did; while it was open the feed stopped short of them instead of passing them.
    expect(seen.slice(0, heldIds.length)).toEqual([...heldIds].sort((x, y) => x - y));
    expect(pages).toBeGreaterThanOrEqual(TOTAL / 100);
    // Nothing more, and the cursor stays put.
    expect(await feed(t, tenant, { after: cursor, limit: 100 })).toEqual({ items: [], nextCursor: cursor, limit: 100 });
  });

  it('pages through the feed oldest first by cursor, and combines it with filters', async () => {
    const tenant = await createTenant(t);
    const deliveryId = await deliveryOf(tenant);
    const who = '447700900555';
    const first = await store([
      appliedEvent(deliveryId, tenant.account.wabaId, { status: 'sent' }),
      appliedEvent(deliveryId, tenant.account.wabaId, { status: 'read', recipient: who }),
      appliedEvent(deliveryId, tenant.account.wabaId, {
        kind: 'inbound_message',
        status: null,
        title: 'Inbound message',
        recipient: who,
      }),
    ]);
    const second = await store([
      appliedEvent(deliveryId, tenant.account.wabaId, { status: 'read' }),
      appliedEvent(deliveryId, tenant.account.wabaId, { status: 'delivered', recipient: who }),
    ]);
    // One statement stores its rows in dedupe-key order, so ids follow that within a transaction.
    const byId = (ids: number[]) => [...ids].sort((x, y) => x - y);
    const all = [...byId(first), ...byId(second)];
    // The feed shows only what is below its horizon: another test file's open transaction may hold it back a
    // moment. Once all five are shown they stay shown (the horizon only moves forward), so the pages below are exact.
    for (let i = 0; i < 100 && (await feed(t, tenant, { after: '0', limit: 10 })).items.length < all.length; i++)
      await sleep(100);

    const one = await feed(t, tenant, { after: '0', limit: 2 });
    expect(one.items.map((e) => e.id)).toEqual(all.slice(0, 2));
    const two = await feed(t, tenant, { after: one.nextCursor, limit: 2 });
    expect(two.items.map((e) => e.id)).toEqual(all.slice(2, 4));
    const three = await feed(t, tenant, { after: two.nextCursor, limit: 2 });
    expect(three.items.map((e) => e.id)).toEqual(all.slice(4));
    const end = await feed(t, tenant, { after: three.nextCursor, limit: 2 });
    expect(end).toEqual({ items: [], nextCursor: three.nextCursor, limit: 2 });
    // The browsing form is unchanged: newest first, with totals.
    const browse = await t.http
      .get('/webhooks/events')
      .query({ wabaId: tenant.account.wabaId })
      .set('cookie', tenant.operator.cookie);
    expect(browse.body.data).toMatchObject({ page: 1, limit: 20, total: 5, totalPages: 1 });
    expect(browse.body.data.items.map((e: FeedItem) => e.id)).toEqual([...all].reverse());

    const read = await feed(t, tenant, { after: '0', status: 'read', limit: 1 });
    expect(read.items.map((e) => e.id)).toEqual([first[1]]);
    const read2 = await feed(t, tenant, { after: read.nextCursor, status: 'read' });
    expect(read2.items.map((e) => e.id)).toEqual([second[0]]);
    const theirs = await feed(t, tenant, { after: '0', recipient: who, kind: 'status_update' });
    expect(theirs.items.map((e) => e.id)).toEqual([first[1], second[1]]);
    // A cursor of the unfiltered feed works with a filter, and the other way round.
    const statusOf = new Map(
      [...first, ...second].map((id, i) => [id, ['sent', 'read', null, 'read', 'delivered'][i]]),
    );
    const readAfterOne = await feed(t, tenant, { after: one.nextCursor, status: 'read' });
    expect(readAfterOne.items.map((e) => e.id)).toEqual(all.slice(2).filter((id) => statusOf.get(id) === 'read'));
    const inbound = await feed(t, tenant, { after: '0', kind: 'inbound_message' });
    expect(inbound.items.map((e) => e.id)).toEqual([first[2]]);
    expect((await feed(t, tenant, { after: inbound.nextCursor })).items.map((e) => e.id)).toEqual(
      all.slice(all.indexOf(first[2]!) + 1),
    );

    // `now` starts at the present: only what is stored from then on.
    const now = await feed(t, tenant, { after: 'now' });
    expect(now.items).toEqual([]);
    expect(now.nextCursor).not.toBe('now');
    const [later] = await store([appliedEvent(deliveryId, tenant.account.wabaId)]);
    // A long poll, for the same reason as above.
    expect((await feed(t, tenant, { after: now.nextCursor, wait: 10 })).items.map((e) => e.id)).toEqual([later]);
  });

  it('refuses a malformed, forged or foreign cursor, and after with page, with 422 naming the field', async () => {
    const [a, b] = [await createTenant(t), await createTenant(t)];
    await store([appliedEvent(await deliveryOf(a), a.account.wabaId)]);
    // A long poll: another test file's open transaction may hold the horizon back for a moment, and a cursor
    // taken before A's event is visible would be the start cursor '0', which any tenant may use.
    const ofA = (await feed(t, a, { after: '0', wait: 10 })).nextCursor;
    expect(ofA).not.toBe('0');
    const [body, mac] = ofA.split('.');
    const forged = `${Buffer.from(
      Buffer.from(body!, 'base64url')
        .toString()
        .replace(/:(\d+)$/, ':1'),
    ).toString('base64url')}.${mac}`;
    const cases: [Tenant, Record<string, string | number>, string][] = [
      [a, { after: 'not-a-cursor' }, 'after'],
      [a, { after: '' }, 'after'],
      [a, { after: '-1' }, 'after'],
      [a, { after: `${body}.${mac}x` }, 'after'],
      [a, { after: forged }, 'after'],
      [b, { after: ofA }, 'after'],
      [a, { after: '0', page: 2 }, 'after'],
      [a, { after: '0', wait: 31 }, 'wait'],
      [a, { wait: 1 }, 'wait'],
    ];
    for (const [tenant, query, field] of cases) {
      const res = await t.http
        .get('/webhooks/events')
        .query({ wabaId: tenant.account.wabaId, ...query })
        .set('cookie', tenant.operator.cookie);
      expect({ query, status: res.status }).toEqual({ query, status: 422 });
      expect(res.body).toMatchObject({ statusCode: 422, message: 'Field Validation Failed' });
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    // A's cursor still works for A.
    expect((await feed(t, a, { after: ofA })).items).toEqual([]);
  });

  it('answers a waiting poll as soon as an event commits, in this API process and in another one', async () => {
    const second = await startTestApp(unlimited);
    try {
      for (const app of [t, second]) {
        const tenant = await createTenant(t);
        const deliveryId = await deliveryOf(tenant);
        const start = (await feed(app, tenant, { after: '0' })).nextCursor;
        let answeredEarly = false;
        let committed = false;
        const waiting = feed(app, tenant, { after: start, wait: 20 });
        void waiting.then(() => (answeredEarly = !committed));
        await sleep(400);
        // Still waiting 400 ms in: nothing to answer with yet.
        expect(answeredEarly).toBe(false);
        const committedAt = Date.now();
        committed = true;
        const [id] = await store([appliedEvent(deliveryId, tenant.account.wabaId)]);
        const page = await waiting;
        const answeredAt = Date.now();
        expect(answeredEarly).toBe(false);
        expect(page.items.map((e) => e.id)).toEqual([id]);
        // Well inside the one-second safety re-read: the NOTIFY woke it.
        expect(answeredAt - committedAt).toBeLessThan(700);
      }
    } finally {
      await second.close();
    }
  });

  it('answers an empty page with the same cursor when the wait ends without an event', async () => {
    const tenant = await createTenant(t);
    const started = Date.now();
    const page = await feed(t, tenant, { after: '0', wait: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(page).toEqual({ items: [], nextCursor: '0', limit: 20 });
  });

  it('stops waiting when the client goes away, and answers waiting polls at once when the server stops', async () => {
    const tenant = await createTenant(t);
    const waiters = t.app.get(FeedWaiters);
    const before = waiters.waiting;
    const url = new URL(`${t.url}/webhooks/events?wabaId=${tenant.account.wabaId}&after=0&wait=20`);
    const req = http.get(url, { headers: { cookie: tenant.operator.cookie }, agent: false });
    req.on('error', () => undefined);
    const deadline = Date.now() + 5000;
    while (waiters.waiting === before && Date.now() < deadline) await sleep(20);
    expect(waiters.waiting).toBe(before + 1);
    req.destroy();
    while (waiters.waiting > before && Date.now() < deadline) await sleep(20);
    expect(waiters.waiting).toBe(before);

    const other = await startTestApp(unlimited);
    const started = Date.now();
    const waiting = other.http
      .get('/webhooks/events')
      .query({ wabaId: tenant.account.wabaId, after: '0', wait: 20 })
      .set('cookie', tenant.operator.cookie);
    const answered = waiting.then((res) => res);
    await sleep(300);
    await other.close();
    const res = await answered;
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ items: [], nextCursor: '0', limit: 20 });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('gives each session and organization a share of the waiting slots: the greedy one gets 429, another tenant still long-polls (issue 29, finding 4)', async () => {
    const shared = await startTestApp({ ...unlimited, LONG_POLLS_PER_ORGANIZATION: '3', LONG_POLLS_PER_SESSION: '2' });
    try {
      const [greedy, polite] = [await createTenant(shared), await createTenant(shared)];
      const waiters = shared.app.get(FeedWaiters);
      const held = [0, 1].map(() => {
        const req = http.get(new URL(`${shared.url}/webhooks/events?wabaId=${greedy.account.wabaId}&after=0&wait=20`), {
          headers: { cookie: greedy.operator.cookie },
          agent: false,
        });
        req.on('error', () => undefined);
        return req;
      });
      const deadline = Date.now() + 5000;
      while (waiters.waiting < 2 && Date.now() < deadline) await sleep(20);
      expect(waiters.waiting).toBe(2);

      const refused = await shared.http
        .get('/webhooks/events')
        .query({ wabaId: greedy.account.wabaId, after: '0', wait: 20 })
        .set('cookie', greedy.operator.cookie);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body).toEqual({
        statusCode: 429,
        message: expect.stringMatching(/Too many long polls open for this session \(at most 2/),
      });
      // Without wait the feed still answers the greedy one; and another organization's long poll is not refused.
      expect((await feed(shared, greedy, { after: '0' })).items).toEqual([]);
      expect(await feed(shared, polite, { after: '0', wait: 1 })).toEqual({ items: [], nextCursor: '0', limit: 20 });
      for (const req of held) req.destroy();
      while (waiters.waiting > 0 && Date.now() < deadline) await sleep(20);
      expect(waiters.waiting).toBe(0);
    } finally {
      await shared.close();
    }
  });

  it('documents the feed in the OpenAPI document: after and wait, and nextCursor in the answer', async () => {
    const doc = (await t.http.get('/swagger/docs-json')).body;
    const params = (
      doc.paths['/webhooks/events'].get.parameters as { name: string; in: string; description?: string }[]
    ).filter((p) => p.in === 'query');
    expect(params.map((p) => p.name)).toEqual(
      expect.arrayContaining(['wabaId', 'after', 'wait', 'limit', 'page', 'kind', 'status', 'messageId', 'recipient']),
    );
    expect(params.find((p) => p.name === 'after')!.description).toMatch(/nextCursor/);
    expect(doc.components.schemas.EventFeedView.properties).toEqual(
      expect.objectContaining({ items: expect.anything(), nextCursor: expect.anything(), limit: expect.anything() }),
    );
  });
});
