import { randomBytes } from 'node:crypto';
import { eventually, insertDelivery, onboard, PASSWORD, type Tenant } from '../utils/factories.js';
import { LogCapture } from '../utils/log-capture.js';
import { startStack, type Stack } from '../utils/stack.js';
import { startTestApp } from '../utils/test-app.js';

/** A real 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** Issue 37 (audit 3), findings 8 and 10: what the request log shows, what the audit log records, IPv6 buckets. */
describe('Security: the request log, the audit trail and IPv6 address buckets', () => {
  const logs = new LogCapture();
  let stack: Stack;
  let t: Tenant;
  beforeAll(async () => {
    stack = await startStack({ env: { LOG_LEVEL: 'info' }, core: { logDestination: logs.destination } });
    t = await onboard(stack, 'Audit Trail Org');
  });
  afterAll(async () => {
    await stack?.close();
  });

  const auditOf = async (cookie: string) =>
    (await stack.http.get('/audit-log?limit=100').set('cookie', cookie)).body.data.items as {
      action: string;
      targetType: string;
      targetId: string;
      operatorEmail: string | null;
      details: Record<string, unknown>;
    }[];

  it('finding 8: a signed inbound-media link is logged as its route pattern, never with its token', async () => {
    const token = randomBytes(24).toString('base64url');
    const res = await stack.http.get(`/media/inbound/${token}`).set('x-request-id', `media-link-${token.slice(0, 8)}`);
    expect(res.status).toBe(404);
    const line = await eventually(async () =>
      logs.where('reqId', `media-link-${token.slice(0, 8)}`).find((l) => l.msg === 'request completed'),
    );
    expect(line).toMatchObject({ method: 'GET', path: '/media/inbound/:token', status: 404 });
    expect(logs.lines.filter((l) => JSON.stringify(l).includes(token))).toEqual([]);
    // Other routes keep their path (ids help an operator follow a request).
    await stack.http.get('/messages/123').set(t.key.headers).set('x-request-id', 'plain-path');
    expect(logs.where('reqId', 'plain-path').find((l) => l.msg === 'request completed')).toMatchObject({
      path: '/messages/123',
    });
  });

  it('finding 10: sign-ins, failed sign-ins, media transfers and delivery replays are in the organization’s audit log', async () => {
    const { email } = t.operator;
    expect((await stack.http.post('/auth/login').send({ email, password: 'not the password' })).status).toBe(401);
    const upload = await stack.http
      .post(`/business-accounts/${t.account.wabaId}/phone-numbers/${t.account.phoneNumberId}/media`)
      .set('cookie', t.operator.cookie)
      .attach('file', PNG, { filename: 'p.png', contentType: 'image/png' });
    expect(upload.status).toBe(200);
    const mediaId = upload.body.data.id as string;
    const download = await stack.http
      .get(`/business-accounts/${t.account.wabaId}/media/${mediaId}`)
      .set('cookie', t.operator.cookie);
    expect(download.status).toBe(200);
    const failed = await insertDelivery(stack.db, { wabaIds: [t.account.wabaId], status: 'failed', lastError: 'x' });
    const replay = await stack.http.post(`/webhooks/deliveries/${failed.id}/replay`).set('cookie', t.operator.cookie);
    expect(replay.status).toBe(200);

    const entries = await auditOf(t.operator.cookie);
    const find = (action: string) => entries.filter((e) => e.action === action);
    expect(find('operator.signed_in')).toEqual([
      expect.objectContaining({
        operatorEmail: email,
        targetType: 'operator',
        details: { address: expect.any(String) },
      }),
    ]);
    expect(find('operator.sign_in_failed')).toEqual([
      expect.objectContaining({ operatorEmail: null, details: { email, address: expect.any(String) } }),
    ]);
    expect(find('media.uploaded')).toEqual([
      expect.objectContaining({
        operatorEmail: email,
        targetId: mediaId,
        details: expect.objectContaining({ mimeType: 'image/png', size: PNG.length }),
      }),
    ]);
    expect(find('media.downloaded')).toEqual([expect.objectContaining({ operatorEmail: email, targetId: mediaId })]);
    expect(find('webhook_delivery.replayed')).toEqual([
      expect.objectContaining({
        operatorEmail: email,
        targetId: String(failed.id),
        details: { wabaIds: [t.account.wabaId] },
      }),
    ]);
    expect(JSON.stringify(entries)).not.toContain(PASSWORD);
  });

  it('finding 10: the console’s per-address bucket counts an IPv6 client by its /64', async () => {
    const app = await startTestApp({
      TRUST_PROXY: '1',
      CONSOLE_ADDRESS_RATE_LIMIT_PER_SECOND: '1',
      CONSOLE_ADDRESS_RATE_LIMIT_BURST: '3',
    });
    try {
      expect(await eventually(async () => (await app.http.get('/health/ready')).status === 200)).toBe(true);
      // Eight addresses of one /64, one request each: one bucket of 3.
      const statuses: number[] = [];
      for (let i = 1; i <= 8; i++) {
        const res = await app.http
          .get('/business-accounts')
          .set('x-forwarded-for', `2001:db8:1:2::${i.toString(16)}:${randomBytes(2).toString('hex')}`)
          .set('cookie', `bm_session=made-up-${i}`);
        statuses.push(res.status);
      }
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(4);
      // Another /64 has its own bucket.
      const elsewhere = await app.http
        .get('/business-accounts')
        .set('x-forwarded-for', '2001:db8:1:3::1')
        .set('cookie', 'bm_session=made-up-elsewhere');
      expect(elsewhere.status).toBe(401);
    } finally {
      await app.close();
    }
  });
});
