import { Metrics } from '../../src/core/metrics/metrics.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { type SimulatorHandle, startSimulator } from '../../simulator/simulator.js';
import { AppConfig } from '../../src/core/config/app-config.js';
import { createLogger } from '../../src/core/logging/logger.js';
import { UpstreamError } from '../../src/upstream/upstream.error.js';
import type { SendPayload } from '../../src/upstream/upstream.types.js';
import { WhatsAppClient } from '../../src/upstream/whatsapp.client.js';

const TIMEOUT_MS = 500;

function configFor(upstreamBaseUrl: string): AppConfig {
  return AppConfig.fromEnv({
    DATABASE_URL: 'postgresql://u:p@127.0.0.1:5432/db',
    REDIS_URL: 'redis://127.0.0.1:6379',
    UPSTREAM_BASE_URL: upstreamBaseUrl,
    UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
    WHATSAPP_APP_SECRET: 'app-secret-123',
    WHATSAPP_VERIFY_TOKEN: 'verify-token-123',
    ENCRYPTION_KEY: 'a'.repeat(64),
  });
}

/** The rejection of `promise`, which must be an UpstreamError that nowhere shows `token`. */
async function upstreamError(promise: Promise<unknown>, token: string): Promise<UpstreamError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  if (!(err instanceof UpstreamError)) throw new Error(`expected an UpstreamError, got ${String(err)}`);
  for (const text of [err.message, JSON.stringify(err), inspect(err, { depth: 10 }), String(err.stack)]) {
    expect(text).not.toContain(token);
  }
  return err;
}

/** [label, payload, HTTP status, Meta code, title] */
type PermanentCase = [string, SendPayload, number, number, string];

const hello = (to: string): SendPayload => ({
  type: 'template',
  to,
  template: { name: 'hello_world', language: { code: 'en_US' } },
});

describe('WhatsAppClient against the simulator', () => {
  let sim: SimulatorHandle;
  let client: WhatsAppClient;

  beforeAll(async () => {
    // hangMs > the client's read timeout: the 15550000010 recipient must time out.
    sim = await startSimulator({ appSecret: 'app-secret-123', hangMs: 3 * TIMEOUT_MS });
    client = new WhatsAppClient(configFor(sim.baseUrl), new Metrics(), createLogger('silent', 'test'));
  });

  afterAll(async () => {
    client.onModuleDestroy();
    await sim.close();
  });

  /** A fresh business account per test, as the service's own tests will do. */
  const newAccount = () => {
    const account = sim.createAccount({ name: 'Upstream Test' });
    const connected = account.phoneNumbers.find((p) => p.status === 'CONNECTED')!;
    return { ...account, phoneId: connected.id };
  };

  describe('reads', () => {
    it('gets the business account', async () => {
      const { wabaId, accessToken } = newAccount();
      const account = await client.getBusinessAccount(accessToken, wabaId);
      expect(account).toEqual({ id: wabaId, name: 'Upstream Test' });
    });

    it('lists phone numbers with their status and display format', async () => {
      const { wabaId, accessToken, phoneNumbers } = newAccount();
      const listed = await client.listPhoneNumbers(accessToken, wabaId);
      expect(listed).toEqual(phoneNumbers);
      expect(listed.map((p) => p.status)).toEqual(['CONNECTED', 'PENDING', 'DISCONNECTED']);
      expect(listed[0]!.display_phone_number).toMatch(/^\+44 7700 9\d{5}$/);
    });

    it('follows paging.next over 6 pages of 2 templates', async () => {
      const { wabaId, accessToken, templates } = newAccount();
      const listed = await client.listTemplates(accessToken, wabaId, { pageSize: 2 });
      expect(listed).toHaveLength(11);
      expect(listed).toEqual(templates);
      expect(listed.filter((t) => t.name === 'parcel_update').map((t) => t.language)).toEqual(['en_GB', 'en_US']);
      expect(listed.every((t) => typeof t.id === 'string')).toBe(true);
    });
  });

  describe('webhook subscription', () => {
    it("subscribes the token's app and lists it (POST, then GET /{waba-id}/subscribed_apps)", async () => {
      const { wabaId, accessToken } = newAccount();
      expect(await client.listSubscribedApps(accessToken, wabaId)).toEqual([]);
      await client.subscribeApp(accessToken, wabaId);
      expect(await client.listSubscribedApps(accessToken, wabaId)).toEqual([
        {
          whatsapp_business_api_data: {
            id: '1987654321098765',
            link: expect.stringContaining('1987654321098765'),
            name: expect.any(String),
          },
        },
      ]);
    });

    it('classifies subscribed_apps failures like any Meta error, never showing the token', async () => {
      const { wabaId, accessToken } = newAccount();
      sim.setSubscriptionFault(wabaId, 'POST', 'permission');
      const permission = await upstreamError(client.subscribeApp(accessToken, wabaId), accessToken);
      expect(permission).toMatchObject({
        operation: 'subscribeApp',
        errorClass: 'credential',
        code: 200,
        httpStatus: 403,
      });
      sim.setSubscriptionFault(wabaId, 'POST', 'unavailable');
      expect(await upstreamError(client.subscribeApp(accessToken, wabaId), accessToken)).toMatchObject({
        errorClass: 'retryable',
        code: 2,
        httpStatus: 503,
      });
      sim.setSubscriptionFault(wabaId, 'GET', 'rate_limit');
      expect(await upstreamError(client.listSubscribedApps(accessToken, wabaId), accessToken)).toMatchObject({
        operation: 'listSubscribedApps',
        errorClass: 'retryable',
        code: 80007,
      });
      sim.rotateToken(wabaId);
      sim.setSubscriptionFault(wabaId, 'POST', null);
      expect(await upstreamError(client.subscribeApp(accessToken, wabaId), accessToken)).toMatchObject({
        errorClass: 'credential',
        code: 190,
        httpStatus: 401,
      });
    });
  });

  describe('sendMessage', () => {
    it('sends a template with the recipient as +digits and returns the wamid', async () => {
      const { accessToken, phoneId, wabaId } = newAccount();
      const payload: SendPayload = {
        type: 'template',
        to: '447700900123',
        bizOpaqueCallbackData: 'job-5521',
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
      };
      const result = await client.sendMessage(accessToken, phoneId, payload);
      expect(result).toEqual({
        wamid: expect.stringMatching(/^wamid\./),
        waId: '447700900123',
        input: '+447700900123',
        messageStatus: 'accepted',
      });
      const [recorded] = sim.sends({ to: '447700900123' }).filter((s) => s.wabaId === wabaId);
      expect(recorded!.body).toEqual({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '+447700900123',
        biz_opaque_callback_data: 'job-5521',
        type: 'template',
        template: payload.template,
      });
    });

    it('sends a text message, for which Meta reports no message_status', async () => {
      const { accessToken, phoneId, wabaId } = newAccount();
      const result = await client.sendMessage(accessToken, phoneId, {
        type: 'text',
        to: '+447700900124',
        text: { body: 'Your parcel is ready for pickup.' },
      });
      expect(result.messageStatus).toBeUndefined();
      const [recorded] = sim.sends({ to: '447700900124' }).filter((s) => s.wabaId === wabaId);
      expect(recorded!.body).toMatchObject({
        to: '+447700900124',
        type: 'text',
        text: { preview_url: false, body: 'Your parcel is ready for pickup.' },
      });
    });

    it('refuses a recipient that is not E.164 digits without calling Meta', async () => {
      const { accessToken, phoneId, wabaId } = newAccount();
      const err = await upstreamError(client.sendMessage(accessToken, phoneId, hello('44 7700 900123')), accessToken);
      expect(err.errorClass).toBe('permanent');
      expect(sim.sends().filter((s) => s.wabaId === wabaId)).toHaveLength(0);
    });
  });

  describe('error classes', () => {
    it.each([
      ['131026 undeliverable', hello('15550000001'), 400, 131026, 'Message undeliverable'],
      [
        '132001 template not in that language',
        { ...hello('447700900123'), template: { name: 'hello_world', language: { code: 'en_GB' } } },
        404,
        132001,
        'Template name does not exist in the translation',
      ],
      [
        '132000 parameter count',
        { ...hello('447700900123'), template: { name: 'parcel_update', language: { code: 'en_GB' } } },
        400,
        132000,
        'Number of parameters does not match the expected number of params',
      ],
    ] as PermanentCase[])('%s is permanent', async (_, payload, httpStatus, code, title) => {
      const { accessToken, phoneId } = newAccount();
      const err = await upstreamError(client.sendMessage(accessToken, phoneId, payload), accessToken);
      expect(err).toMatchObject({ errorClass: 'permanent', httpStatus, code, title });
      expect(err).toMatchObject({ isTimeout: false, isNetwork: false });
      expect(err.detail).toEqual(expect.any(String));
      expect(err.fbtraceId).toEqual(expect.any(String));
    });

    it('100 for a phone number of another account is permanent', async () => {
      const { accessToken } = newAccount();
      const other = newAccount();
      const sending = client.sendMessage(accessToken, other.phoneId, hello('447700900123'));
      const err = await upstreamError(sending, accessToken);
      expect(err).toMatchObject({ errorClass: 'permanent', httpStatus: 400, code: 100 });
      expect(err.title).toMatch(/^Unsupported post request/);
    });

    it('130429 throughput limit is retryable', async () => {
      const { accessToken, phoneId } = newAccount();
      const err = await upstreamError(client.sendMessage(accessToken, phoneId, hello('15550000003')), accessToken);
      expect(err).toMatchObject({ errorClass: 'retryable', code: 130429, title: 'Rate limit hit' });
    });

    it('a 5xx is retryable and the retry succeeds', async () => {
      const { accessToken, phoneId } = newAccount();
      const err = await upstreamError(client.sendMessage(accessToken, phoneId, hello('15550000006')), accessToken);
      expect(err).toMatchObject({ errorClass: 'retryable', httpStatus: 500, code: 1 });
      await expect(client.sendMessage(accessToken, phoneId, hello('15550000006'))).resolves.toMatchObject({
        messageStatus: 'accepted',
      });
    });

    it('a hanging upstream times out after the read timeout, retryable', async () => {
      const { accessToken, phoneId } = newAccount();
      const started = Date.now();
      const err = await upstreamError(client.sendMessage(accessToken, phoneId, hello('15550000010')), accessToken);
      expect(Date.now() - started).toBeLessThan(3 * TIMEOUT_MS);
      expect(err).toMatchObject({ errorClass: 'retryable', isTimeout: true, httpStatus: undefined, code: undefined });
    });

    it('a wrong token is a credential error (190), as is an expired one', async () => {
      const { wabaId, accessToken, phoneId } = newAccount();
      const wrong = 'EAAG-not-a-valid-token-0123456789';
      const err = await upstreamError(client.listTemplates(wrong, wabaId), wrong);
      expect(err).toMatchObject({ errorClass: 'credential', httpStatus: 401, code: 190, operation: 'listTemplates' });
      const expired = await upstreamError(client.sendMessage(accessToken, phoneId, hello('15550000008')), accessToken);
      expect(expired).toMatchObject({ errorClass: 'credential', code: 190 });
    });

    it('368 restricted account blocks the account', async () => {
      const { accessToken, phoneId } = newAccount();
      const err = await upstreamError(client.sendMessage(accessToken, phoneId, hello('15550000009')), accessToken);
      expect(err).toMatchObject({ errorClass: 'account_blocked', code: 368 });
    });

    it('an unreachable upstream is a retryable network error', async () => {
      const closed = await new Promise<number>((resolve) => {
        const server = http.createServer().listen(0, '127.0.0.1', () => {
          const { port } = server.address() as AddressInfo;
          server.close(() => resolve(port));
        });
      });
      const offline = new WhatsAppClient(
        configFor(`http://127.0.0.1:${closed}/v25.0`),
        new Metrics(),
        createLogger('silent', 'test'),
      );
      const reading = offline.getBusinessAccount('sim-token-waba-1', '310000000000001');
      const err = await upstreamError(reading, 'sim-token-waba-1');
      offline.onModuleDestroy();
      expect(err).toMatchObject({ errorClass: 'retryable', isNetwork: true, isTimeout: false });
      expect(err.title).toBe('Network error (ECONNREFUSED)');
    });
  });

  describe('paging guards', () => {
    // A fake upstream whose paging misbehaves: a link to another host, or a link back to the same page.
    let fake: http.Server;
    let fakeClient: WhatsAppClient;
    const hits: string[] = [];

    beforeAll(async () => {
      fake = http.createServer((req, res) => {
        hits.push(req.url ?? '');
        const origin = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
        const next = req.url!.includes('/1/')
          ? 'https://evil.example/v25.0/1/message_templates?after=x'
          : `${origin}${req.url}`;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: [{ id: '1' }], paging: { cursors: {}, next } }));
      });
      await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
      fakeClient = new WhatsAppClient(
        configFor(`http://127.0.0.1:${(fake.address() as AddressInfo).port}/v25.0`),
        new Metrics(),
        createLogger('silent', 'test'),
      );
    });

    afterAll(async () => {
      fakeClient.onModuleDestroy();
      await new Promise<void>((resolve) => {
        fake.close(() => resolve());
        fake.closeAllConnections();
      });
    });

    it('never follows paging.next to another origin (the token would go with it)', async () => {
      hits.length = 0;
      const err = await upstreamError(fakeClient.listTemplates('secret-token', '1'), 'secret-token');
      expect(err).toMatchObject({ errorClass: 'permanent', title: 'paging.next points outside the upstream' });
      expect(hits).toHaveLength(1);
    });

    it('stops when paging.next repeats a page', async () => {
      hits.length = 0;
      const err = await upstreamError(fakeClient.listTemplates('secret-token', '2'), 'secret-token');
      expect(err.title).toBe('Paging repeats a page');
      expect(hits).toHaveLength(2);
    });
  });
});
