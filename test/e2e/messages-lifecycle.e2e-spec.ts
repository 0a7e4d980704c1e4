import { randomInt } from 'node:crypto';
import { startStack, type Stack } from '../utils/stack.js';
import { eventually, helloWorld, onboard, postSimStatuses, recipient, type Tenant } from '../utils/factories.js';
import { deliveriesOf, messageRow } from '../utils/messaging-rows.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface HistoryItem {
  status: string;
  timestamp: string | null;
  receivedAt: string;
  source: 'send' | 'webhook';
}

interface Detail {
  id: number;
  status: string;
  upstreamMessageId: string | null;
  sentAt: string | null;
  deliveredAt: string | null;
  readAt: string | null;
  failedAt: string | null;
  error: { code: number | null; title: string | null; detail: string | null; category: string | null } | null;
  statusHistory: HistoryItem[];
}

/**
 * The whole loop: API → simulator → signed status webhooks → receiver → queue → real worker → message rows,
 * read back through GET /messages/:id.
 */
describe('Message lifecycle with the worker running', () => {
  let stack: Stack;
  let t: Tenant;
  const HANG = '15550000010';

  const detail = async (id: number): Promise<Detail> => {
    const res = await stack.http.get(`/messages/${id}`).set(t.key.headers);
    expect(res.status).toBe(200);
    return res.body.data as Detail;
  };
  const sendOk = async (to: string) => {
    const res = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, to));
    expect(res.status).toBe(200);
    return res.body.data as { id: number; upstreamMessageId: string };
  };
  const until = async (id: number, done: (d: Detail) => boolean, timeoutMs = 15000) => {
    const last = await eventually(
      async () => {
        const d = await detail(id);
        return done(d) ? d : null;
      },
      { timeoutMs },
    );
    return last ?? (await detail(id));
  };

  beforeAll(async () => {
    stack = await startStack({ worker: true, sim: { hangMs: 2500 }, env: { UPSTREAM_TIMEOUT_MS: '1000' } });
    t = await onboard(stack, 'Lifecycle Org');
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('moves a message to read, with deliveredAt, readAt and its status history', async () => {
    const sent = await sendOk(recipient());
    const d = await until(sent.id, (x) => x.status === 'read' && x.statusHistory.length >= 4);
    expect(d.status).toBe('read');
    expect(d.upstreamMessageId).toBe(sent.upstreamMessageId);
    expect(d.deliveredAt).toMatch(ISO_MS);
    expect(d.readAt).toMatch(ISO_MS);
    // The simulator stamps delivered 1 s and read 2 s after the send.
    expect(Date.parse(d.readAt!) - Date.parse(d.deliveredAt!)).toBe(1000);
    expect(d.failedAt).toBeNull();
    expect(d.error).toBeNull();
    expect(d.statusHistory.map((h) => [h.status, h.source])).toEqual([
      ['accepted', 'send'],
      ['sent', 'webhook'],
      ['delivered', 'webhook'],
      ['read', 'webhook'],
    ]);
    for (const h of d.statusHistory) expect(h.receivedAt).toMatch(ISO_MS);
    expect(d.statusHistory[2]!.timestamp).toBe(d.deliveredAt);
    expect(d.statusHistory[3]!.timestamp).toBe(d.readAt);

    const listed = await stack.http.get('/messages').query({ status: 'read' }).set(t.key.headers);
    expect(listed.body.data.items.map((m: { id: number }) => m.id)).toContain(sent.id);
  });

  it('records an asynchronous failure (131047) with its code, title and detail', async () => {
    const sent = await sendOk('15550000002');
    const d = await until(sent.id, (x) => x.status === 'failed');
    expect(d.status).toBe('failed');
    expect(d.error).toEqual({
      code: 131047,
      title: 'Re-engagement message',
      detail: expect.stringContaining('more than 24 hours have passed'),
      category: 'window',
    });
    expect(d.failedAt).toMatch(ISO_MS);
    expect(d.deliveredAt).toBeNull();
    expect(d.statusHistory.map((h) => h.status)).toEqual(['accepted', 'sent', 'failed']);
    const failed = await stack.http.get('/messages').query({ status: 'failed', to: '15550000002' }).set(t.key.headers);
    expect(failed.body.data.items.map((m: { id: number }) => m.id)).toEqual([sent.id]);
  });

  it('counts a read without a delivered status as delivered too', async () => {
    const sent = await sendOk('15550000004');
    const d = await until(sent.id, (x) => x.status === 'read');
    expect(d.readAt).toMatch(ISO_MS);
    expect(d.deliveredAt).toBe(d.readAt);
    expect(d.statusHistory.map((h) => h.status)).toEqual(['accepted', 'sent', 'read']);
  });

  it('ends at read whatever the arrival order, and ignores duplicate webhooks', async () => {
    // The tests of this file run one after the other: the deliveries received from here on are this send's.
    const since = (await deliveriesOf(stack, t.account.wabaId)).reduce((max, d) => Math.max(max, d.id), 0);
    const sent = await sendOk('15550000005');
    // The simulator posts five webhooks (two byte-identical repeats): wait until all five are processed. (Their bytes
    // go once processed: the items are in `events`.)
    const processed = await eventually(
      async () => {
        const deliveries = await deliveriesOf(stack, t.account.wabaId);
        const mine = deliveries.filter((d) => d.id > since);
        return mine.length === 5 && mine.every((d) => d.status === 'processed');
      },
      { timeoutMs: 15000 },
    );
    expect(processed).toBe(true);
    const settled = await detail(sent.id);
    expect(settled.status).toBe('read');
    expect(settled.statusHistory.map((h) => h.status)).toEqual(['accepted', 'sent', 'delivered', 'read']);
    // read arrived first, yet deliveredAt is the delivery time the upstream reported (1 s before read).
    expect(Date.parse(settled.readAt!) - Date.parse(settled.deliveredAt!)).toBe(1000);
  });

  it('opens the 24 h window for text messages when the customer writes in', async () => {
    const to = recipient();
    const text = {
      phoneNumberId: t.account.phoneNumberId,
      to,
      type: 'text',
      text: { body: 'Thanks, your slot is changed.' },
    };
    const closed = await stack.http.post('/messages').set(t.key.headers).send(text);
    expect(closed.status).toBe(422);
    expect(closed.body.errors).toEqual([{ field: 'to', message: expect.any(String) }]);

    const inbound = await fetch(`${stack.sim.url}/_sim/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        from: to,
        text: 'Can I change the delivery slot?',
      }),
    });
    expect(inbound.status).toBe(200);

    const open = await eventually(
      async () => {
        const res = await stack.http.post('/messages').set(t.key.headers).send(text);
        return res.status === 200 ? res : null;
      },
      { timeoutMs: 15000, intervalMs: 150 },
    );
    expect(open?.status).toBe(200);
    expect(open!.body.data).toMatchObject({ to, type: 'text', status: 'sent' });
    expect(stack.sim.sends({ to }).map((s) => (s.body as { type: string }).type)).toEqual(['text']);
  });

  it('picks up a send that timed out but was accepted upstream later', async () => {
    const res = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, HANG));
    expect(res.status).toBe(502);
    expect(res.body.data).toMatchObject({ status: 'failed', upstreamMessageId: null });
    // The simulator answers after 2.5 s and then posts statuses carrying the send's callback data.
    const d = await until(res.body.data.id, (x) => x.status === 'read');
    expect(d.status).toBe('read');
    expect(d.upstreamMessageId).toMatch(/^wamid\./);
    expect(d.readAt).toMatch(ISO_MS);
    // The failure was only an unknown outcome: once the upstream reports progress it is no longer shown.
    expect(d.error).toBeNull();
    expect(d.failedAt).toBeNull();
  });
});

/**
 * A send whose call to Meta times out although Meta accepted it, with Meta's status arriving before our
 * timeout fires: the status (found by the send's callback data) wins, the message never goes back to
 * `failed`, and the send answers 200 with it.
 */
describe('A status that arrives while the send call is still failing', () => {
  let stack: Stack;
  let t: Tenant;
  const HANG = '15550000010';

  beforeAll(async () => {
    // The simulator holds the send for a minute; our client gives up after 4 s.
    stack = await startStack({ worker: true, sim: { hangMs: 60_000 }, env: { UPSTREAM_TIMEOUT_MS: '4000' } });
    t = await onboard(stack, 'Late Answer Org');
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('keeps the delivered status and answers 200 when the call then times out', async () => {
    const started = Date.now();
    // supertest sends on then(): started now, awaited at the end.
    const sending = stack.http
      .post('/messages')
      .set(t.key.headers)
      .send(helloWorld(t, HANG))
      .then((r) => r);
    const pending = await eventually(
      async () =>
        (await stack.db
          .on()
          .selectFrom('messages')
          .select('id')
          .where('to', '=', HANG)
          .where('status', '=', 'pending')
          .where('business_account_id', '=', t.account.businessAccountId)
          .executeTakeFirst()) ?? null,
      { timeoutMs: 3000, intervalMs: 20 },
    );
    expect(pending).not.toBeNull();
    const wamid = `wamid.LATE${randomInt(1_000_000, 9_999_999)}`;
    await postSimStatuses(stack, t, [
      { id: wamid, status: 'delivered', recipient_id: HANG, biz_opaque_callback_data: `bm:${pending!.id}` },
    ]);
    const delivered = await eventually(
      async () => {
        const row = await messageRow(stack, pending!.id);
        return row?.status === 'delivered' ? row : null;
      },
      { timeoutMs: 3000, intervalMs: 20 },
    );
    // The worker applied it before our 4 s timeout.
    expect(delivered).toMatchObject({ status: 'delivered', upstreamMessageId: wamid });
    expect(Date.now() - started).toBeLessThan(4000);

    const res = await sending;
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: Number(pending!.id),
      status: 'delivered',
      upstreamMessageId: wamid,
      error: null,
    });
    const after = await stack.http.get(`/messages/${pending!.id}`).set(t.key.headers);
    expect(after.body.data).toMatchObject({ status: 'delivered', failedAt: null, error: null });
  });
});
