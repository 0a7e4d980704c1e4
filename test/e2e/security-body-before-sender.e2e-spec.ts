import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { eventually, PASSWORD, signupAndLogin, uniqueEmail, type Operator } from '../utils/factories.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

const LIMITED = { statusCode: 429, message: 'Rate limit exceeded' };

/**
 * Issue 37, finding 1 (high): bodies were parsed before anyone was authenticated. A made-up session cookie on the
 * campaign route got a 32 MiB parser (gzip inflated), the per-address bucket skipped any request merely carrying a
 * cookie or an `x-access-key`, and exact-path rules missed `/Auth/Login` and `/auth/login/`. TRUST_PROXY=1: the last
 * X-Forwarded-For entry is the client address, so each test takes fresh addresses.
 */
describe('Security: no body is parsed before its sender is known', () => {
  let t: TestApp;
  let operator: Operator;
  let next = 0;
  const address = () => `203.0.113.${++next}`;

  beforeAll(async () => {
    t = await startTestApp({
      TRUST_PROXY: '1',
      UNAUTHENTICATED_RATE_LIMIT_PER_SECOND: '1',
      UNAUTHENTICATED_RATE_LIMIT_BURST: '4',
      BODY_PARSES_PER_ADDRESS: '2',
    });
    // Until its Redis connection is up the limiter lets requests through (it fails open).
    expect(await eventually(async () => (await t.http.get('/health/ready')).status === 200)).toBe(true);
    operator = await signupAndLogin(t, 'Body Org');
  });
  afterAll(async () => {
    await t?.close();
  });

  const campaignPath = '/business-accounts/123456789/campaigns';
  /** Over UNAUTHENTICATED_BODY_LIMIT_BYTES (64 KiB by default), far under BODY_LIMIT_BYTES. */
  const body100k = JSON.stringify({ name: 'x'.repeat(100 * 1024) });

  it('a made-up session cookie gets the small unauthenticated limit on the campaign route (413 before any parse), a live session its own', async () => {
    const forged = await t.http
      .post(campaignPath)
      .set('x-forwarded-for', address())
      .set('cookie', `bm_session=${'A'.repeat(43)}`)
      .set('content-type', 'application/json')
      .send(body100k);
    expect(forged.status).toBe(413);
    const small = t.config.unauthenticatedBodyLimitBytes;
    expect(forged.body).toEqual({
      statusCode: 413,
      message: `Payload Too Large: the request body is over this route's limit of ${small} bytes`,
      errors: [{ field: 'body', message: `must be at most ${small} bytes` }],
    });

    const signedIn = await t.http
      .post(campaignPath)
      .set('x-forwarded-for', address())
      .set('cookie', operator.cookie)
      .set('content-type', 'application/json')
      .send(body100k);
    // Read and validated: the route's own answer, not the parser's.
    expect(signedIn.status).toBe(422);
  });

  it('made-up key pairs get the small limit too, and a body sent without credentials (signup) is capped by UNAUTHENTICATED_BODY_LIMIT_BYTES', async () => {
    const keys = await t.http
      .post('/messages')
      .set('x-forwarded-for', address())
      .set({ 'x-access-key': 'ak_made_up', 'x-secret-key': 'sk_made_up' })
      .set('content-type', 'application/json')
      .send(body100k);
    expect(keys.status).toBe(413);
    const signup = await t.http
      .post('/auth/signup')
      .set('x-forwarded-for', address())
      .set('content-type', 'application/json')
      .send(JSON.stringify({ email: uniqueEmail(), password: PASSWORD, organizationName: 'y'.repeat(100 * 1024) }));
    expect(signup.status).toBe(413);
  });

  it('a compressed JSON body is refused 415 naming content-encoding, signed in or not; nothing is inflated', async () => {
    const gzipped = gzipSync(JSON.stringify({ name: 'x'.repeat(1024 * 1024) }));
    for (const cookie of [operator.cookie, `bm_session=${'B'.repeat(43)}`]) {
      const res = await t.http
        .post(campaignPath)
        .set('x-forwarded-for', address())
        .set('cookie', cookie)
        .set('content-type', 'application/json')
        .set('content-encoding', 'gzip')
        .send(gzipped);
      expect(res.status).toBe(415);
      expect(res.body).toEqual({
        statusCode: 415,
        message: 'Unsupported body encoding',
        errors: [{ field: 'content-encoding', message: 'must be identity (compressed bodies are not accepted)' }],
      });
    }
  });

  it('the per-address bucket counts requests whose cookie or key pair does not verify, not merely those without', async () => {
    const from = address();
    const statuses: number[] = [];
    const send = async (i: number) => {
      const req = t.http.post('/api-keys').set('x-forwarded-for', from).set('content-type', 'application/json');
      if (i % 2 === 0) req.set('cookie', `bm_session=made-up-${i}`);
      else req.set({ 'x-access-key': `ak_made_up_${i}`, 'x-secret-key': 'sk_made_up' });
      const res = await req.send('{}');
      statuses.push(res.status);
      return res;
    };
    // Burst 4 at 1/s: however slow the host, a 429 comes well before 40 requests.
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await send(i);
      if (res.status === 429) refused = res;
    }
    expect(refused?.body).toEqual(LIMITED);
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401]);
    // A signed-in operator at the same address is not refused by it.
    const own = await t.http.post('/api-keys').set('x-forwarded-for', from).set('cookie', operator.cookie).send({});
    expect(own.status).toBe(422);
  });

  it.each([['/Auth/Login'], ['/auth/login/'], ['/AUTH/LOGIN/']])(
    '%s is the login route for the bucket too: counted even with a live session cookie',
    async (path) => {
      const from = address();
      let refused: { status: number; body: unknown; headers: Record<string, string> } | undefined;
      for (let i = 0; i < 40 && !refused; i++) {
        const res = await t.http
          .post(path)
          .set('x-forwarded-for', from)
          .set('cookie', operator.cookie)
          .send({ email: uniqueEmail(), password: 'not the password' });
        if (res.status === 429) refused = res;
        else expect(res.status).toBe(401);
      }
      expect(refused?.body).toEqual(LIMITED);
      expect(refused?.headers['ratelimit-limit']).toBe('4');
    },
  );

  it('bodies being read at once from one address are capped (BODY_PARSES_PER_ADDRESS): the next is refused 429 before its body is read; other addresses and signed-in callers are not', async () => {
    const from = address();
    const url = new URL(t.url);
    // Two unauthenticated uploads that send their headers and a little of the body, then stall.
    const held = [0, 1].map(() => {
      const req = http.request({
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/auth/signup',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': '4096', 'x-forwarded-for': from },
      });
      req.on('error', () => undefined);
      req.write('{"email": "');
      return req;
    });
    try {
      const third = await eventually(
        async () => {
          const res = await t.http.post('/auth/signup').set('x-forwarded-for', from).send({ email: 'x' });
          return res.status === 429 && res.body.message !== LIMITED.message ? res : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(third?.body).toEqual({ statusCode: 429, message: 'Too many request bodies in flight from this address' });
      expect(third?.headers['retry-after']).toBe('1');
      expect((await t.http.post('/auth/signup').set('x-forwarded-for', address()).send({ email: 'x' })).status).toBe(
        422,
      );
      expect(
        (await t.http.post('/api-keys').set('x-forwarded-for', from).set('cookie', operator.cookie).send({})).status,
      ).toBe(422);
    } finally {
      for (const req of held) req.destroy();
    }
    // Once the stalled uploads are gone, the address may send bodies again.
    const after = await eventually(
      async () => {
        const res = await t.http
          .post('/api-keys')
          .set('x-forwarded-for', from)
          .set('cookie', `bm_session=gone`)
          .send({});
        return res.status === 401 ? res : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(after?.status).toBe(401);
  });
});
