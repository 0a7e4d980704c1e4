import { startStack, type Stack } from '../utils/stack.js';
import { helloWorld, onboard, recipient, type OnboardedTenant } from '../utils/factories.js';
import { backdateMessages, messageRow, openWindow } from '../utils/messaging-rows.js';
import { parcelUpdateComponents } from '../utils/template-components.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

const PARCEL_COMPONENTS = parcelUpdateComponents();

const parcelUpdate = (t: OnboardedTenant, to: string) =>
  helloWorld(t, to, { templateName: 'parcel_update', templateLanguage: 'en_GB', components: PARCEL_COMPONENTS });

interface Item {
  id: number;
  to: string;
  status: string;
  type: string;
  templateName: string | null;
  createdAt: string;
}

describe('GET /messages and GET /messages/:id', () => {
  let stack: Stack;
  let t: OnboardedTenant;
  let other: OnboardedTenant;
  /** Sent messages by name, oldest first. */
  const m: Record<'hello' | 'parcel' | 'text' | 'failed' | 'old' | 'twinA' | 'twinB', { id: number; to: string }> =
    {} as never;
  let otherMessageId: number;

  const list = (query: Record<string, string | number> = {}, tenant: OnboardedTenant = t) =>
    stack.http.get('/messages').query(query).set(tenant.key.headers);
  const ids = (res: { body: { data: { items: Item[] } } }) => res.body.data.items.map((i) => i.id);

  async function sendOk(name: keyof typeof m, body: Record<string, unknown>, status = 200) {
    const res = await stack.http.post('/messages').set(t.key.headers).send(body);
    expect(res.status).toBe(status);
    m[name] = { id: res.body.data.id, to: body.to as string };
  }

  beforeAll(async () => {
    stack = await startStack();
    [t, other] = await Promise.all([onboard(stack, 'List Org'), onboard(stack, 'Other List Org')]);
    await sendOk('old', helloWorld(t, recipient()));
    await sendOk('twinA', helloWorld(t, recipient()));
    await sendOk('twinB', helloWorld(t, recipient()));
    await sendOk('hello', helloWorld(t, recipient()));
    await sendOk('parcel', parcelUpdate(t, recipient()));
    const textTo = recipient();
    await openWindow(stack, t.account, textTo);
    await sendOk('text', {
      phoneNumberId: t.account.phoneNumberId,
      to: textTo,
      type: 'text',
      text: { body: 'Your parcel is ready.' },
    });
    await sendOk('failed', helloWorld(t, '15550000001'), 422);
    // Test data that cannot be made through the API: one message three days old, and two created in the
    // same millisecond (the id breaks the tie).
    await backdateMessages(stack, [m.old.id], new Date(Date.now() - 3 * DAY));
    const twinAt = new Date(Date.now() - 2 * DAY);
    await backdateMessages(stack, [m.twinA.id, m.twinB.id], twinAt);
    const sentOther = await stack.http.post('/messages').set(other.key.headers).send(helloWorld(other, recipient()));
    otherMessageId = sentOther.body.data.id;
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  describe('list', () => {
    it('lists newest first (createdAt desc, then id desc) with page 1 and limit 20 by default', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Success');
      expect(res.body.data).toMatchObject({ page: 1, limit: 20, total: 7, totalPages: 1 });
      expect(ids(res)).toEqual([m.failed.id, m.text.id, m.parcel.id, m.hello.id, m.twinB.id, m.twinA.id, m.old.id]);
      const item = res.body.data.items.find((i: Item) => i.id === m.parcel.id);
      expect(item).toMatchObject({
        to: m.parcel.to,
        type: 'template',
        status: 'sent',
        templateName: 'parcel_update',
        phoneNumberId: t.account.phoneNumberId,
      });
      expect(item.upstreamMessageId).toMatch(/^wamid\./);
      expect(item.createdAt).toMatch(ISO_MS);
    });

    it('pages with page and limit', async () => {
      const p2 = await list({ page: 2, limit: 3 });
      expect(p2.body.data).toMatchObject({ page: 2, limit: 3, total: 7, totalPages: 3 });
      expect(ids(p2)).toEqual([m.hello.id, m.twinB.id, m.twinA.id]);
      const p3 = await list({ page: 3, limit: 3 });
      expect(ids(p3)).toEqual([m.old.id]);
      const beyond = await list({ page: 4, limit: 3 });
      expect(beyond.body.data).toMatchObject({ items: [], total: 7, page: 4 });
    });

    it.each([
      ['status', { status: 'failed' }, ['failed']],
      ['status', { status: 'sent' }, ['text', 'parcel', 'hello', 'twinB', 'twinA', 'old']],
      ['type', { type: 'text' }, ['text']],
      ['templateName', { templateName: 'parcel_update' }, ['parcel']],
    ] as const)('filters by %s (%j)', async (_label, query, expected) => {
      const res = await list(query);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual(expected.map((name) => m[name].id));
      expect(res.body.data.total).toBe(expected.length);
    });

    it('filters by recipient', async () => {
      const res = await list({ to: m.hello.to });
      expect(ids(res)).toEqual([m.hello.id]);
      expect((await list({ to: '15550000001' })).body.data.items.map((i: Item) => i.id)).toEqual([m.failed.id]);
    });

    it('filters by phoneNumberId', async () => {
      expect((await list({ phoneNumberId: t.account.phoneNumberId })).body.data.total).toBe(7);
      const pending = t.account.sim.phoneNumbers.find((p) => p.status === 'PENDING')!.id;
      expect((await list({ phoneNumberId: pending })).body.data).toMatchObject({ items: [], total: 0, totalPages: 0 });
    });

    it('filters by since (inclusive) and until (exclusive)', async () => {
      const recent = await list({ since: new Date(Date.now() - DAY).toISOString() });
      expect(ids(recent)).toEqual([m.failed.id, m.text.id, m.parcel.id, m.hello.id]);
      const oldOnly = await list({ until: new Date(Date.now() - 2.5 * DAY).toISOString() });
      expect(ids(oldOnly)).toEqual([m.old.id]);
      const twins = await messageRow(stack, m.twinA.id);
      const exact = await list({
        since: twins.createdAt.toISOString(),
        until: new Date(twins.createdAt.getTime() + 1).toISOString(),
      });
      expect(ids(exact)).toEqual([m.twinB.id, m.twinA.id]);
      const none = await list({ since: twins.createdAt.toISOString(), until: twins.createdAt.toISOString() });
      expect(ids(none)).toEqual([]);
    });

    it('combines filters', async () => {
      const res = await list({ status: 'sent', type: 'template', since: new Date(Date.now() - DAY).toISOString() });
      expect(ids(res)).toEqual([m.parcel.id, m.hello.id]);
    });

    it.each([
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
      [{ page: 0 }, 'page'],
      [{ since: 'yesterday' }, 'since'],
      [{ until: '2026-13-45' }, 'until'],
      [{ status: 'lost' }, 'status'],
      [{ type: 'poll' }, 'type'],
      [{ to: '+447700900123' }, 'to'],
      [{ templateName: '' }, 'templateName'],
      [{ color: 'red' }, 'color'],
    ])('refuses %j with 422 naming %s', async (query, field) => {
      const res = await list(query);
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('Field Validation Failed');
      expect(res.body.errors).toEqual([{ field, message: expect.any(String) }]);
    });

    it('accepts limit 1 and 100', async () => {
      expect((await list({ limit: 1 })).body.data).toMatchObject({
        limit: 1,
        totalPages: 7,
        items: [expect.objectContaining({ id: m.failed.id })],
      });
      expect((await list({ limit: 100 })).body.data).toMatchObject({ limit: 100, totalPages: 1 });
    });

    it("never includes another account's messages", async () => {
      expect(ids(await list())).not.toContain(otherMessageId);
      expect(ids(await list({}, other))).toEqual([otherMessageId]);
    });
  });

  describe('get one', () => {
    it('returns the full form with content, timestamps and status history', async () => {
      const res = await stack.http.get(`/messages/${m.parcel.id}`).set(t.key.headers);
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Success');
      const data = res.body.data;
      expect(data).toMatchObject({
        id: m.parcel.id,
        phoneNumberId: t.account.phoneNumberId,
        to: m.parcel.to,
        type: 'template',
        status: 'sent',
        templateName: 'parcel_update',
        templateLanguage: 'en_GB',
        error: null,
        deliveredAt: null,
        readAt: null,
        failedAt: null,
        content: { components: PARCEL_COMPONENTS },
      });
      expect(data.upstreamMessageId).toMatch(/^wamid\./);
      expect(data.createdAt).toMatch(ISO_MS);
      expect(data.sentAt).toMatch(ISO_MS);
      expect(data.statusHistory).toEqual([
        { status: 'accepted', timestamp: data.sentAt, receivedAt: data.sentAt, source: 'send' },
      ]);
    });

    it('shows the text of a text message', async () => {
      const res = await stack.http.get(`/messages/${m.text.id}`).set(t.key.headers);
      expect(res.body.data).toMatchObject({
        type: 'text',
        templateName: null,
        content: { text: { body: 'Your parcel is ready.' } },
      });
    });

    it('shows the failure of a rejected send', async () => {
      const res = await stack.http.get(`/messages/${m.failed.id}`).set(t.key.headers);
      expect(res.body.data).toMatchObject({
        status: 'failed',
        upstreamMessageId: null,
        sentAt: null,
        statusHistory: [],
        error: { code: 131026, title: 'Message undeliverable', detail: expect.any(String), category: 'permanent' },
      });
      expect(res.body.data.failedAt).toMatch(ISO_MS);
    });

    it('answers ids above 2^31 as JSON numbers, and finds the message by them (the test tier starts every id sequence there)', async () => {
      expect(m.parcel.id).toBeGreaterThan(2 ** 31);
      expect(Number.isSafeInteger(m.parcel.id)).toBe(true);
      const res = await stack.http.get(`/messages/${m.parcel.id}`).set(t.key.headers);
      expect(res.status).toBe(200);
      expect(res.body.data.id).toBe(m.parcel.id);
      expect(ids(await list({ to: m.parcel.to }))).toEqual([m.parcel.id]);
    });

    it.each([
      ['another account’s message', () => otherMessageId],
      ['an unknown id', () => 2147483647],
      ['an unknown id above 2^32', () => 2 ** 32 + 1],
      ['an unknown id of 11 digits', () => 99999999999],
      ['the largest safe integer', () => Number.MAX_SAFE_INTEGER],
      ['an id beyond 2^53', () => '9007199254740993'],
      ['an id of 20 digits', () => '99999999999999999999'],
      ['id 0', () => 0],
      // Malformed ids name no message either: the same answer as on every route with a row id (ParseRowIdPipe).
      ['a word', () => 'abc'],
      ['a decimal', () => '1.5'],
      ['digits then letters', () => '12abc'],
      ['a negative number', () => '-5'],
    ])('answers 404 Message not found for %s', async (_label, id) => {
      const res = await stack.http.get(`/messages/${id()}`).set(t.key.headers);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: 'Message not found' });
    });
  });
});
