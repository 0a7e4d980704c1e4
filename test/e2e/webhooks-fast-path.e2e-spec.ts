import { jest } from '@jest/globals';
import net from 'node:net';
import { metaJson } from '../../simulator/meta-json.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { unixNow } from '../utils/webhooks.js';
import { createTenant, wamid } from '../utils/factories.js';
import { countDeliveries } from '../utils/messaging-rows.js';
import { inboundWebhook } from '../../simulator/payloads/webhooks.js';
import { signatureHeader } from '../../simulator/payloads/signature.js';

jest.setTimeout(180_000);

interface Probe {
  name: string;
  body: string | Buffer;
  headers?: Record<string, string>;
  signed?: boolean;
  path?: string;
}

/** What a client sees of an answer: status, envelope, and the headers that matter. */
async function answer(t: TestApp, p: Probe) {
  let req = t.http.post(p.path ?? '/webhooks/whatsapp').set('content-type', 'application/json');
  for (const [k, v] of Object.entries(p.headers ?? {})) req = req.set(k, v);
  if (p.signed !== false) req = req.set('x-hub-signature-256', signatureHeader(p.body, t.config.whatsappAppSecret));
  const res = await req.send(p.body);
  const security = ['content-security-policy', 'x-content-type-options', 'x-frame-options', 'referrer-policy'].map(
    (h) => [h, res.headers[h]],
  );
  return {
    status: res.status,
    body: res.body as unknown,
    contentType: res.headers['content-type'],
    requestId: res.headers['x-request-id'],
    security,
  };
}

describe('Webhook receiver: the node:http fast path answers exactly as the Nest route', () => {
  let fast: TestApp;
  let nest: TestApp;

  beforeAll(async () => {
    fast = await startTestApp({ WEBHOOK_FAST_PATH: 'true', WEBHOOK_BODY_LIMIT_BYTES: '65536' });
    nest = await startTestApp({ WEBHOOK_FAST_PATH: 'false', WEBHOOK_BODY_LIMIT_BYTES: '65536' });
  });
  afterAll(async () => {
    await fast?.close();
    await nest?.close();
  });

  it('gives the same status, envelope, content type, request id and security headers for good and bad deliveries', async () => {
    const tenant = await createTenant(fast);
    const delivery = () =>
      metaJson(
        inboundWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, {
          from: '447700900123',
          id: wamid(),
          timestamp: String(unixNow()),
          text: 'hi',
        }),
      );
    const probes: Probe[] = [
      { name: 'a signed delivery', body: delivery(), headers: { 'x-request-id': 'meta-retry.1' } },
      { name: 'a query string', body: delivery(), path: '/webhooks/whatsapp?via=meta' },
      { name: 'a trailing slash', body: delivery(), path: '/webhooks/whatsapp/' },
      { name: 'no signature', body: delivery(), signed: false },
      { name: 'a wrong signature', body: delivery(), signed: false, headers: { 'x-hub-signature-256': 'sha256=00' } },
      { name: 'not JSON', body: 'not json' },
      { name: 'not a WhatsApp business account object', body: JSON.stringify({ object: 'page', entry: [] }) },
      { name: 'no entry array', body: JSON.stringify({ object: 'whatsapp_business_account' }) },
      { name: 'over the body limit', body: Buffer.alloc(70_000, 'x') },
      { name: 'a malformed x-request-id', body: delivery(), headers: { 'x-request-id': 'bad id <script>' } },
    ];
    let acknowledged = 0;
    for (const p of probes) {
      const [a, b] = [await answer(fast, p), await answer(nest, p)];
      if (a.status === 200) acknowledged++;
      // A malformed id is replaced by a fresh UUID on both sides: compare its shape, not its value.
      const id = (r: typeof a) =>
        p.headers?.['x-request-id'] === 'meta-retry.1' ? r.requestId : /^[0-9a-f-]{36}$/.test(String(r.requestId));
      expect({ probe: p.name, status: a.status, body: a.body, contentType: a.contentType, id: id(a) }).toEqual({
        probe: p.name,
        status: b.status,
        body: b.body,
        contentType: b.contentType,
        id: id(b),
      });
    }
    // Each side stored exactly what it acknowledged: the three signed deliveries on the exact path.
    expect(acknowledged).toBe(3);
    expect(await countDeliveries(fast, tenant.account.wabaId)).toBe(2 * acknowledged);
  });

  it('leaves other methods and encoded bodies to the Nest route', async () => {
    const handshake = await fast.http
      .get('/webhooks/whatsapp')
      .query({ 'hub.mode': 'subscribe', 'hub.verify_token': fast.config.whatsappVerifyToken, 'hub.challenge': '42' });
    expect(handshake.status).toBe(200);
    expect(handshake.text).toBe('42');
    const gzipped = await fast.http
      .post('/webhooks/whatsapp')
      .set('content-type', 'application/json')
      .set('content-encoding', 'br-unknown')
      .set('x-hub-signature-256', `sha256=${'0'.repeat(64)}`)
      .send('{}');
    expect(gzipped.status).toBe(415);
    expect(gzipped.body).toMatchObject({ statusCode: 415 });
  });

  /**
   * Headers announcing a body that is never sent: an answer can only come before the body was read. Both paths
   * (the fast path; the Nest route, reached with a Content-Encoding) answer 401 at once and close.
   */
  it('answers 401 to a missing or malformed signature header without reading the body', async () => {
    for (const [app, encoding] of [
      [fast, undefined],
      [fast, 'gzip'],
      [nest, undefined],
    ] as const) {
      for (const signature of [undefined, 'sha256=00', 'md5=abc']) {
        const url = new URL(app.url);
        const socket = net.connect(Number(url.port), url.hostname);
        const head = [
          'POST /webhooks/whatsapp HTTP/1.1',
          `Host: ${url.host}`,
          'Content-Type: application/json',
          'Content-Length: 60000',
          ...(encoding ? [`Content-Encoding: ${encoding}`] : []),
          ...(signature ? [`X-Hub-Signature-256: ${signature}`] : []),
        ];
        socket.write(`${head.join('\r\n')}\r\n\r\n{"object":`);
        const text = await new Promise<string>((resolve, reject) => {
          let got = '';
          const timer = setTimeout(
            () => reject(new Error(`no answer before the body (${encoding ?? 'fast path'}, ${signature})`)),
            3000,
          );
          socket.on('data', (c: Buffer) => (got += c.toString()));
          socket.on('close', () => (clearTimeout(timer), resolve(got)));
          socket.on('error', reject);
        });
        expect(text).toMatch(/^HTTP\/1\.1 401 /);
        expect(text.toLowerCase()).toContain('connection: close');
        expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({
          statusCode: 401,
          message: 'Invalid or missing X-Hub-Signature-256',
        });
      }
    }
  });
});
