import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import { InboundMediaLinks } from '../../src/messages/inbound-media/inbound-media-links.js';
import { startStack, type Stack } from '../utils/stack.js';
import { eventually, helloWorld, onboard, recipient, simInbound, type Tenant } from '../utils/factories.js';
import { insertMessages } from '../utils/messaging-rows.js';
import { accountRow } from '../utils/db-rows.js';

jest.setTimeout(180_000);

/** A real 1×1 PNG with random trailing bytes, so each run's file is its own. */
const png = () =>
  Buffer.concat([
    Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    ),
    randomBytes(64),
  ]);
const binary = (res: Response, done: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

interface Item {
  id: number;
  direction: 'inbound' | 'outbound';
  status: string;
  type: string;
  from: string | null;
  userId: string | null;
  to: string | null;
  upstreamMessageId: string | null;
  content: Record<string, unknown>;
  media: {
    mimeType: string | null;
    sha256: string | null;
    caption: string | null;
    url: string;
    expiresAt: string;
  } | null;
}
interface Feed {
  items: Item[];
  nextCursor: string;
  limit: number;
}

/**
 * A customer backend holding only a key pair: it hears customers (text, image, a username user known only by
 * its BSUID) through GET /messages (the feed, long-polled), follows a send through its lifecycle, and fetches
 * inbound media by the signed link, without key headers. Real API + worker + simulator.
 */
describe('Conversations with the key pair alone: inbound messages, the messages feed, media links', () => {
  let stack: Stack;
  let t: Tenant;
  let other: Tenant;

  const feed = async (query: Record<string, string | number>, tenant = t) => {
    const res = await stack.http.get('/messages').query(query).set(tenant.key.headers);
    expect(res.status).toBe(200);
    return res.body.data as Feed;
  };
  /** The cursor at the end of the account's feed as it stands (every page read). */
  const endOf = async (tenant = t) => {
    let cursor = '0';
    for (;;) {
      const page = await feed({ after: cursor, limit: 100 }, tenant);
      if (page.items.length === 0) return cursor;
      cursor = page.nextCursor;
    }
  };
  const fetchLink = (url: string) => {
    const path = url.startsWith('http') ? new URL(url).pathname : url;
    return stack.http.get(path).buffer(true).parse(binary);
  };

  beforeAll(async () => {
    stack = await startStack({ worker: true, env: { MESSAGES_FEED_WAITERS_PER_ACCOUNT: '2' } });
    [t, other] = await Promise.all([onboard(stack, 'Inbox Org'), onboard(stack, 'Other Inbox Org')]);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('hears an inbound text through a long poll, an image with a link to its bytes, and a username user by its user id', async () => {
    const cursor = await endOf();
    const customer = recipient();

    // A long poll waiting before the customer writes is woken by the message (before its 30 s are up).
    const started = Date.now();
    const waiting = feed({ after: cursor, wait: 30 });
    await new Promise((r) => setTimeout(r, 200));
    const text = await simInbound(stack, t, { from: customer, text: 'Where is my parcel?' });
    const woken = await waiting;
    expect(Date.now() - started).toBeLessThan(29_000);
    expect(woken.items).toEqual([
      expect.objectContaining({
        direction: 'inbound',
        status: 'received',
        type: 'text',
        from: customer,
        to: null,
        upstreamMessageId: text.wamid,
        phoneNumberId: t.account.phoneNumberId,
        content: { text: { body: 'Where is my parcel?' } },
        media: null,
      }),
    ]);

    // An image, replying to the text: caption, mime type, sha256 and a link that serves the bytes without keys.
    const file = png();
    const image = await simInbound(stack, t, {
      from: customer,
      type: 'image',
      image: { caption: 'The box is damaged' },
      media: { base64: file.toString('base64'), mimeType: 'image/png' },
      context: { from: customer, id: text.wamid },
    });
    // Followed as a poller does: page after page (another change may come first) until the image is there.
    let after = woken.nextCursor;
    const imageItem = (await eventually(async () => {
      const page = await feed({ after, wait: 5 });
      after = page.nextCursor;
      return page.items.find((i) => i.upstreamMessageId === image.wamid);
    }))!;
    expect(imageItem).toMatchObject({
      direction: 'inbound',
      type: 'image',
      from: customer,
      content: { image: { id: image.mediaId, caption: 'The box is damaged' }, context: { message_id: text.wamid } },
    });

    const detail = await stack.http.get(`/messages/${imageItem.id}`).set(t.key.headers);
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({
      direction: 'inbound',
      statusHistory: [],
      media: {
        mimeType: 'image/png',
        caption: 'The box is damaged',
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        url: expect.stringContaining('/media/inbound/'),
        expiresAt: expect.any(String),
      },
    });
    const url = detail.body.data.media.url as string;
    expect(url).not.toMatch(/_media|sim-token|fbsbx/);
    const bytes = await fetchLink(url);
    expect(bytes.status).toBe(200);
    expect(bytes.headers['content-type']).toBe('image/png');
    expect((bytes.body as Buffer).equals(file)).toBe(true);
    expect(JSON.stringify(bytes.headers)).not.toMatch(/_media|sim-token|Bearer/);

    // A user with a username: Meta gives only the business-scoped user id.
    const username = await simInbound(stack, t, { userId: 'US.13491208655302741918', text: 'Hi, it is me' });
    const listed = await eventually(async () => {
      const res = await stack.http.get('/messages').query({ direction: 'inbound' }).set(t.key.headers);
      return (res.body.data.items as Item[]).find((i) => i.upstreamMessageId === username.wamid);
    });
    expect(listed).toMatchObject({
      from: null,
      userId: 'US.13491208655302741918',
      content: { text: { body: 'Hi, it is me' } },
    });
    const outbound = await stack.http.get('/messages').query({ direction: 'outbound' }).set(t.key.headers);
    expect((outbound.body.data.items as Item[]).every((i) => i.direction === 'outbound')).toBe(true);

    // The other account's key sees none of it.
    expect((await stack.http.get(`/messages/${imageItem.id}`).set(other.key.headers)).status).toBe(404);
    expect((await feed({ after: '0' }, other)).items.filter((i) => i.direction === 'inbound')).toEqual([]);
  });

  it('follows a send through its whole lifecycle in the feed, each change once, and reads a message consistent with its history', async () => {
    let cursor = await endOf();
    const sent = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, recipient()));
    expect(sent.status).toBe(200);
    const id = sent.body.data.id as number;
    const seen: Array<{ status: string; pricing: unknown; error: unknown }> = [];
    // A ceiling for a slow host; on a quiet one `read` comes within a second or two.
    const deadline = Date.now() + 120_000;
    while (!seen.some((s) => s.status === 'read') && Date.now() < deadline) {
      const page = await feed({ after: cursor, wait: 5 });
      for (const item of page.items as Array<Item & { pricing: unknown; error: unknown }>)
        if (item.id === id) seen.push({ status: item.status, pricing: item.pricing, error: item.error });
      cursor = page.nextCursor;
    }
    // Forward only, and each time it comes again something a poller follows changed (its status, or the pricing
    // object of the `sent` status): never the same state twice. A state overwritten before a read is skipped.
    expect(seen.at(-1)?.status).toBe('read');
    const ranks = seen.map((s) => ['pending', 'sent', 'delivered', 'read'].indexOf(s.status));
    for (let i = 1; i < seen.length; i++) {
      expect(ranks[i]).toBeGreaterThanOrEqual(ranks[i - 1]!);
      expect(seen[i]).not.toEqual(seen[i - 1]);
    }

    const detail = await stack.http.get(`/messages/${id}`).set(t.key.headers);
    expect(detail.body.data.status).toBe('read');
    // Read in one snapshot: the history holds the status the message shows (the simulator's `delivered` webhook
    // may land after `read`, which implies it).
    expect((detail.body.data.statusHistory as Array<{ status: string }>).map((h) => h.status)).toEqual(
      expect.arrayContaining(['accepted', 'read']),
    );
    // Nothing further for it once read: the feed is quiet.
    expect((await feed({ after: cursor })).items.filter((i) => i.id === id)).toEqual([]);
  });

  it('refuses a tampered or forged link (404), an expired one (410), and names media the upstream no longer has', async () => {
    const file = png();
    const image = await simInbound(stack, t, {
      from: recipient(),
      type: 'image',
      media: { base64: file.toString('base64'), mimeType: 'image/png' },
    });
    const item = await eventually(async () => {
      const res = await stack.http.get('/messages').query({ direction: 'inbound', type: 'image' }).set(t.key.headers);
      return (res.body.data.items as Item[]).find((i) => i.upstreamMessageId === image.wamid);
    });
    const url = item!.media!.url;
    const [body, mac] = url.split('/').at(-1)!.split('.') as [string, string];
    const payload = Buffer.from(body, 'base64url').toString();
    const [otherImage] = await insertMessages(stack, [
      {
        business_account_id: (await accountRow(stack.db, { wabaId: other.account.wabaId })).id,
        phone_number_id: other.account.phoneNumberId,
        direction: 'inbound',
        type: 'image',
        status: 'received',
        content: JSON.stringify({ image: { id: image.mediaId } }),
      },
    ]);
    const retarget = payload.replace(`:${item!.id}:`, `:${otherImage!.id}:`);
    for (const bad of [
      `${Buffer.from(retarget).toString('base64url')}.${mac}`,
      `${body}.${'A'.repeat(22)}`,
      'nonsense',
    ]) {
      const res = await stack.http.get(`/media/inbound/${bad}`);
      expect({ bad, status: res.status, type: res.headers['content-type'] }).toEqual({
        bad,
        status: 404,
        type: expect.stringContaining('application/json'),
      });
      expect(res.body.message).toBe('Media link not found');
    }

    const links = stack.app.get(InboundMediaLinks);
    const businessAccountId = (await accountRow(stack.db, { wabaId: t.account.wabaId })).id;
    const expired = links.sign({ businessAccountId, messageId: item!.id }, Date.now() - 3_600_000);
    const gone = await fetchLink(expired.url);
    expect(gone.status).toBe(410);
    expect(JSON.parse((gone.body as Buffer).toString())).toMatchObject({
      statusCode: 410,
      message: expect.stringMatching(/expired/),
    });

    // Meta no longer has the media (an id it does not know): 404 naming the media, no bytes.
    const [stale] = await insertMessages(stack, [
      {
        business_account_id: businessAccountId,
        phone_number_id: t.account.phoneNumberId,
        direction: 'inbound',
        type: 'image',
        status: 'received',
        content: JSON.stringify({ image: { id: '999999999999999', mime_type: 'image/png' } }),
      },
    ]);
    const missing = await fetchLink(links.sign({ businessAccountId, messageId: stale!.id }).url);
    expect(missing.status).toBe(404);
    expect(JSON.parse((missing.body as Buffer).toString()).message).toMatch(
      /Media 999999999999999 of message \d+ is no longer available/,
    );
  });

  it('refuses a bad direction, cursor or wait with 422 naming the field, and another account’s cursor', async () => {
    const otherCursor = (await feed({ after: '0' }, other)).nextCursor;
    const mine = await stack.http.post('/messages').set(other.key.headers).send(helloWorld(other, recipient()));
    expect(mine.status).toBe(200);
    const foreign = (await eventually(async () => {
      const page = await feed({ after: otherCursor }, other);
      return page.items.length > 0 ? page : undefined;
    }))!.nextCursor;
    const cases: Array<[Record<string, string | number>, string]> = [
      [{ direction: 'sideways' }, 'direction'],
      [{ after: 'not-a-cursor' }, 'after'],
      [{ after: foreign }, 'after'],
      [{ after: '0', wait: 31 }, 'wait'],
      [{ after: '0', wait: -1 }, 'wait'],
      [{ wait: 5 }, 'wait'],
      [{ after: '0', page: 2 }, 'after'],
    ];
    for (const [query, field] of cases) {
      const res = await stack.http.get('/messages').query(query).set(t.key.headers);
      expect({ query, status: res.status, errors: res.body.errors }).toEqual({
        query,
        status: 422,
        errors: [{ field, message: expect.any(String) }],
      });
    }
    // `after=` (empty) starts at the beginning like `after=0`.
    expect((await feed({ after: '' })).items.length).toBeGreaterThan(0);
  });

  it('gives each account a share of the waiting long polls: past it 429 with Retry-After, other accounts unaffected', async () => {
    const cursor = await endOf();
    const polls = [feed({ after: cursor, wait: 3 }), feed({ after: cursor, wait: 3 })];
    await new Promise((r) => setTimeout(r, 300));
    const third = await stack.http.get('/messages').query({ after: cursor, wait: 3 }).set(t.key.headers);
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('1');
    const elsewhere = await stack.http
      .get('/messages')
      .query({ after: await endOf(other), wait: 1 })
      .set(other.key.headers);
    expect(elsewhere.status).toBe(200);
    await Promise.all(polls);
    expect((await stack.http.get('/messages').query({ after: cursor, wait: 0 }).set(t.key.headers)).status).toBe(200);
  });
});
