import { randomBytes } from 'node:crypto';
import { startStack, type Stack } from '../utils/stack.js';
import {
  createKey,
  eventually,
  helloWorld,
  onboard,
  recipient,
  type KeyPair,
  type Tenant,
} from '../utils/factories.js';

const upstreamSends = (stack: Stack, t: Tenant) => stack.sim.sends().filter((s) => s.wabaId === t.account.wabaId);

/** The contract's 401 (message `API key headers missing`), with `errors` naming each missing header. */
const headersMissing = (...missing: Array<'x-access-key' | 'x-secret-key'>) => ({
  statusCode: 401,
  message: 'API key headers missing',
  errors: missing.map((field) => ({ field, message: `${field} header is required` })),
});
const HEADERS_MISSING = headersMissing('x-access-key', 'x-secret-key');
const INVALID_KEY = { statusCode: 401, message: 'Invalid API key' };

describe('API key pair authentication on /messages', () => {
  let stack: Stack;
  let t: Tenant;

  /** The four routes that accept a key pair, each called with `headers`. */
  const keyRoutes = (headers: Record<string, string>, tenant: Tenant = t) =>
    [
      stack.http.post('/messages').set(headers).send(helloWorld(tenant, recipient())),
      stack.http.get('/messages').set(headers),
      stack.http.get('/messages/1').set(headers),
      stack.http.get('/messages/analytics').set(headers),
    ] as const;

  async function expectAll401(headers: Record<string, string>, body: object, tenant: Tenant = t) {
    const before = upstreamSends(stack, tenant).length;
    for (const res of await Promise.all(keyRoutes(headers, tenant))) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual(body);
    }
    expect(upstreamSends(stack, tenant).length).toBe(before);
  }

  beforeAll(async () => {
    stack = await startStack();
    t = await onboard(stack, 'Auth Org');
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('accepts the key pair on all four routes', async () => {
    const [send, list, one, analytics] = await Promise.all(keyRoutes(t.key.headers));
    expect(send.status).toBe(200);
    expect(list.status).toBe(200);
    expect(one.status).toBe(404); // authenticated; message 1 is not this account's
    expect(analytics.status).toBe(200);
  });

  it('answers 401 "API key headers missing", errors naming the missing header(s), when either header (or both) is missing', async () => {
    await expectAll401({}, HEADERS_MISSING);
    await expectAll401({ 'x-access-key': t.key.accessKey }, headersMissing('x-secret-key'));
    await expectAll401({ 'x-secret-key': t.key.secretKey }, headersMissing('x-access-key'));
    await expectAll401({ 'x-access-key': '', 'x-secret-key': t.key.secretKey }, headersMissing('x-access-key'));
  });

  it('answers an Authorization: Bearer header (what most APIs take) with 401 naming x-access-key and x-secret-key, and saying Bearer is not used', async () => {
    const why = 'header is required (Authorization: Bearer is not used; send x-access-key and x-secret-key)';
    for (const token of [t.key.secretKey, `${t.key.accessKey}:${t.key.secretKey}`]) {
      await expectAll401(
        { authorization: `Bearer ${token}` },
        {
          statusCode: 401,
          message: 'API key headers missing',
          errors: [
            { field: 'x-access-key', message: `x-access-key ${why}` },
            { field: 'x-secret-key', message: `x-secret-key ${why}` },
          ],
        },
      );
    }
  });

  it('answers 401 "Invalid API key" for an unknown access key or a wrong secret', async () => {
    await expectAll401(
      { 'x-access-key': `ak_${randomBytes(24).toString('hex')}`, 'x-secret-key': t.key.secretKey },
      INVALID_KEY,
    );
    await expectAll401(
      { 'x-access-key': t.key.accessKey, 'x-secret-key': `sk_${randomBytes(24).toString('hex')}` },
      INVALID_KEY,
    );
    // The halves swapped, and a secret that is the right one with a character changed.
    await expectAll401({ 'x-access-key': t.key.secretKey, 'x-secret-key': t.key.accessKey }, INVALID_KEY);
    const altered = t.key.secretKey.slice(0, -1) + (t.key.secretKey.endsWith('a') ? 'b' : 'a');
    await expectAll401({ 'x-access-key': t.key.accessKey, 'x-secret-key': altered }, INVALID_KEY);
  });

  it('refuses a key revoked in the console from its next request on', async () => {
    const key = await createKey(stack, t.operator, t.account.wabaId, 'to revoke');
    expect((await stack.http.get('/messages').set(key.headers)).status).toBe(200);
    const revoked = await stack.http.delete(`/api-keys/${key.id}`).set('cookie', t.operator.cookie);
    expect(revoked.status).toBe(200);
    await expectAll401(key.headers, INVALID_KEY);
    // The account's other key still works.
    expect((await stack.http.get('/messages').set(t.key.headers)).status).toBe(200);
  });

  it('refuses the keys of a business account disconnected in the console', async () => {
    const tenant = await onboard(stack, 'Disconnect Org');
    const spare = await createKey(stack, tenant.operator, tenant.account.wabaId, 'spare');
    expect(
      (await stack.http.post('/messages').set(tenant.key.headers).send(helloWorld(tenant, recipient()))).status,
    ).toBe(200);

    const res = await stack.http
      .delete(`/business-accounts/${tenant.account.wabaId}`)
      .set('cookie', tenant.operator.cookie);
    expect(res.status).toBe(200);
    // Key lookups are cached per process for API_KEY_CACHE_TTL_MS (1 s by default).
    const status = await eventually(
      async () => {
        const r = await stack.http.get('/messages').set(tenant.key.headers);
        return r.status === 401 ? r.status : null;
      },
      { timeoutMs: 15_000 },
    );
    expect(status).toBe(401);
    await expectAll401(tenant.key.headers, INVALID_KEY, tenant);
    await expectAll401(spare.headers, INVALID_KEY, tenant);
  });

  it('refuses a console session cookie on the key routes', async () => {
    const cookie = { cookie: t.operator.cookie };
    await expectAll401(cookie, HEADERS_MISSING);
  });

  it('refuses a key pair on console routes', async () => {
    const routes = [
      stack.http.get('/business-accounts').set(t.key.headers),
      stack.http.get(`/business-accounts/${t.account.wabaId}`).set(t.key.headers),
      stack.http.get('/api-keys').set(t.key.headers),
      stack.http.post('/api-keys').set(t.key.headers).send({ wabaId: t.account.wabaId, name: 'sneaky' }),
      stack.http.post(`/business-accounts/${t.account.wabaId}/templates/sync`).set(t.key.headers),
      stack.http.delete(`/business-accounts/${t.account.wabaId}`).set(t.key.headers),
      stack.http.get('/webhooks/events').query({ wabaId: t.account.wabaId }).set(t.key.headers),
      stack.http.get(`/business-accounts/${t.account.wabaId}/messages`).set(t.key.headers),
    ];
    for (const res of await Promise.all(routes)) {
      expect(res.status).toBe(401);
      expect(res.body.statusCode).toBe(401);
    }
    // Nothing happened: the account is still connected and its key still works.
    expect((await stack.http.get('/messages').set(t.key.headers)).status).toBe(200);
    const keys = await stack.http.get('/api-keys').set('cookie', t.operator.cookie);
    expect(keys.body.data.items.map((k: { name: string }) => k.name)).not.toContain('sneaky');
  });
});

describe('Tenant isolation between business accounts', () => {
  let stack: Stack;
  let a: Tenant;
  let b: Tenant;
  let bMessageId: number;
  let aMessageId: number;

  beforeAll(async () => {
    stack = await startStack();
    [a, b] = await Promise.all([onboard(stack, 'Org A'), onboard(stack, 'Org B')]);
    const sentA = await stack.http.post('/messages').set(a.key.headers).send(helloWorld(a, recipient()));
    const sentB = await stack.http.post('/messages').set(b.key.headers).send(helloWorld(b, recipient()));
    expect([sentA.status, sentB.status]).toEqual([200, 200]);
    aMessageId = sentA.body.data.id;
    bMessageId = sentB.body.data.id;
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("never lists another account's messages", async () => {
    const listA = await stack.http.get('/messages').set(a.key.headers);
    expect(listA.body.data.items.map((m: { id: number }) => m.id)).toEqual([aMessageId]);
    expect(listA.body.data.total).toBe(1);
    // Filtering on B's number or recipient does not reach B's rows either.
    const byNumber = await stack.http
      .get('/messages')
      .query({ phoneNumberId: b.account.phoneNumberId })
      .set(a.key.headers);
    expect(byNumber.body.data).toMatchObject({ items: [], total: 0 });
  });

  it("answers 404 Message not found for another account's message", async () => {
    const res = await stack.http.get(`/messages/${bMessageId}`).set(a.key.headers);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, message: 'Message not found' });
    expect((await stack.http.get(`/messages/${bMessageId}`).set(b.key.headers)).status).toBe(200);
  });

  it("counts only the account's own messages in analytics", async () => {
    const res = await stack.http.get('/messages/analytics').set(a.key.headers);
    expect(res.body.data.totals).toMatchObject({ total: 1, sent: 1 });
  });

  it("refuses to send from another account's phone number, with no upstream call", async () => {
    const before = stack.sim.sends().length;
    const res = await stack.http
      .post('/messages')
      .set(a.key.headers)
      .send(helloWorld(a, recipient(), { phoneNumberId: b.account.phoneNumberId }));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: 'phoneNumberId', message: expect.any(String) }]);
    expect(stack.sim.sends().length).toBe(before);
  });

  it("does not use another account's templates", async () => {
    // A's parcel_update (en_US) is deleted upstream and A re-syncs; B still has its own copy.
    const deleted = await fetch(`${stack.sim.url}/_sim/template-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        wabaId: a.account.wabaId,
        templateName: 'parcel_update',
        language: 'en_US',
        event: 'DELETED',
      }),
    });
    expect(deleted.status).toBe(200);
    const sync = await stack.http
      .post(`/business-accounts/${a.account.wabaId}/templates/sync`)
      .set('cookie', a.operator.cookie);
    expect(sync.status).toBe(200);

    const components = [
      { type: 'header', parameters: [{ type: 'text', text: 'ORD-1' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Sam' },
          { type: 'text', text: 'ORD-1' },
        ],
      },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'ORD-1' }] },
    ];
    const template = { templateName: 'parcel_update', templateLanguage: 'en_US', components };
    const before = upstreamSends(stack, a).length;
    const fromA = await stack.http
      .post('/messages')
      .set(a.key.headers)
      .send(helloWorld(a, recipient(), template));
    expect(fromA.status).toBe(422);
    // en_GB is still synced for A, so the missing translation is what is named.
    expect(fromA.body.errors).toEqual([{ field: 'templateLanguage', message: expect.stringContaining('en_GB') }]);
    expect(upstreamSends(stack, a).length).toBe(before);

    const fromB = await stack.http
      .post('/messages')
      .set(b.key.headers)
      .send(helloWorld(b, recipient(), template));
    expect(fromB.status).toBe(200);
  });
});

describe('Rate limit per key pair', () => {
  let stack: Stack;
  let a: Tenant;
  /** A second key pair of the same business account: the limit is per key pair, not per account. */
  let b: KeyPair;

  beforeAll(async () => {
    // A token every 5 s: however slow this host, a burst is not refilled while it is being answered.
    stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '0.2', RATE_LIMIT_BURST: '5' } });
    a = await onboard(stack, 'Limited Org');
    b = await createKey(stack, a.operator, a.account.wabaId, 'second pair');
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('sends RateLimit headers, refuses the 6th rapid request with 429 and Retry-After, and leaves other pairs alone', async () => {
    // Six requests at once on a fresh bucket of 5: five pass (3 sends, 2 reads), one is refused.
    const before = upstreamSends(stack, a).length;
    const burst = await Promise.all([
      ...[1, 2, 3].map(() => stack.http.post('/messages').set(a.key.headers).send(helloWorld(a, recipient()))),
      stack.http.get('/messages').set(a.key.headers),
      stack.http.get('/messages/analytics').set(a.key.headers),
      stack.http.get('/messages').set(a.key.headers),
    ]);
    expect(burst.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429]);
    const passed = burst.filter((r) => r.status === 200);
    for (const r of burst) {
      expect(r.headers['ratelimit-limit']).toBe('5');
      expect(Number(r.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    }
    // Each accepted request saw one token fewer than the one before it.
    expect(passed.map((r) => r.headers['ratelimit-remaining']).sort()).toEqual(['0', '1', '2', '3', '4']);
    const refused = burst.find((r) => r.status === 429)!;
    expect(refused.body).toEqual({ statusCode: 429, message: 'Rate limit exceeded' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    // A send refused by the limit never reaches the upstream platform.
    const sendsAccepted = burst.slice(0, 3).filter((r) => r.status === 200).length;
    expect(upstreamSends(stack, a).length).toBe(before + sendsAccepted);

    // Another key pair (of the same account) has its own full bucket.
    const other = await Promise.all([1, 2].map(() => stack.http.get('/messages').set(b.headers)));
    expect(other.map((r) => r.status)).toEqual([200, 200]);
    expect(other.map((r) => r.headers['ratelimit-remaining']).sort()).toEqual(['3', '4']);

    // After Retry-After the key may send again.
    await new Promise((r) => setTimeout(r, Number(refused.headers['retry-after']) * 1000));
    expect((await stack.http.get('/messages').set(a.key.headers)).status).toBe(200);
  });
});

describe('Rate limit per business account, and a cap on key pairs per account (issue 29, finding 6)', () => {
  let stack: Stack;
  let a: Tenant;
  let other: Tenant;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        // A token every 20 s: the nine requests below are answered well within it, however slow this host.
        RATE_LIMIT_PER_SECOND: '0.05',
        RATE_LIMIT_BURST: '5',
        ACCOUNT_RATE_LIMIT_PER_SECOND: '0.05',
        ACCOUNT_RATE_LIMIT_BURST: '8',
        API_KEYS_MAX_PER_ACCOUNT: '3',
      },
    });
    [a, other] = await Promise.all([onboard(stack, 'Many Keys Org'), onboard(stack, 'Neighbour Org')]);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('caps active key pairs per business account (409), with room again once one is revoked', async () => {
    const created = await Promise.all(
      [1, 2, 3].map((n) =>
        stack.http
          .post('/api-keys')
          .set('cookie', a.operator.cookie)
          .send({ wabaId: a.account.wabaId, name: `pair ${n}` }),
      ),
    );
    // The onboarding pair is the first of three.
    expect(created.map((r) => r.status).sort()).toEqual([201, 201, 409]);
    const refused = created.find((r) => r.status === 409)!;
    expect(refused.body).toEqual({
      statusCode: 409,
      message: 'At most 3 active key pairs per business account (API_KEYS_MAX_PER_ACCOUNT); revoke one first',
    });
    const one = created.find((r) => r.status === 201)!.body.data as { id: string };
    expect((await stack.http.delete(`/api-keys/${one.id}`).set('cookie', a.operator.cookie)).status).toBe(200);
    expect((await createKey(stack, a.operator, a.account.wabaId, 'after revoking')).accessKey).toMatch(/^ak_/);
  });

  it('evaluates the account’s bucket beside each pair’s: more pairs do not add up to more requests; other accounts are not affected', async () => {
    // Back to the onboarding pair alone (the test above made others), then two more pairs of the same account.
    await stack.db
      .on()
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('business_account_id', '=', a.account.businessAccountId)
      .where('revoked_at', 'is', null)
      .where('access_key', '!=', a.key.accessKey)
      .execute();
    const k2 = await createKey(stack, a.operator, a.account.wabaId, 'second pair');
    const k3 = await createKey(stack, a.operator, a.account.wabaId, 'third pair');
    // 5 on the first pair (its whole bucket), then 3 on the second: the account's 8.
    const first = await Promise.all(Array.from({ length: 5 }, () => stack.http.get('/messages').set(a.key.headers)));
    expect(first.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const second = [];
    for (let i = 0; i < 4; i++) second.push(await stack.http.get('/messages').set(k2.headers));
    expect(second.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    const refused = second[3]!;
    expect(refused.body).toEqual({ statusCode: 429, message: 'Rate limit exceeded' });
    expect(refused.headers['ratelimit-limit']).toBe('8');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // A third pair of the same account is refused too; another account's pair is not.
    expect((await stack.http.post('/messages').set(k3.headers).send(helloWorld(a, recipient()))).status).toBe(429);
    expect(
      (await stack.http.post('/messages').set(other.key.headers).send(helloWorld(other, recipient()))).status,
    ).toBe(200);
  });
});
