import { PASSWORD, uniqueEmail } from '../utils/factories.js';
import { startAppWithOwnRedis, type AppWithOwnRedis } from '../utils/disposable-redis.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { countRows } from '../utils/db-rows.js';

const TOO_MANY = { statusCode: 429, message: 'Too many failed login attempts; try again later' };
const BURST = 100;

/**
 * Issue 12, finding 1: the login throttle against concurrency and lockouts. The API runs behind one
 * (simulated) proxy, TRUST_PROXY=1: supertest's loopback connection is the proxy and the last
 * X-Forwarded-For entry is the client address the limits count. Every answer of a burst is either a 401
 * (the password was verified) or a 429 (it was not), so counting the 401s counts the verifications.
 */
describe('Console login throttle (TRUST_PROXY=1)', () => {
  let t: TestApp;
  let next = 0;
  /** A fresh documentation address (198.18.0.0/15) per call, so tests never share an address budget. */
  const address = () => `198.18.${Math.floor(++next / 250)}.${(next % 250) + 1}`;

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1' });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function operator(): Promise<string> {
    const email = uniqueEmail();
    const res = await t.http
      .post('/auth/signup')
      .set('x-forwarded-for', address())
      .send({ email, password: PASSWORD, organizationName: 'Throttle Org' });
    expect(res.status).toBe(201);
    return email;
  }

  const login = (email: string, password: string, from: string) =>
    t.http.post('/auth/login').set('x-forwarded-for', from).send({ email, password });

  function tally(responses: Array<{ status: number; body: unknown; headers: Record<string, string> }>) {
    const count = (status: number) => responses.filter((r) => r.status === status).length;
    for (const r of responses.filter((r) => r.status === 429)) {
      expect(r.body).toEqual(TOO_MANY);
      const retryAfter = Number(r.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(t.config.loginWindowSeconds);
    }
    return { verified: count(401), refused: count(429), other: responses.length - count(401) - count(429) };
  }

  it(`verifies at most LOGIN_MAX_FAILURES passwords of ${BURST} concurrent wrong ones for one email from one address; then the right one is refused too`, async () => {
    const email = await operator();
    const attacker = address();
    const burst = await Promise.all(
      Array.from({ length: BURST }, (_, i) => login(email, `wrong password ${i}`, attacker)),
    );
    expect(tally(burst)).toEqual({
      verified: t.config.loginMaxFailures,
      refused: BURST - t.config.loginMaxFailures,
      other: 0,
    });

    const right = await login(email, PASSWORD, attacker);
    expect(right.status).toBe(429);
    expect(right.headers['set-cookie']).toBeUndefined();
  });

  it("an attacker's failures from one address do not lock the owner's correct login from another", async () => {
    const email = await operator();
    const attacker = address();
    const burst = await Promise.all(Array.from({ length: BURST }, (_, i) => login(email, `guess ${i}`, attacker)));
    expect(tally(burst).verified).toBe(t.config.loginMaxFailures);
    // Sequential failures after the burst change nothing either.
    for (let i = 0; i < 5; i++) expect((await login(email, `guess again ${i}`, attacker)).status).toBe(429);

    const owner = await login(email, PASSWORD, address());
    expect(owner.status).toBe(200);
    expect(owner.headers['set-cookie']).toBeDefined();
  });

  it('verifies at most LOGIN_EMAIL_MAX_FAILURES wrong passwords for one email however many addresses they come from', async () => {
    const email = await operator();
    const burst = await Promise.all(
      Array.from({ length: BURST }, (_, i) => login(email, `distributed ${i}`, address())),
    );
    expect(tally(burst)).toEqual({
      verified: t.config.loginEmailMaxFailures,
      refused: BURST - t.config.loginEmailMaxFailures,
      other: 0,
    });
    expect((await login(email, PASSWORD, address())).status).toBe(429);
  });

  it('failures from four addresses do not lock the operator out of an address it signed in from before (issue 29, finding 7); a new address is still refused', async () => {
    const email = await operator();
    const office = address();
    expect((await login(email, PASSWORD, office)).status).toBe(200);
    const attackers = [address(), address(), address(), address()];
    const failures = await Promise.all(
      attackers.flatMap((from) =>
        Array.from({ length: t.config.loginMaxFailures }, (_, i) => login(email, `botnet ${i}`, from)),
      ),
    );
    expect(tally(failures)).toEqual({ verified: t.config.loginEmailMaxFailures, refused: 0, other: 0 });
    expect((await login(email, PASSWORD, address())).status).toBe(429);

    const owner = await login(email, PASSWORD, office);
    expect(owner.status).toBe(200);
    // The known address keeps its own (email, address) budget: guessing from it still stops after LOGIN_MAX_FAILURES.
    const guesses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => login(email, `from the office ${i}`, office)),
    );
    expect(tally(guesses)).toEqual({
      verified: t.config.loginMaxFailures,
      refused: 10 - t.config.loginMaxFailures,
      other: 0,
    });
  });

  it('verifies at most LOGIN_ADDRESS_MAX_FAILURES wrong passwords from one address over many emails', async () => {
    const attacker = address();
    const burst = await Promise.all(
      Array.from({ length: BURST }, () => login(uniqueEmail(), 'credential stuffing', attacker)),
    );
    expect(tally(burst)).toEqual({
      verified: t.config.loginAddressMaxFailures,
      refused: BURST - t.config.loginAddressMaxFailures,
      other: 0,
    });
  });

  it('successful logins do not use up the budgets', async () => {
    const email = await operator();
    const from = address();
    for (let i = 0; i < t.config.loginMaxFailures + 2; i++)
      expect((await login(email, PASSWORD, from)).status).toBe(200);
    for (let i = 0; i < t.config.loginMaxFailures; i++)
      expect((await login(email, 'not it at all', from)).status).toBe(401);
    expect((await login(email, 'not it at all', from)).status).toBe(429);
  });

  it('counts an IPv6 client by its /64: rotating addresses inside it buys no new attempts', async () => {
    const email = await operator();
    const prefix = `2001:db8:${next++}:1`;
    const statuses: number[] = [];
    for (let i = 1; i <= t.config.loginMaxFailures + 3; i++)
      statuses.push((await login(email, 'rotating', `${prefix}::${i.toString(16)}`)).status);
    expect(statuses).toEqual([...Array<number>(t.config.loginMaxFailures).fill(401), 429, 429, 429]);
    // Another /64 is another client: the owner still logs in from there.
    expect((await login(email, PASSWORD, `2001:db8:${next++}:2::1`)).status).toBe(200);
  });

  it('counts the address the one trusted proxy saw, whatever the client wrote before it in X-Forwarded-For', async () => {
    const client = address();
    const limit = t.config.loginAddressMaxFailures;
    for (let i = 0; i < limit; i++) {
      const spoofed = `10.${i}.0.1, ${address()}, ${client}`;
      expect((await login(uniqueEmail(), 'spoofing', spoofed)).status).toBe(401);
    }
    const res = await login(uniqueEmail(), 'spoofing', `10.200.0.1, ${client}`);
    expect(res.status).toBe(429);
  });
});

describe('Console login and signup when Redis is unreachable', () => {
  let app: AppWithOwnRedis;

  beforeAll(async () => {
    app = await startAppWithOwnRedis();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('refuse with 503 + Retry-After rather than verify or create uncounted (fail closed)', async () => {
    const { t } = app;
    const email = uniqueEmail();
    expect(
      (await t.http.post('/auth/signup').send({ email, password: PASSWORD, organizationName: 'Redis Down Org' }))
        .status,
    ).toBe(201);
    await app.stopRedis();

    const login = await t.http.post('/auth/login').send({ email, password: PASSWORD });
    expect(login.status).toBe(503);
    expect(login.body).toEqual({ statusCode: 503, message: 'Login is temporarily unavailable; try again shortly' });
    expect(login.headers['retry-after']).toBe('5');
    expect(login.headers['set-cookie']).toBeUndefined();

    const other = uniqueEmail();
    const signup = await t.http
      .post('/auth/signup')
      .send({ email: other, password: PASSWORD, organizationName: 'Redis Down Org 2' });
    expect(signup.status).toBe(503);
    expect(signup.body).toEqual({ statusCode: 503, message: 'Signup is temporarily unavailable; try again shortly' });
    expect(await countRows(t.db, 'operators', { email: other })).toBe(0);
  });
});
