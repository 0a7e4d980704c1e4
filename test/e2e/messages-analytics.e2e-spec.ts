import { startStack, type Stack } from '../utils/stack.js';
import {
  eventually,
  helloWorld,
  onboard,
  postSimStatuses,
  recipient,
  type OnboardedTenant,
} from '../utils/factories.js';
import { backdateMessages, insertMessages } from '../utils/messaging-rows.js';
import { accountRow } from '../utils/db-rows.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

const parcelUpdate = (t: OnboardedTenant, to: string) => ({
  ...helloWorld(t, to),
  templateName: 'parcel_update',
  templateLanguage: 'en_GB',
  components: [
    { type: 'header', parameters: [{ type: 'text', text: 'ORD-7781' }] },
    {
      type: 'body',
      parameters: [
        { type: 'text', text: 'Priya' },
        { type: 'text', text: 'ORD-7781' },
      ],
    },
    { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'ORD-7781' }] },
  ],
});

/** No status here carries a pricing object (the statuses are posted without one): every count is zero. */
const noCategories = {
  marketing: 0,
  utility: 0,
  authentication: 0,
  authentication_international: 0,
  service: 0,
  marketing_lite: 0,
  referral_conversion: 0,
  group_marketing: 0,
  group_utility: 0,
  group_service: 0,
  general_purpose_ai: 0,
};
const noPricing = {
  byCategory: noCategories,
  byType: { regular: 0, free_customer_service: 0, free_entry_point: 0 },
  billable: 0,
  billableByCategory: noCategories,
};

const startOfHour = (ms: number) => Math.floor(ms / HOUR) * HOUR;
const startOfDay = (ms: number) => Math.floor(ms / DAY) * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

interface Bucket {
  bucket: string;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  inbound: number;
}

/**
 * Statuses are driven explicitly: the simulator's automatic status webhooks are off, and the statuses each
 * message should reach are posted through the simulator (signed webhooks → receiver → real worker).
 */
describe('GET /messages/analytics', () => {
  let stack: Stack;
  let t: OnboardedTenant;
  let other: OnboardedTenant;
  /** Where most messages were (re)dated: ten minutes into the hour before the current one. */
  let anchor: number;

  const analytics = (query: Record<string, string> = {}, tenant: OnboardedTenant = t) =>
    stack.http.get('/messages/analytics').query(query).set(tenant.key.headers);

  async function send(
    body: Record<string, unknown>,
    status = 200,
  ): Promise<{ id: number; upstreamMessageId: string | null; to: string }> {
    const res = await stack.http.post('/messages').set(t.key.headers).send(body);
    expect(res.status).toBe(status);
    return res.body.data;
  }

  /** One signed status webhook carrying every given status, in order. */
  async function postStatuses(
    statuses: Array<{ message: { upstreamMessageId: string | null; to: string }; status: string; errors?: unknown[] }>,
  ) {
    await postSimStatuses(
      stack,
      t,
      statuses.map(({ message, status, errors }) => ({
        id: message.upstreamMessageId,
        status,
        recipient_id: message.to,
        ...(errors ? { errors } : {}),
      })),
    );
  }

  beforeAll(async () => {
    stack = await startStack({ worker: true, sim: { webhooksEnabled: false } });
    [t, other] = await Promise.all([onboard(stack, 'Analytics Org'), onboard(stack, 'Other Analytics Org')]);

    const [delivered, read, readParcel, sentOnly, asyncFailed, undeliverable1, undeliverable2, restricted] =
      await Promise.all([
        send(helloWorld(t, recipient())),
        send(helloWorld(t, recipient())),
        send(parcelUpdate(t, recipient())),
        send(helloWorld(t, recipient())),
        send(parcelUpdate(t, recipient())),
        send(helloWorld(t, '15550000001'), 422),
        send(helloWorld(t, '15550000001'), 422),
        send(parcelUpdate(t, '15550000009'), 424),
      ]);

    await postStatuses([
      { message: delivered, status: 'delivered' },
      { message: read, status: 'read' }, // read without delivered
      { message: readParcel, status: 'delivered' },
      { message: readParcel, status: 'read' },
      {
        message: asyncFailed,
        status: 'failed',
        errors: [
          {
            code: 131047,
            title: 'Re-engagement message',
            message: 'Re-engagement message',
            error_data: { details: 'More than 24 hours have passed.' },
          },
        ],
      },
    ]);
    const settled = await eventually(
      async () => {
        const rows = await stack.db
          .on()
          .selectFrom('messages')
          .select(['id', 'status'])
          .where('id', 'in', [delivered.id, read.id, readParcel.id, asyncFailed.id])
          .execute();
        const by = new Map(rows.map((r) => [r.id, r.status]));
        return (
          by.get(delivered.id) === 'delivered' &&
          by.get(read.id) === 'read' &&
          by.get(readParcel.id) === 'read' &&
          by.get(asyncFailed.id) === 'failed'
        );
      },
      { timeoutMs: 15000 },
    );
    expect(settled).toBe(true);

    // Test data the API cannot make: fixed creation times, so the buckets do not depend on the clock.
    anchor = startOfHour(Date.now()) - HOUR + 10 * 60_000;
    const all = [delivered, read, sentOnly, asyncFailed, undeliverable1, undeliverable2, restricted].map((m) => m.id);
    await backdateMessages(stack, all, new Date(anchor));
    await backdateMessages(stack, [readParcel.id], new Date(anchor - 2 * DAY));
    // Two customers wrote in: counted apart (inbound), never in the sends' totals or rates.
    const account = await accountRow(stack.db, { wabaId: t.account.wabaId });
    await insertMessages(
      stack,
      [1, 2].map((n) => ({
        business_account_id: account.id,
        phone_number_id: t.account.phoneNumberId,
        direction: 'inbound',
        from: recipient(),
        to: null,
        type: 'text',
        status: 'received',
        content: JSON.stringify({ text: { body: `question ${n}` } }),
        created_at: new Date(anchor),
      })),
    );

    // Another account's traffic must not show up.
    const res = await stack.http.post('/messages').set(other.key.headers).send(helloWorld(other, '15550000001'));
    expect(res.status).toBe(422);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('covers the last 7 days by day by default, with totals, rates, failure reasons and templates', async () => {
    const before = Date.now();
    const res = await analytics();
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Success');
    const data = res.body.data;
    expect(data.granularity).toBe('day');
    const until = Date.parse(data.until);
    expect(until).toBeGreaterThanOrEqual(before - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 1000);
    expect(until - Date.parse(data.since)).toBe(7 * DAY);

    // 8 messages: 5 accepted upstream (sent), delivered 3 (read counts as delivered), read 2, failed 4.
    expect(data.totals).toEqual({ total: 8, sent: 5, delivered: 3, read: 2, failed: 4 });
    expect(data.inbound).toBe(2);
    expect(data.rates).toEqual({ delivery: 0.375, read: 0.25, failure: 0.5 });
    expect(data.failureReasons).toEqual([
      { code: 131026, title: 'Message undeliverable', count: 2 },
      { code: 368, title: 'Temporarily blocked for policies violations', count: 1 },
      { code: 131047, title: 'Re-engagement message', count: 1 },
    ]);
    expect(data.templates).toEqual([
      { templateName: 'hello_world', total: 5, delivered: 2, read: 1, failed: 2 },
      { templateName: 'parcel_update', total: 3, delivered: 1, read: 1, failed: 2 },
    ]);

    // One bucket per UTC day, oldest first, covering the range.
    const series = data.series as Bucket[];
    expect(series.map((b) => b.bucket)).toEqual(
      Array.from({ length: series.length }, (_, i) => iso(startOfDay(Date.parse(data.since)) + i * DAY)),
    );
    expect(series.length).toBe(8);
    expect(series.find((b) => b.bucket === iso(startOfDay(anchor)))).toEqual({
      bucket: iso(startOfDay(anchor)),
      sent: 4,
      delivered: 2,
      read: 1,
      failed: 4,
      inbound: 2,
      pricing: noPricing,
    });
    expect(series.find((b) => b.bucket === iso(startOfDay(anchor - 2 * DAY)))).toEqual({
      bucket: iso(startOfDay(anchor - 2 * DAY)),
      sent: 1,
      delivered: 1,
      read: 1,
      failed: 0,
      inbound: 0,
      pricing: noPricing,
    });
    expect(data.pricing).toEqual(noPricing);
    const sum = (k: keyof Omit<Bucket, 'bucket'>) => series.reduce((n, b) => n + b[k], 0);
    expect({
      sent: sum('sent'),
      delivered: sum('delivered'),
      read: sum('read'),
      failed: sum('failed'),
      inbound: sum('inbound'),
    }).toEqual({ sent: 5, delivered: 3, read: 2, failed: 4, inbound: 2 });
  });

  it('buckets by hour over an explicit range', async () => {
    const since = startOfHour(anchor) - HOUR;
    const until = startOfHour(anchor) + HOUR;
    const res = await analytics({ since: iso(since), until: iso(until), granularity: 'hour' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ since: iso(since), until: iso(until), granularity: 'hour' });
    expect(res.body.data.series).toEqual([
      { bucket: iso(since), sent: 0, delivered: 0, read: 0, failed: 0, inbound: 0, pricing: noPricing },
      { bucket: iso(startOfHour(anchor)), sent: 4, delivered: 2, read: 1, failed: 4, inbound: 2, pricing: noPricing },
    ]);
    // The parcel message read two days earlier is outside the range.
    expect(res.body.data.totals).toEqual({ total: 7, sent: 4, delivered: 2, read: 1, failed: 4 });
    expect(res.body.data.inbound).toBe(2);
    expect(res.body.data.rates).toEqual({ delivery: 0.2857, read: 0.1429, failure: 0.5714 });
  });

  it('filters by templateName and phoneNumberId', async () => {
    const parcel = await analytics({ templateName: 'parcel_update' });
    expect(parcel.body.data.totals).toEqual({ total: 3, sent: 2, delivered: 1, read: 1, failed: 2 });
    expect(parcel.body.data.templates).toEqual([
      { templateName: 'parcel_update', total: 3, delivered: 1, read: 1, failed: 2 },
    ]);
    expect(parcel.body.data.failureReasons.map((r: { code: number }) => r.code)).toEqual([368, 131047]);

    const own = await analytics({ phoneNumberId: t.account.phoneNumberId });
    expect(own.body.data.totals.total).toBe(8);
    const otherNumber = await analytics({ phoneNumberId: t.account.sim.phoneNumbers[1]!.id });
    expect(otherNumber.body.data.totals).toEqual({ total: 0, sent: 0, delivered: 0, read: 0, failed: 0 });
    expect(otherNumber.body.data.rates).toEqual({ delivery: 0, read: 0, failure: 0 });
    expect(otherNumber.body.data.failureReasons).toEqual([]);
    expect(otherNumber.body.data.templates).toEqual([]);
  });

  it("shows only the key's own account", async () => {
    const res = await analytics({}, other);
    expect(res.body.data.totals).toEqual({ total: 1, sent: 0, delivered: 0, read: 0, failed: 1 });
    expect(res.body.data.failureReasons).toEqual([{ code: 131026, title: 'Message undeliverable', count: 1 }]);
  });

  // One instant for both bounds: two Date.now() calls can differ by a millisecond.
  const ANHOUR_AGO = iso(Date.now() - HOUR);
  it.each([
    [{ granularity: 'week' }, 'granularity'],
    [{ since: 'last tuesday' }, 'since'],
    [{ until: '2026-02-30T00:00:00Z' }, 'until'],
    [{ since: iso(Date.now() - HOUR), until: iso(Date.now() - 2 * HOUR) }, 'since'],
    [{ since: ANHOUR_AGO, until: ANHOUR_AGO }, 'since'],
    [{ since: iso(Date.now() - 40 * DAY), granularity: 'hour' }, 'since'],
    [{ phoneNumberId: 'abc' }, 'phoneNumberId'],
    [{ status: 'read' }, 'status'],
  ])('refuses %j with 422 naming %s', async (query, field) => {
    const res = await analytics(query);
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('Field Validation Failed');
    expect(res.body.errors).toEqual([{ field, message: expect.any(String) }]);
  });
});
