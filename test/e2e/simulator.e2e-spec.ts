import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type SimulatorHandle, startSimulator } from '../../simulator/simulator.js';
import { poll } from '../utils/poll.js';

const APP_SECRET = 'sim-app-secret-123';

/** Bodies are asserted structurally with toEqual; typing them fully would restate the simulator. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Meta's JSON, read by assertions as supertest's bodies are.
type Json = any;

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  json: Json;
}

/**
 * A tiny webhook receiver that records every POST. `refuse(wabaId, [500, …])` scripts its next answers to
 * webhooks for that business account (200 otherwise), so concurrent deliveries cannot take each other's.
 */
async function startReceiver() {
  const received: Received[] = [];
  const scripted = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const json: Json = JSON.parse(raw.toString('utf8'));
      received.push({ headers: req.headers, raw, json });
      res.writeHead(scripted.get(json.entry?.[0]?.id)?.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/whatsapp`;
  return {
    url,
    received,
    refuse: (wabaId: string, statuses: number[]) => scripted.set(wabaId, statuses),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const waitFor = <T>(probe: () => T | undefined, what: string, timeoutMs = 3000): Promise<T> =>
  poll(probe, { done: (v) => v !== undefined, timeoutMs, intervalMs: 10, what }) as Promise<T>;

describe('WhatsApp Cloud API simulator', () => {
  let sim: SimulatorHandle;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    sim = await startSimulator({
      appSecret: APP_SECRET,
      webhookUrl: receiver.url,
      statusDelaysMs: { sent: 10, delivered: 40, read: 70 },
      webhookRetry: { maxAttempts: 3, baseDelayMs: 20 },
      hangMs: 60_000,
    });
  });

  afterAll(async () => {
    await sim.close();
    await receiver.close();
  });

  const graph = (path: string, token?: string, init: RequestInit = {}) =>
    fetch(`${sim.baseUrl}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sim.url}/_sim/${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const send = async (token: string, phoneId: string, body: Record<string, unknown>) => {
    const res = await graph(`/${phoneId}/messages`, token, {
      method: 'POST',
      body: JSON.stringify({ messaging_product: 'whatsapp', recipient_type: 'individual', ...body }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const hello = (to: string, extra: Record<string, unknown> = {}) => ({
    to,
    type: 'template',
    template: { name: 'hello_world', language: { code: 'en_US' } },
    ...extra,
  });
  const templateTo = (to: string, name: string, code: string) => hello(to, { template: { name, language: { code } } });
  const statusesFor = (wamid: string) =>
    receiver.received
      .flatMap((r) => r.json.entry.flatMap((e: Json) => e.changes))
      .flatMap((c: Json) => c.value.statuses ?? [])
      .filter((s: { id: string }) => s.id === wamid);

  describe('Meta 2026, second round: recipient sends, marketing stops, the Marketing Messages API, block_users', () => {
    const changesOf = (wabaId: string, field: string) =>
      receiver.received
        .filter((r) => r.json.entry[0].id === wabaId)
        .flatMap((r) => r.json.entry[0].changes)
        .filter((c: Json) => c.field === field);
    const post = async (path: string, token: string, body: unknown, method = 'POST') => {
      const res = await graph(path, token, { method, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const bsuid = 'US.13491208655302741918';

    it('sends to a business-scoped user id given as recipient (no to): its statuses name the user by recipient_user_id only', async () => {
      const account = sim.createAccount();
      const res = await send(account.accessToken, account.phoneNumbers[0]!.id, {
        recipient: bsuid,
        type: 'template',
        template: { name: 'hello_world', language: { code: 'en_US' } },
      });
      expect(res.status).toBe(200);
      expect(res.body.contacts).toEqual([{ input: bsuid, user_id: bsuid }]);
      const statuses = await waitFor(
        () => (statusesFor(res.body.messages[0].id).length === 3 ? statusesFor(res.body.messages[0].id) : undefined),
        'three statuses',
      );
      for (const status of statuses) {
        expect(status).toMatchObject({ recipient_user_id: bsuid });
        expect(status).not.toHaveProperty('recipient_id');
      }
    });

    it('accepts a BSUID put into to and never delivers it (a silent drop), and refuses a malformed recipient or recipient_type', async () => {
      const account = sim.createAccount();
      const phone = account.phoneNumbers[0]!.id;
      const dropped = await send(account.accessToken, phone, hello(bsuid));
      expect(dropped.status).toBe(200);
      expect(dropped.body.messages[0].id).toMatch(/^wamid\./);
      await new Promise((r) => setTimeout(r, 150)); // past every status delay
      expect(statusesFor(dropped.body.messages[0].id)).toEqual([]);
      expect(
        (await send(account.accessToken, phone, { recipient: 'not-a-bsuid', type: 'text', text: { body: 'x' } })).body
          .error.code,
      ).toBe(100);
      expect(
        (
          await send(account.accessToken, phone, {
            recipient: bsuid,
            recipient_type: 'group',
            type: 'text',
            text: { body: 'x' },
          })
        ).body.error.code,
      ).toBe(100);
    });

    it('refuses a copy-code authentication template to a BSUID, and sends it to the phone number', async () => {
      const account = sim.createAccount();
      const login = (extra: Record<string, unknown>) => ({
        type: 'template',
        template: {
          name: 'login_code',
          language: { code: 'en_US' },
          components: [
            { type: 'body', parameters: [{ type: 'text', text: '123456' }] },
            { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '123456' }] },
          ],
        },
        ...extra,
      });
      const refused = await send(account.accessToken, account.phoneNumbers[0]!.id, login({ recipient: bsuid }));
      expect([refused.status, refused.body.error.error_data.details]).toEqual([
        400,
        expect.stringMatching(/COPY_CODE buttons cannot be sent to a business-scoped user id/),
      ]);
      expect((await send(account.accessToken, account.phoneNumbers[0]!.id, login({ to: '447700900123' }))).status).toBe(
        200,
      );
    });

    it('takes marketing templates on /marketing_messages once onboarded (the MM_LITE_TERMS_SIGNED webhook), and nothing else there', async () => {
      const account = sim.createAccount();
      const phone = account.phoneNumbers[0]!.id;
      const deals = {
        messaging_product: 'whatsapp',
        to: '447700900123',
        type: 'template',
        template: { name: 'weekly_deals', language: { code: 'en_US' } },
      };
      expect((await post(`/${phone}/marketing_messages`, account.accessToken, deals)).body.error.code).toBe(131055);
      expect(
        await graph(`/${account.wabaId}?fields=id,marketing_messages_onboarding_status`, account.accessToken).then(
          (r) => r.json(),
        ),
      ).toEqual({ id: account.wabaId });

      expect(
        (await control('POST', 'marketing-messages', { wabaId: account.wabaId, status: 'ONBOARDED' })).status,
      ).toBe(200);
      const [signed] = await waitFor(
        () =>
          changesOf(account.wabaId, 'account_update').length > 0
            ? changesOf(account.wabaId, 'account_update')
            : undefined,
        'MM_LITE_TERMS_SIGNED',
      );
      expect(signed.value).toEqual({
        event: 'MM_LITE_TERMS_SIGNED',
        waba_info: { waba_id: account.wabaId, owner_business_id: expect.any(String) },
      });
      expect(
        await graph(`/${account.wabaId}?fields=id,marketing_messages_onboarding_status`, account.accessToken).then(
          (r) => r.json(),
        ),
      ).toEqual({ id: account.wabaId, marketing_messages_onboarding_status: 'ONBOARDED' });

      const sent = await post(`/${phone}/marketing_messages`, account.accessToken, deals);
      expect(sent.status).toBe(200);
      expect(sent.body.messages[0]).toMatchObject({ id: expect.any(String), message_status: 'accepted' });
      const mine = sim.sends({ to: '447700900123' }).filter((x) => x.phoneNumberId === phone);
      expect(mine.map((x) => [x.edge, x.response.status])).toEqual([
        ['marketing_messages', 400],
        ['marketing_messages', 200],
      ]);
      const utility = await post(`/${phone}/marketing_messages`, account.accessToken, {
        ...deals,
        template: { name: 'hello_world', language: { code: 'en_US' } },
      });
      expect([utility.status, utility.body.error.code]).toEqual([400, 131009]);
    });

    it("posts user_preferences on request, and fails a stopped user's marketing templates with 131050 (utility still delivered)", async () => {
      const account = sim.createAccount();
      const phone = account.phoneNumbers[0]!;
      const to = '447700900321';
      expect(
        (
          await control('POST', 'user-preferences', {
            wabaId: account.wabaId,
            phoneNumberId: phone.id,
            waId: to,
            userId: bsuid,
            value: 'stop',
          })
        ).status,
      ).toBe(200);
      const [change] = await waitFor(
        () =>
          changesOf(account.wabaId, 'user_preferences').length > 0
            ? changesOf(account.wabaId, 'user_preferences')
            : undefined,
        'user_preferences',
      );
      expect(change.value).toMatchObject({
        messaging_product: 'whatsapp',
        metadata: { phone_number_id: phone.id },
        user_preferences: [
          {
            wa_id: to,
            user_id: bsuid,
            category: 'marketing_messages',
            value: 'stop',
            detail: 'User requested to stop marketing messages',
            timestamp: expect.any(Number),
          },
        ],
      });
      const marketing = await send(account.accessToken, phone.id, templateTo(to, 'weekly_deals', 'en_US'));
      expect(marketing.status).toBe(200);
      const [failed] = await waitFor(
        () =>
          statusesFor(marketing.body.messages[0].id).length > 0
            ? statusesFor(marketing.body.messages[0].id)
            : undefined,
        'the failed status',
      );
      expect(failed).toMatchObject({ status: 'failed', errors: [{ code: 131050 }] });
      const utility = await send(account.accessToken, phone.id, hello(to));
      await waitFor(
        () => (statusesFor(utility.body.messages[0].id).some((x: Json) => x.status === 'read') ? true : undefined),
        'the utility template read',
      );
    });

    it('blocks only users who wrote in the last 24 h (139100 otherwise), lists them paged, and unblocks them', async () => {
      const account = sim.createAccount();
      const phone = account.phoneNumbers[0]!.id;
      const [writer, stranger] = ['447700900555', '447700900556'];
      const refused = await post(`/${phone}/block_users`, account.accessToken, {
        messaging_product: 'whatsapp',
        block_users: [{ user: stranger }],
      });
      expect(refused.body).toEqual({
        messaging_product: 'whatsapp',
        block_users: {
          added_users: [],
          failed_users: [{ input: stranger, errors: [expect.objectContaining({ code: 139100 })] }],
        },
      });
      await control('POST', 'inbound', { wabaId: account.wabaId, phoneNumberId: phone, from: writer, text: 'hi' });
      const added = await post(`/${phone}/block_users`, account.accessToken, {
        messaging_product: 'whatsapp',
        block_users: [{ user: `+${writer}` }],
      });
      expect(added.body).toEqual({
        messaging_product: 'whatsapp',
        block_users: { added_users: [{ input: `+${writer}`, wa_id: writer }] },
      });
      const listed = await graph(`/${phone}/block_users?limit=10`, account.accessToken).then((r) => r.json());
      expect(listed).toEqual({
        data: [{ messaging_product: 'whatsapp', wa_id: writer }],
        paging: { cursors: { before: expect.any(String), after: expect.any(String) } },
      });
      const removed = await post(
        `/${phone}/block_users`,
        account.accessToken,
        { messaging_product: 'whatsapp', block_users: [{ user: writer }] },
        'DELETE',
      );
      expect(removed.body).toEqual({
        messaging_product: 'whatsapp',
        block_users: { removed_users: [{ input: writer, wa_id: writer }] },
      });
      expect(
        (await post(`/${phone}/block_users`, account.accessToken, { messaging_product: 'whatsapp', block_users: [] }))
          .body.error.code,
      ).toBe(100);
    });
  });

  describe('message types', () => {
    const errorOf = (body: Json) => ({ code: body.error.code, details: body.error.error_data?.details as string });

    it('accepts every type in Meta’s shape (no message_status outside templates)', async () => {
      const account = sim.createAccount();
      const phone = account.phoneNumbers[0]!.id;
      const bodies: Record<string, unknown>[] = [
        { type: 'image', image: { link: 'https://cdn.example.com/p.jpg', caption: 'x' } },
        { type: 'document', document: { link: 'https://cdn.example.com/a.pdf', filename: 'a.pdf' } },
        { type: 'location', location: { latitude: 1, longitude: 2 } },
        { type: 'contacts', contacts: [{ name: { formatted_name: 'P' } }] },
        {
          type: 'interactive',
          interactive: {
            type: 'list',
            body: { text: 'b' },
            action: { button: 'B', sections: [{ rows: [{ id: 'a', title: 'A' }] }] },
          },
        },
        { type: 'reaction', reaction: { message_id: 'wamid.X', emoji: '👍🏽' }, context: { message_id: 'wamid.Y' } },
      ];
      for (const body of bodies) {
        const res = await send(account.accessToken, phone, { to: '447700900123', ...body });
        expect([body.type, res.status]).toEqual([body.type, 200]);
        expect(res.body.messages[0].message_status).toBeUndefined();
      }
    });

    it.each([
      ['both link and id', { type: 'image', image: { link: 'https://x.example/p.jpg', id: '1' } }, 100],
      ['an http link', { type: 'image', image: { link: 'http://x.example/p.jpg' } }, 131009],
      ['an unknown media id', { type: 'video', video: { id: '123' } }, 131009],
      ['a caption on audio', { type: 'audio', audio: { link: 'https://x.example/a.ogg', caption: 'x' } }, 100],
      ['latitude 91', { type: 'location', location: { latitude: 91, longitude: 0 } }, 131009],
      [
        'four buttons',
        {
          type: 'interactive',
          interactive: {
            type: 'button',
            body: { text: 'b' },
            action: { buttons: [1, 2, 3, 4].map((i) => ({ type: 'reply', reply: { id: `${i}`, title: 'T' } })) },
          },
        },
        131009,
      ],
      [
        'eleven rows',
        {
          type: 'interactive',
          interactive: {
            type: 'list',
            body: { text: 'b' },
            action: {
              button: 'B',
              sections: [{ rows: Array.from({ length: 11 }, (_, i) => ({ id: `${i}`, title: 'T' })) }],
            },
          },
        },
        131009,
      ],
      ['a word for an emoji', { type: 'reaction', reaction: { message_id: 'wamid.X', emoji: 'ok' } }, 131009],
      ['an unknown type', { type: 'poll', poll: {} }, 100],
    ])('refuses %s with Meta’s error code and details', async (_label, body, code) => {
      const account = sim.createAccount();
      const res = await send(account.accessToken, account.phoneNumbers[0]!.id, { to: '447700900123', ...body });
      expect(res.status).toBe(400);
      expect(errorOf(res.body)).toEqual({ code, details: expect.any(String) });
    });

    it('stores uploaded media: GET /{media-id} and a URL downloadable with the Bearer token only', async () => {
      const account = sim.createAccount();
      const other = sim.createAccount();
      const form = new FormData();
      form.append('messaging_product', 'whatsapp');
      form.append('type', 'image/png');
      form.append('file', new Blob([Buffer.from('png-bytes')], { type: 'image/png' }), 'p.png');
      const uploaded = await fetch(`${sim.baseUrl}/${account.phoneNumbers[0]!.id}/media`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.accessToken}` },
        body: form,
      });
      expect(uploaded.status).toBe(200);
      const { id } = (await uploaded.json()) as { id: string };

      const info = (await (await graph(`/${id}`, account.accessToken)).json()) as Json;
      expect(info).toEqual({
        url: expect.stringMatching(/^http/),
        mime_type: 'image/png',
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        file_size: 9,
        id,
        messaging_product: 'whatsapp',
      });
      expect((await graph(`/${id}`, other.accessToken)).status).toBe(400);
      expect((await fetch(info.url)).status).toBe(404);
      expect((await fetch(info.url, { headers: { authorization: `Bearer ${other.accessToken}` } })).status).toBe(404);
      const bytes = await fetch(info.url, { headers: { authorization: `Bearer ${account.accessToken}` } });
      expect(Buffer.from(await bytes.arrayBuffer()).toString()).toBe('png-bytes');

      const sent = await send(account.accessToken, account.phoneNumbers[0]!.id, {
        to: '447700900123',
        type: 'image',
        image: { id },
      });
      expect(sent.status).toBe(200);
    });
  });

  describe('webhook signing', () => {
    it('signs the exact body bytes, which Meta-style escaping makes differ from a re-serialisation', async () => {
      const account = sim.createAccount();
      const phone = account.phoneNumbers[0]!;
      const { status, body } = await control('POST', 'inbound', {
        wabaId: account.wabaId,
        phoneNumberId: phone.id,
        from: '447700900123',
        text: 'Café at 10/11? 😀',
        name: 'Zoë',
      });
      expect(status).toBe(200);
      expect(body.delivery).toEqual({ status: 200 });
      const hook = receiver.received.find((r) => r.json.entry[0].changes[0].value.messages?.[0]?.id === body.wamid);
      expect(hook).toBeDefined();
      const { headers, raw, json } = hook!;

      expect(headers['content-type']).toBe('application/json');
      const expected = Buffer.from(`sha256=${createHmac('sha256', APP_SECRET).update(raw).digest('hex')}`);
      const given = Buffer.from(String(headers['x-hub-signature-256']));
      expect(given.length === expected.length && timingSafeEqual(given, expected)).toBe(true);

      const text = raw.toString('utf8');
      expect(text).toContain('Caf\\u00e9 at 10\\/11? \\ud83d\\ude00');
      const reserialised = Buffer.from(JSON.stringify(json));
      expect(createHmac('sha256', APP_SECRET).update(reserialised).digest('hex')).not.toBe(
        createHmac('sha256', APP_SECRET).update(raw).digest('hex'),
      );

      expect(json).toEqual({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: account.wabaId,
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: {
                    display_phone_number: phone.display_phone_number.replace(/\D/g, ''),
                    phone_number_id: phone.id,
                  },
                  contacts: [{ profile: { name: 'Zoë' }, wa_id: '447700900123' }],
                  messages: [
                    {
                      from: '447700900123',
                      id: body.wamid,
                      timestamp: expect.stringMatching(/^\d{10}$/),
                      type: 'text',
                      text: { body: 'Café at 10/11? 😀' },
                    },
                  ],
                },
              },
            ],
          },
        ],
      });
    });

    it('retries a refused webhook with the identical signed bytes, up to maxAttempts', async () => {
      const account = sim.createAccount();
      receiver.refuse(account.wabaId, [500, 503, 500, 500]);
      const { body } = await control('POST', 'account-update', {
        wabaId: account.wabaId,
        event: 'ACCOUNT_RESTRICTION',
        restriction_info: [{ restriction_type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration: 1767200000 }],
      });
      expect(body.delivery).toEqual({ status: 500 });
      const mine = () => receiver.received.filter((r) => r.json.entry[0].id === account.wabaId);
      const attempts = await waitFor(() => (mine().length === 3 ? mine() : undefined), 'three attempts');
      await new Promise((r) => setTimeout(r, 200)); // a 4th attempt would come 80 ms after the 3rd
      expect(mine()).toHaveLength(3);
      expect(new Set(attempts.map((a) => a.raw.toString())).size).toBe(1);
      expect(attempts[0]!.json.entry[0]).toEqual({
        id: account.wabaId,
        time: expect.any(Number),
        changes: [
          {
            field: 'account_update',
            value: {
              event: 'ACCOUNT_RESTRICTION',
              restriction_info: [{ restriction_type: 'RESTRICTED_ADD_PHONE_NUMBER_ACTION', expiration: 1767200000 }],
            },
          },
        ],
      });
    });
  });

  describe('several receivers (the stand-in for a load balancer before several API processes)', () => {
    it('posts each delivery to the next receiver in turn, and a retry to the one after', async () => {
      // A simulator of its own: no other test's deliveries take turns in between.
      const [first, second] = [await startReceiver(), await startReceiver()];
      const spread = await startSimulator({
        appSecret: APP_SECRET,
        webhookUrl: `${first.url},${second.url}`,
        webhookRetry: { maxAttempts: 3, baseDelayMs: 20 },
      });
      const post = async () => {
        const res = await fetch(`${spread.url}/_sim/account-update`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ wabaId: account.wabaId, event: 'VERIFIED_ACCOUNT' }),
        });
        return ((await res.json()) as Json).delivery;
      };
      const account = spread.createAccount();
      try {
        for (let i = 0; i < 4; i++) expect(await post()).toEqual({ status: 200 });
        expect([first.received.length, second.received.length]).toEqual([2, 2]);

        // The fifth goes to the first receiver, which refuses it: the retry reaches the second.
        first.refuse(account.wabaId, [503]);
        expect(await post()).toEqual({ status: 503 });
        await waitFor(() => (second.received.length === 3 ? true : undefined), 'the retry on the second receiver');
        expect(first.received).toHaveLength(3);
        expect(second.received.at(-1)!.raw.equals(first.received.at(-1)!.raw)).toBe(true);
      } finally {
        await spread.close();
        await Promise.all([first.close(), second.close()]);
      }
    });
  });

  describe('Graph API reads', () => {
    it('pages templates with cursors and an absolute paging.next until the last page', async () => {
      const first = '/310000000000001/message_templates?fields=id,name,language,status&limit=3';
      let url: string | undefined = `${sim.baseUrl}${first}`;
      const pages: Json[] = [];
      while (url) {
        const res = await fetch(url, { headers: { authorization: 'Bearer sim-token-waba-1' } });
        expect(res.status).toBe(200);
        const page = (await res.json()) as Json;
        pages.push(page);
        url = page.paging.next;
        if (url) expect(url.startsWith(`${sim.baseUrl}/310000000000001/message_templates?`)).toBe(true);
      }
      expect(pages.length).toBeGreaterThanOrEqual(3);
      const templates = pages.flatMap((p) => p.data);
      expect(templates.length).toBe(11);
      expect(new Set(templates.map((t) => t.id)).size).toBe(11);
      expect(templates.every((t) => typeof t.id === 'string' && Object.keys(t).length === 4)).toBe(true);
      expect(pages[0].paging.cursors).toEqual({ before: expect.any(String), after: expect.any(String) });
      expect(templates.filter((t) => t.name === 'parcel_update').map((t) => t.language)).toEqual(['en_GB', 'en_US']);
      expect(new Set(templates.map((t) => t.status))).toEqual(new Set(['APPROVED', 'PENDING', 'REJECTED', 'PAUSED']));
    });

    it('lists phone numbers in the Graph format and reads the business account', async () => {
      const res = await graph('/310000000000001/phone_numbers?limit=2', 'sim-token-waba-1');
      const page = (await res.json()) as Json;
      expect(page.data[0]).toEqual({
        id: '402000000000011',
        display_phone_number: '+44 7700 900011',
        verified_name: 'Parcel Co',
        quality_rating: 'GREEN',
        code_verification_status: 'VERIFIED',
        status: 'CONNECTED',
        name_status: 'APPROVED',
        platform_type: 'CLOUD_API',
        throughput: { level: 'STANDARD' },
      });
      expect(page.data[1].status).toBe('PENDING');
      expect(page.paging.next).toContain('after=');

      const waba = await graph('/310000000000001?fields=id,name', 'sim-token-waba-1');
      expect(await waba.json()).toEqual({ id: '310000000000001', name: 'Parcel Co' });
    });

    it("answers Meta's auth errors: 401 code 190 without a valid token, 400 code 100 for another account", async () => {
      const missing = await graph('/310000000000001?fields=id,name');
      expect(missing.status).toBe(401);
      expect(await missing.json()).toEqual({
        error: {
          message: 'Invalid OAuth access token - Cannot parse access token',
          type: 'OAuthException',
          code: 190,
          fbtrace_id: expect.any(String),
        },
      });
      const foreign = await graph('/310000000000001/message_templates', 'sim-token-waba-2');
      expect(foreign.status).toBe(400);
      expect(await foreign.json()).toEqual({
        error: {
          message: expect.stringMatching(/^Unsupported get request\. Object with ID '310000000000001' does not exist/),
          type: 'GraphMethodException',
          code: 100,
          error_subcode: 33,
          fbtrace_id: expect.any(String),
        },
      });
    });
  });

  describe('webhook subscription and tokens', () => {
    it("subscribes, lists and unsubscribes the app per account in Meta's shapes, only with that account's token", async () => {
      const mine = sim.createAccount();
      const other = sim.createAccount();
      const edge = `/${mine.wabaId}/subscribed_apps`;
      expect(await (await graph(edge, mine.accessToken)).json()).toEqual({ data: [] });

      const post = await graph(edge, mine.accessToken, { method: 'POST' });
      expect([post.status, await post.json()]).toEqual([200, { success: true }]);
      // Idempotent, like Meta's: one entry however often the app subscribes.
      await graph(edge, mine.accessToken, { method: 'POST' });
      const app = {
        id: '1987654321098765',
        link: 'https://www.facebook.com/games/?app_id=1987654321098765',
        name: 'Business Messaging API (simulator)',
      };
      expect(await (await graph(edge, mine.accessToken)).json()).toEqual({
        data: [{ whatsapp_business_api_data: app }],
      });
      expect(sim.subscribedApps(mine.wabaId)).toEqual([app]);
      expect(sim.subscribedApps(other.wabaId)).toEqual([]);
      expect((await control('GET', `subscribed-apps?wabaId=${mine.wabaId}`)).body).toEqual({ data: [app], faults: {} });

      const foreign = await graph(edge, other.accessToken, { method: 'POST' });
      expect(foreign.status).toBe(400);
      expect(((await foreign.json()) as Json).error).toMatchObject({
        code: 100,
        error_subcode: 33,
        type: 'GraphMethodException',
      });
      expect((await graph(edge, undefined, { method: 'POST' })).status).toBe(401);

      const del = await graph(edge, mine.accessToken, { method: 'DELETE' });
      expect([del.status, await del.json()]).toEqual([200, { success: true }]);
      expect(sim.subscribedApps(mine.wabaId)).toEqual([]);
    });

    it("makes subscribed_apps fail with Meta's errors until the fault is cleared", async () => {
      const account = sim.createAccount();
      const edge = `/${account.wabaId}/subscribed_apps`;
      const cases: Array<[string, number, Record<string, unknown>]> = [
        ['permission', 403, { code: 200, message: '(#200) Permissions error', type: 'OAuthException' }],
        ['unavailable', 503, { code: 2, is_transient: true }],
        ['rate_limit', 400, { code: 80007 }],
      ];
      for (const [error, status, body] of cases) {
        expect((await control('POST', 'subscribed-apps/faults', { wabaId: account.wabaId, error })).body).toEqual({
          wabaId: account.wabaId,
          faults: { POST: error },
        });
        const res = await graph(edge, account.accessToken, { method: 'POST' });
        expect([error, res.status]).toEqual([error, status]);
        expect(((await res.json()) as Json).error).toMatchObject({ ...body, fbtrace_id: expect.any(String) });
      }
      await control('POST', 'subscribed-apps/faults', { wabaId: account.wabaId, error: 'not_listed' });
      expect(await (await graph(edge, account.accessToken, { method: 'POST' })).json()).toEqual({ success: true });
      expect(sim.subscribedApps(account.wabaId)).toEqual([]);

      await control('POST', 'subscribed-apps/faults', { wabaId: account.wabaId, error: null });
      sim.setSubscriptionFault(account.wabaId, 'GET', 'unavailable');
      expect((await graph(edge, account.accessToken, { method: 'POST' })).status).toBe(200);
      expect((await graph(edge, account.accessToken)).status).toBe(503);
      sim.setSubscriptionFault(account.wabaId, 'GET', null);
      expect(((await (await graph(edge, account.accessToken)).json()) as Json).data).toHaveLength(1);

      expect((await control('POST', 'subscribed-apps/faults', { wabaId: account.wabaId, error: 'flaky' })).status).toBe(
        400,
      );
      expect(
        (await control('POST', 'subscribed-apps/faults', { wabaId: account.wabaId, method: 'PATCH', error: null }))
          .status,
      ).toBe(400);
      expect((await control('POST', 'subscribed-apps/faults', { wabaId: '1', error: null })).status).toBe(404);
    });

    it("rotates an account's token: the old one is answered 190 (session invalidated) everywhere, sends included", async () => {
      const account = sim.createAccount();
      const rotated = await control('POST', 'token', { wabaId: account.wabaId });
      expect(rotated.body).toEqual({ wabaId: account.wabaId, accessToken: expect.stringMatching(/^sim-token-/) });
      expect(rotated.body.accessToken).not.toBe(account.accessToken);

      const read = await graph(`/${account.wabaId}?fields=id,name`, account.accessToken);
      expect(read.status).toBe(401);
      expect(((await read.json()) as Json).error).toMatchObject({
        code: 190,
        error_subcode: 460,
        type: 'OAuthException',
        message: expect.stringContaining('session has been invalidated'),
      });
      const connected = account.phoneNumbers.find((p) => p.status === 'CONNECTED')!;
      const refused = await send(account.accessToken, connected.id, hello('447700900777'));
      expect([refused.status, refused.body.error.code, refused.body.error.error_subcode]).toEqual([401, 190, 460]);
      // A token it never issued is still "cannot parse".
      expect(((await (await graph(`/${account.wabaId}`, 'never-issued')).json()) as Json).error.message).toMatch(
        /Cannot parse access token/,
      );

      expect(await (await graph(`/${account.wabaId}?fields=id`, rotated.body.accessToken)).json()).toEqual({
        id: account.wabaId,
      });
      expect(sim.rotateToken(account.wabaId)).not.toBe(rotated.body.accessToken);
    });
  });

  describe('sending', () => {
    it('accepts a template with message_status and a text without it', async () => {
      const account = sim.createAccount();
      const phoneId = account.phoneNumbers[0]!.id;
      const template = await send(account.accessToken, phoneId, {
        to: '+447700900123',
        type: 'template',
        template: {
          name: 'parcel_update',
          language: { code: 'en_GB' },
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
        },
      });
      expect(template).toEqual({
        status: 200,
        body: {
          messaging_product: 'whatsapp',
          contacts: [{ input: '+447700900123', wa_id: '447700900123' }],
          messages: [{ id: expect.stringMatching(/^wamid\.[A-Za-z0-9+/=]+$/), message_status: 'accepted' }],
        },
      });
      const text = await send(account.accessToken, phoneId, {
        to: '+447700900123',
        type: 'text',
        text: { body: 'Hi' },
      });
      expect(text.body.messages).toEqual([{ id: expect.stringMatching(/^wamid\./) }]);
      expect(text.body.messages[0].id).not.toBe(template.body.messages[0].id);

      const named = await send(account.accessToken, phoneId, {
        to: '+447700900123',
        type: 'template',
        template: {
          name: 'welcome_named',
          language: { code: 'en_GB' },
          components: [
            {
              type: 'body',
              parameters: [
                { type: 'text', parameter_name: 'first_name', text: 'Priya' },
                { type: 'text', parameter_name: 'company', text: 'Parcel Co' },
              ],
            },
          ],
        },
      });
      expect(named.status).toBe(200);
    });

    it("rejects invalid sends with Meta's codes and error shape", async () => {
      const account = sim.createAccount();
      const [connected, pending] = [account.phoneNumbers[0]!, account.phoneNumbers[1]!];
      const token = account.accessToken;
      const cases: [Promise<{ status: number; body: Json }>, number, number, string][] = [
        [send(token, connected.id, hello('15550000001')), 400, 131026, 'Message undeliverable'],
        [send(token, connected.id, hello('15550000003')), 429, 130429, 'Rate limit hit'],
        [
          send(token, connected.id, hello('15550000007')),
          400,
          131056,
          '(Business Account, Consumer Account) pair rate limit hit',
        ],
        [send(token, connected.id, hello('15550000009')), 400, 368, 'Temporarily blocked for policies violations'],
        [send(token, pending.id, hello('447700900123')), 400, 133010, 'Account not registered'],
        [
          send(token, connected.id, templateTo('447700900123', 'hello_world', 'en_GB')),
          404,
          132001,
          'Template name does not exist in the translation',
        ],
        [
          send(token, connected.id, templateTo('447700900123', 'summer_sale', 'en_GB')),
          404,
          132001,
          'Template name does not exist in the translation',
        ],
        [
          send(token, connected.id, templateTo('447700900123', 'delivery_photo', 'en_GB')),
          400,
          132000,
          'Number of parameters does not match the expected number of params',
        ],
        [
          send(
            token,
            connected.id,
            hello('447700900123', {
              template: {
                name: 'welcome_named',
                language: { code: 'en_GB' },
                components: [
                  {
                    type: 'body',
                    parameters: [
                      { type: 'text', text: 'a' },
                      { type: 'text', text: 'b' },
                    ],
                  },
                ],
              },
            }),
          ),
          400,
          100,
          'Invalid parameter',
        ],
        [send(token, connected.id, { to: '447700900123', type: 'text', text: {} }), 400, 100, 'Invalid parameter'],
      ];
      for (const [pending, httpStatus, code, title] of cases) {
        const { status, body } = await pending;
        expect({ status, code: body.error.code }).toEqual({ status: httpStatus, code });
        expect(body).toEqual({
          error: {
            message: `(#${code}) ${title}`,
            type: 'OAuthException',
            code,
            error_data: { messaging_product: 'whatsapp', details: expect.any(String) },
            fbtrace_id: expect.any(String),
          },
        });
      }
      const unknownTemplate = await send(token, connected.id, templateTo('447700900123', 'nope', 'en_US'));
      expect(unknownTemplate.body.error.error_data.details).toBe('template name (nope) does not exist in en_US');

      const foreignPhone = await send(token, '402000000000011', hello('447700900123'));
      expect(foreignPhone.status).toBe(400);
      expect(foreignPhone.body.error).toMatchObject({ code: 100, error_subcode: 33 });
      expect(foreignPhone.body.error.message).toMatch(/^Unsupported post request/);

      const expired = await send(token, connected.id, hello('15550000008'));
      expect(expired.status).toBe(401);
      expect(expired.body.error).toMatchObject({ code: 190, type: 'OAuthException' });
    });

    it('fails the first send to 15550000006 with a 500 and accepts the next', async () => {
      const account = sim.createAccount();
      const phoneId = account.phoneNumbers[0]!.id;
      const first = await send(account.accessToken, phoneId, hello('15550000006'));
      expect(first.status).toBe(500);
      expect(first.body.error).toMatchObject({ code: 1, is_transient: true });
      const second = await send(account.accessToken, phoneId, hello('15550000006'));
      expect(second.status).toBe(200);
    });

    it('records sends for inspection, filterable by recipient, and clears them', async () => {
      const account = sim.createAccount();
      await send(account.accessToken, account.phoneNumbers[0]!.id, hello('+447700900999'));
      const { body } = await control('GET', 'sends?to=447700900999');
      expect(body.data).toEqual([
        {
          phoneNumberId: account.phoneNumbers[0]!.id,
          edge: 'messages',
          wabaId: account.wabaId,
          body: expect.objectContaining({ to: '+447700900999', type: 'template' }),
          response: { status: 200, body: expect.objectContaining({ messaging_product: 'whatsapp' }) },
          at: expect.any(String),
        },
      ]);
      expect(sim.sends({ to: '447700900999' })).toHaveLength(1);
      await control('DELETE', 'sends');
      expect(sim.sends()).toHaveLength(0);
    });
  });

  describe('status webhooks', () => {
    async function sequenceFor(to: string, expectedCount: number) {
      const account = sim.createAccount();
      const phone = account.phoneNumbers[0]!;
      const { body } = await send(account.accessToken, phone.id, hello(to, { biz_opaque_callback_data: 'job-5521' }));
      const wamid: string = body.messages[0].id;
      const statuses = await waitFor(() => {
        const seen = statusesFor(wamid);
        return seen.length >= expectedCount ? seen : undefined;
      }, `${expectedCount} statuses for ${to}`);
      await new Promise((r) => setTimeout(r, 120)); // nothing more should follow
      expect(statusesFor(wamid)).toHaveLength(expectedCount);
      const envelope = receiver.received.find(
        (r) => r.json.entry[0].changes[0].value.statuses?.[0]?.id === wamid,
      )!.json;
      expect(envelope.entry[0].id).toBe(account.wabaId);
      expect(envelope.entry[0].changes[0].value.metadata.phone_number_id).toBe(phone.id);
      return { wamid, statuses };
    }

    it('plays sent, delivered, read for an ordinary number, echoing biz_opaque_callback_data', async () => {
      const { wamid, statuses } = await sequenceFor('447700900123', 3);
      expect(statuses.map((s: { status: string }) => s.status)).toEqual(['sent', 'delivered', 'read']);
      expect(statuses[0]).toEqual({
        id: wamid,
        status: 'sent',
        timestamp: expect.stringMatching(/^\d{10}$/),
        recipient_id: '447700900123',
        pricing: { billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' },
        biz_opaque_callback_data: 'job-5521',
      });
      expect(statuses[2].pricing).toBeUndefined();
    });

    it('fails 15550000002 asynchronously with 131047 after sent', async () => {
      const { statuses } = await sequenceFor('15550000002', 2);
      expect(statuses.map((s: { status: string }) => s.status)).toEqual(['sent', 'failed']);
      expect(statuses[1].errors).toEqual([
        {
          code: 131047,
          title: 'Re-engagement message',
          message: 'Re-engagement message',
          error_data: {
            details:
              'Message failed to send because more than 24 hours have passed since the customer last replied to ' +
              'this number.',
          },
        },
      ]);
    });

    it('skips delivered for 15550000004', async () => {
      const { statuses } = await sequenceFor('15550000004', 2);
      expect(statuses.map((s: { status: string }) => s.status)).toEqual(['sent', 'read']);
    });

    it('sends 15550000005 out of order with true duplicates', async () => {
      const { statuses } = await sequenceFor('15550000005', 5);
      const order = statuses.map((s: { status: string }) => s.status);
      expect(order).toEqual(['read', 'delivered', 'sent', 'delivered', 'read']);
      expect(statuses[3]).toEqual(statuses[1]);
      expect(statuses[4]).toEqual(statuses[0]);
      const [read, delivered, sent] = statuses.map((s: { timestamp: string }) => Number(s.timestamp));
      expect(sent! < delivered! && delivered! < read!).toBe(true);
    });
  });

  describe('control endpoints', () => {
    it('changes a template status and posts message_template_status_update', async () => {
      const account = sim.createAccount();
      const template = account.templates.find((t) => t.name === 'hello_world')!;
      const { body } = await control('POST', 'template-status', {
        wabaId: account.wabaId,
        templateName: 'hello_world',
        language: 'en_US',
        event: 'REJECTED',
        reason: 'INVALID_FORMAT',
      });
      expect(body).toEqual({ templateId: template.id, status: 'REJECTED', delivery: { status: 200 } });
      const hook = receiver.received.find((r) => r.json.entry[0].id === account.wabaId)!;
      expect(hook.raw.toString()).toContain(`"message_template_id":${template.id},`);
      expect(hook.json.entry[0]).toEqual({
        id: account.wabaId,
        time: expect.any(Number),
        changes: [
          {
            field: 'message_template_status_update',
            value: {
              event: 'REJECTED',
              message_template_id: Number(template.id),
              message_template_name: 'hello_world',
              message_template_language: 'en_US',
              reason: 'INVALID_FORMAT',
              message_template_category: 'UTILITY',
            },
          },
        ],
      });
      const rejected = await send(account.accessToken, account.phoneNumbers[0]!.id, hello('447700900123'));
      expect(rejected.body.error.code).toBe(132001);
    });

    it('posts crafted statuses in one webhook and raw batches, returning the receiver status', async () => {
      const account = sim.createAccount();
      const phone = account.phoneNumbers[0]!;
      const statuses = await control('POST', 'statuses', {
        wabaId: account.wabaId,
        phoneNumberId: phone.id,
        statuses: [
          { id: 'wamid.RACE1', status: 'delivered', recipient_id: '447700900123', timestamp: '1767182405' },
          { id: 'wamid.RACE2', status: 'read', recipient_id: '447700900124' },
        ],
      });
      expect(statuses.body.delivery).toEqual({ status: 200 });
      expect(statusesFor('wamid.RACE1')).toEqual([
        { id: 'wamid.RACE1', status: 'delivered', timestamp: '1767182405', recipient_id: '447700900123' },
      ]);
      expect(statusesFor('wamid.RACE2')).toHaveLength(1);

      receiver.refuse(account.wabaId, [503]);
      const payload = {
        object: 'whatsapp_business_account',
        entry: [
          { id: account.wabaId, changes: [] },
          { id: 'x', changes: [] },
        ],
      };
      const raw = await control('POST', 'webhooks/raw', { payload });
      expect(raw.body).toEqual({ status: 503 });
      expect(receiver.received.at(-1)!.json).toEqual(payload);
    });

    it('creates isolated accounts whose token only works for themselves', async () => {
      const { status, body } = await control('POST', 'accounts', { name: 'Test Shop' });
      expect(status).toBe(201);
      expect(body).toMatchObject({ name: 'Test Shop', wabaId: expect.stringMatching(/^\d{15}$/) });
      expect(body.templates).toHaveLength(11);
      const own = await graph(`/${body.wabaId}?fields=id,name`, body.accessToken);
      expect(await own.json()).toEqual({ id: body.wabaId, name: 'Test Shop' });
      expect((await graph('/310000000000001', body.accessToken)).status).toBe(400);
      expect((await control('GET', 'health')).body.status).toBe('ok');
    });

    it('names what is missing or unknown in a control request instead of posting anything', async () => {
      const before = receiver.received.length;
      const missing = await control('POST', 'inbound', {
        phoneNumberId: '402000000000011',
        from: '447700900123',
        text: 'hi',
      });
      expect(missing).toEqual({
        status: 400,
        body: { error: { message: 'wabaId (the business account) is required' } },
      });
      const unknown = await control('POST', 'inbound', {
        wabaId: '399999999999999',
        phoneNumberId: '402000000000011',
        from: '447700900123',
        text: 'hi',
      });
      expect(unknown).toEqual({
        status: 404,
        body: { error: { message: 'business account 399999999999999 not found' } },
      });
      // A valid one is posted at once (its answer carries the receiver's status): the two above posted nothing.
      const valid = await control('POST', 'inbound', {
        wabaId: '310000000000001',
        phoneNumberId: '402000000000011',
        from: '447700900123',
        text: 'hi',
      });
      expect(valid.body.delivery).toEqual({ status: 200 });
      expect(receiver.received.length).toBe(before + 1);
    });
  });

  it('close() ends hanging requests and pending timers promptly', async () => {
    const other = await startSimulator({ appSecret: APP_SECRET, webhookUrl: receiver.url, hangMs: 60_000 });
    const hanging = fetch(`${other.baseUrl}/402000000000011/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer sim-token-waba-1', 'content-type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'whatsapp', ...hello('15550000010') }),
    }).catch((err: unknown) => err);
    // An accepted send leaves status webhooks pending on `other` too.
    const accepted = await fetch(`${other.baseUrl}/402000000000011/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer sim-token-waba-1', 'content-type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'whatsapp', ...hello('447700900123') }),
    });
    expect(accepted.status).toBe(200);
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(String(await hanging)).toMatch(/fetch failed/);
  });
});
