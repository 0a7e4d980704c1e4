import { eventually, PASSWORD, signupAndLogin } from '../utils/factories.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

const LIMITED = { statusCode: 429, message: 'Rate limit exceeded' };

/**
 * Issue 29, finding 7: bodies of requests nobody is signed in for were parsed before any per-address limit. A
 * bucket per client address (here 3, refilled at 1/s) is now taken before the body is read. TRUST_PROXY=1: the
 * last X-Forwarded-For entry is the client address.
 */
describe('Security: the per-address bucket ahead of body parsing', () => {
  let t: TestApp;
  let next = 0;
  const address = () => `198.51.100.${++next}`;

  beforeAll(async () => {
    t = await startTestApp({
      TRUST_PROXY: '1',
      // A token every 20 s: however slow this host, an address's burst is not refilled while a test spends it.
      UNAUTHENTICATED_RATE_LIMIT_PER_SECOND: '0.05',
      UNAUTHENTICATED_RATE_LIMIT_BURST: '3',
    });
    // Until its Redis connection is up the limiter lets requests through (it fails open).
    expect(await eventually(async () => (await t.http.get('/health/ready')).status === 200)).toBe(true);
  });
  afterAll(async () => {
    await t?.close();
  });

  const login = (from: string, body: string | object = { email: 'nobody@example.test', password: 'not a password' }) =>
    t.http
      .post('/auth/login')
      .set('x-forwarded-for', from)
      .set('content-type', 'application/json')
      .send(typeof body === 'string' ? body : JSON.stringify(body));

  it('past the burst, a login is answered 429 + Retry-After before its body is read (malformed JSON is not even parsed: 429, not 400); other addresses are not affected', async () => {
    const from = address();
    const first = await Promise.all([login(from), login(from), login(from)]);
    expect(first.map((r) => r.status)).toEqual([401, 401, 401]);
    const refused = await login(from, '{"email": "not json at all');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(LIMITED);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-limit']).toBe('3');
    expect((await login(address(), '{"email": "not json at all')).status).toBe(400);
  });

  it('counts signups (invitation acceptances included), password-reset links and any body sent without credentials; a made-up cookie does not exempt a public route', async () => {
    const from = address();
    const answers = [
      await t.http.post('/auth/signup').set('x-forwarded-for', from).send({ email: 'bad' }),
      await t.http
        .post('/auth/password-reset')
        .set('x-forwarded-for', from)
        .send({ token: 'made-up', newPassword: 'long enough password' }),
      await t.http.post('/api-keys').set('x-forwarded-for', from).send({ wabaId: '1', name: 'x' }),
      await t.http
        .post('/auth/login')
        .set('x-forwarded-for', from)
        .set('cookie', 'bm_session=made-up')
        .send({ email: 'a@b.test', password: 'x' }),
    ];
    expect(answers.map((r) => r.status)).toEqual([422, 422, 401, 429]);
  });

  it('does not count signed-in console requests or Meta’s webhooks; a made-up key pair is counted (issue 37)', async () => {
    const operator = await signupAndLogin(t, 'Bucket Org');
    const from = address();
    for (let i = 0; i < 3; i++) expect((await login(from)).status).toBe(401);
    expect((await login(from)).status).toBe(429);
    expect(
      (await t.http.post('/api-keys').set('x-forwarded-for', from).set('cookie', operator.cookie).send({})).status,
    ).toBe(422);
    expect(
      (
        await t.http
          .post('/messages')
          .set('x-forwarded-for', from)
          .set({ 'x-access-key': 'ak_made_up', 'x-secret-key': 'sk_made_up' })
          .send({})
      ).status,
    ).toBe(429);
    expect(
      (
        await t.http
          .post('/webhooks/whatsapp')
          .set('x-forwarded-for', from)
          .set('x-hub-signature-256', `sha256=${'0'.repeat(64)}`)
          .send({ object: 'x' })
      ).status,
    ).toBe(401);
    // Still refused from that address, still fine with a session elsewhere.
    expect(
      (
        await t.http
          .post('/auth/login')
          .set('x-forwarded-for', from)
          .send({ email: operator.email, password: PASSWORD })
      ).status,
    ).toBe(429);
  });
});
