import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultFixture, type Fixture, type SimTemplate } from '../../simulator/fixture.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/simulator.js';
import { PASSWORD, eventually, uniqueEmail } from '../utils/factories.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { bodyDefinition } from '../utils/template-components.js';
import { accountRow, countRows, rowWhere, rowsWhere } from '../utils/db-rows.js';
import { sql } from 'kysely';

/**
 * The console onboarding of the issue, end to end: real API, real PostgreSQL and Redis, the simulator as
 * the upstream platform. The upstream is reached through a recording proxy so the test can see how many
 * pages a template sync really fetched.
 */

/** Filler templates go first so that the interesting ones (parcel_update…) arrive on the last page. */
const FILLERS = 240;
const FILLER_STATUSES = ['APPROVED', 'PENDING', 'REJECTED'] as const;

function bigTemplateFixture(): Fixture {
  const fixture = defaultFixture();
  const model = fixture.accounts[0]!;
  const fillers: SimTemplate[] = Array.from({ length: FILLERS }, (_, i) => ({
    id: String(1203344556700000 + i),
    name: `filler_${String(i).padStart(3, '0')}`,
    language: 'en_US',
    status: FILLER_STATUSES[i % FILLER_STATUSES.length]!,
    category: 'UTILITY',
    parameter_format: 'POSITIONAL',
    components: [bodyDefinition(`Filler ${i}: {{1}}`, ['x'])],
  }));
  model.templates = [...fillers, ...model.templates];
  return fixture;
}

interface RecordingProxy {
  baseUrl: string;
  requests: Array<{ method: string; path: string }>;
  close(): Promise<void>;
}

/**
 * A transparent HTTP proxy in front of the simulator that records every request. Absolute links in the
 * answers (`paging.next`) are rewritten to the proxy so the client keeps going through it.
 */
async function startRecordingProxy(sim: SimulatorHandle): Promise<RecordingProxy> {
  const target = new URL(sim.url);
  const requests: RecordingProxy['requests'] = [];
  let self = '';
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '' });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            const text = Buffer.concat(body).toString('utf8').split(target.host).join(self);
            const headers = { ...answer.headers };
            delete headers['content-length'];
            delete headers['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(text);
          });
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: `http://${self}/v25.0`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function setCookies(res: { headers: Record<string, unknown> }): string[] {
  return ([] as string[]).concat((res.headers['set-cookie'] as string[] | undefined) ?? []);
}

describe('Console onboarding, end to end', () => {
  let sim: SimulatorHandle;
  let proxy: RecordingProxy;
  let t: TestApp;

  beforeAll(async () => {
    sim = await startSimulator({ appSecret: 'test-app-secret', fixture: bigTemplateFixture(), webhooksEnabled: false });
    proxy = await startRecordingProxy(sim);
    t = await startTestApp({ UPSTREAM_BASE_URL: proxy.baseUrl });
    // The simulator posts a webhook when a template is deleted upstream; send it where startStack would.
    sim.setWebhookUrl(`${t.url}/webhooks/whatsapp`);
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await sim?.close();
  });

  it('signup → login → me → connect → sync → key → revoke → audit → logout', async () => {
    // --- signup: the email is normalised (trimmed, lower-cased) -----------------------------------------
    const email = uniqueEmail();
    const organizationName = `Onboarding Org ${email}`;
    const signup = await t.http
      .post('/auth/signup')
      .send({ email: `  ${email.toUpperCase()} `, password: PASSWORD, organizationName });
    expect(signup.status).toBe(201);
    expect(signup.body).toMatchObject({
      statusCode: 201,
      message: 'Success',
      data: { email, organization: { name: organizationName } },
    });
    expect(JSON.stringify(signup.body)).not.toContain(PASSWORD);
    const operatorId: string = signup.body.data.id;
    const organizationId: string = signup.body.data.organization.id;

    // --- login: HttpOnly, SameSite=Lax, Path=/ session cookie; operator + expiresAt in the body -----------
    const login = await t.http.post('/auth/login').send({ email, password: PASSWORD });
    expect(login.status).toBe(200);
    const sessionCookie = setCookies(login).find((c) => c.startsWith('bm_session='));
    expect(sessionCookie).toBeDefined();
    const attributes = sessionCookie!.split(';').map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=lax', 'path=/']));
    const token = sessionCookie!.split(';')[0]!.slice('bm_session='.length);
    expect(token.length).toBeGreaterThanOrEqual(43); // 32 random bytes, base64url
    expect(login.body.data.operator).toEqual({
      id: operatorId,
      email,
      role: 'owner',
      organization: { id: organizationId, name: organizationName },
      createdAt: expect.any(String),
    });
    const expiresAt = Date.parse(login.body.data.expiresAt);
    expect(expiresAt).toBeGreaterThan(Date.now());
    const cookie = sessionCookie!.split(';')[0]!;
    // Only the hash of the session token is stored.
    const sessions = await rowsWhere(t.db, 'sessions', { operator_id: operatorId });
    expect(sessions).toHaveLength(1);
    expect(JSON.stringify(sessions)).not.toContain(token);

    const me = await t.http.get('/auth/me').set('cookie', cookie);
    expect(me.status).toBe(200);
    expect(me.body.data.operator).toMatchObject({ id: operatorId, email, organization: { id: organizationId } });
    expect(Date.parse(me.body.data.expiresAt)).toBeGreaterThan(Date.now());

    // --- connect a business account: 201, token stored encrypted -----------------------------------------
    const upstream = sim.createAccount({ name: 'Journey Parcel Co' });
    const connect = await t.http
      .post('/business-accounts')
      .set('cookie', cookie)
      .send({ wabaId: upstream.wabaId, accessToken: upstream.accessToken });
    expect(connect.status).toBe(201);
    expect(connect.body.data).toMatchObject({
      wabaId: upstream.wabaId,
      name: 'Journey Parcel Co',
      status: 'connected',
      phoneNumbersSyncedAt: null,
      templatesSyncedAt: null,
      disconnectedAt: null,
    });
    expect(JSON.stringify(connect.body)).not.toContain(upstream.accessToken);
    const { rows: stored } = await sql<{
      access_token_encrypted: string;
    }>`SELECT access_token_encrypted FROM business_accounts WHERE waba_id = ${upstream.wabaId}`.execute(t.db.on());
    expect(stored).toHaveLength(1);
    const column = stored[0]!.access_token_encrypted;
    const secretPart = upstream.accessToken.replace(/^sim-token-/, '');
    for (const form of [
      upstream.accessToken,
      secretPart,
      Buffer.from(upstream.accessToken).toString('base64'),
      Buffer.from(upstream.accessToken).toString('base64url'),
    ]) {
      expect(column).not.toContain(form);
    }
    const listed = await t.http.get('/business-accounts').set('cookie', cookie);
    // Every list answers the same page shape as /api-keys.
    expect(listed.body.data).toEqual({
      items: [expect.objectContaining({ wabaId: upstream.wabaId })],
      page: 1,
      limit: 20,
      total: 1,
      totalPages: 1,
    });

    // --- phone numbers: first sync adds, second updates (no duplicates) -------------------------------
    const base = `/business-accounts/${upstream.wabaId}`;
    const expectedNumbers = upstream.phoneNumbers.map((p) => p.id).sort();
    const firstNumbers = await t.http.post(`${base}/phone-numbers/sync`).set('cookie', cookie);
    expect(firstNumbers.status).toBe(200);
    // A sync answers what changed and when, in the same shape for numbers and templates.
    expect(firstNumbers.body.data).toEqual({
      counts: { added: 3, updated: 0, removed: 0, total: 3 },
      syncedAt: expect.any(String),
    });
    const numbers = await t.http.get(`${base}/phone-numbers`).set('cookie', cookie);
    expect(numbers.status).toBe(200);
    expect(numbers.body.data).toMatchObject({ page: 1, limit: 20, total: 3, totalPages: 1 });
    expect(numbers.body.data.items.map((p: { phoneNumberId: string }) => p.phoneNumberId).sort()).toEqual(
      expectedNumbers,
    );
    const connectedNumber = upstream.phoneNumbers.find((p) => p.status === 'CONNECTED')!;
    expect(numbers.body.data.items).toContainEqual(
      expect.objectContaining({
        phoneNumberId: connectedNumber.id,
        displayPhoneNumber: connectedNumber.display_phone_number,
        status: 'CONNECTED',
        qualityRating: 'GREEN',
        removed: false,
      }),
    );
    const secondNumbers = await t.http.post(`${base}/phone-numbers/sync`).set('cookie', cookie);
    expect(secondNumbers.status).toBe(200);
    expect(secondNumbers.body.data.counts).toEqual({ added: 0, updated: 3, removed: 0, total: 3 });
    const afterResync = await t.http.get(`${base}/phone-numbers`).set('cookie', cookie);
    expect(afterResync.body.data.items.map((p: { phoneNumberId: string }) => p.phoneNumberId).sort()).toEqual(
      expectedNumbers,
    );
    const account = await accountRow(t.db, { wabaId: upstream.wabaId });
    expect(await countRows(t.db, 'phone_numbers', { business_account_id: account.id })).toBe(3);

    // --- templates over 3+ upstream pages ------------------------------------------------------------
    const templatePath = `/v25.0/${upstream.wabaId}/message_templates`;
    const pagesBefore = proxy.requests.filter((r) => r.path.startsWith(templatePath)).length;
    const approved = upstream.templates.filter((tpl) => tpl.status === 'APPROVED');
    const templateSync = await t.http.post(`${base}/templates/sync`).set('cookie', cookie);
    expect(templateSync.status).toBe(200);
    expect(templateSync.body.data).toEqual({
      counts: {
        added: upstream.templates.length,
        updated: 0,
        removed: 0,
        total: upstream.templates.length,
        approved: approved.length,
      },
      syncedAt: expect.any(String),
    });
    const pageRequests = proxy.requests.filter((r) => r.path.startsWith(templatePath)).slice(pagesBefore);
    expect(pageRequests.length).toBeGreaterThanOrEqual(3);
    expect(pageRequests.slice(1).every((r) => new URL(r.path, 'http://x').searchParams.has('after'))).toBe(true);

    const onlyApproved = await t.http.get(`${base}/templates?status=APPROVED&limit=100`).set('cookie', cookie);
    expect(onlyApproved.status).toBe(200);
    expect(onlyApproved.body.data.total).toBe(approved.length);
    expect(onlyApproved.body.data.items).toHaveLength(approved.length);
    expect(
      onlyApproved.body.data.items.every(
        (tpl: { status: string; sendable: boolean }) => tpl.status === 'APPROVED' && tpl.sendable,
      ),
    ).toBe(true);
    const approvedKeys = onlyApproved.body.data.items.map(
      (tpl: { name: string; language: string }) => `${tpl.name}/${tpl.language}`,
    );
    expect(approvedKeys).not.toContain('summer_sale/en_GB');
    expect(approvedKeys).not.toContain('spring_sale/en_US');
    expect(approvedKeys).toContain('filler_000/en_US');
    const all = await t.http.get(`${base}/templates`).set('cookie', cookie);
    expect(all.body.data).toMatchObject({
      page: 1,
      limit: 20,
      total: upstream.templates.length,
      totalPages: Math.ceil(upstream.templates.length / 20),
    });
    expect(all.body.data.items).toHaveLength(Math.min(20, upstream.templates.length));
    // The pages together are every template once.
    const pages = await Promise.all(
      Array.from({ length: all.body.data.totalPages }, (_, i) =>
        t.http.get(`${base}/templates?page=${i + 1}`).set('cookie', cookie),
      ),
    );
    const everyTemplate = pages.flatMap((p) =>
      p.body.data.items.map((tpl: { name: string; language: string }) => `${tpl.name}/${tpl.language}`),
    );
    expect(new Set(everyTemplate).size).toBe(upstream.templates.length);

    // parcel_update (last page): text header {{1}}, body {{1}} {{2}}, URL button {{1}} then a quick reply.
    const parcel = onlyApproved.body.data.items.find(
      (tpl: { name: string; language: string }) => tpl.name === 'parcel_update' && tpl.language === 'en_GB',
    );
    expect(parcel).toBeDefined();
    expect(parcel.parameterCounts).toEqual({
      header: 1,
      body: 2,
      buttons: { '0': 1 },
      names: { header: ['1'], body: ['1', '2'] },
    });
    const photo = onlyApproved.body.data.items.find((tpl: { name: string }) => tpl.name === 'delivery_photo');
    expect(photo.parameterCounts).toMatchObject({ header: 1, body: 1, buttons: {} });
    const named = onlyApproved.body.data.items.find((tpl: { name: string }) => tpl.name === 'welcome_named');
    expect(named).toMatchObject({
      parameterFormat: 'NAMED',
      parameterCounts: { header: 0, body: 2, names: { body: ['first_name', 'company'] } },
    });
    const hello = onlyApproved.body.data.items.find((tpl: { name: string }) => tpl.name === 'hello_world');
    expect(hello.parameterCounts).toMatchObject({ header: 0, body: 0, buttons: {} });

    // A template deleted upstream is marked removed on the next sync; the rest are updated, not duplicated.
    const deleted = await fetch(`${sim.url}/_sim/template-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        wabaId: upstream.wabaId,
        templateName: 'hello_world',
        language: 'en_US',
        event: 'DELETED',
      }),
    });
    expect(deleted.status).toBe(200);
    const resync = await t.http.post(`${base}/templates/sync`).set('cookie', cookie);
    expect(resync.status).toBe(200);
    expect(resync.body.data.counts).toEqual({
      added: 0,
      updated: upstream.templates.length - 1,
      removed: 1,
      total: upstream.templates.length - 1,
      approved: approved.length - 1,
    });
    expect(await countRows(t.db, 'templates', { business_account_id: account.id })).toBe(upstream.templates.length);
    const helloAfter = await t.http.get(`${base}/templates?name=hello_world`).set('cookie', cookie);
    expect(helloAfter.body.data.items).toEqual([
      expect.objectContaining({ name: 'hello_world', removed: true, sendable: false }),
    ]);

    // --- API key pair: prefixes, entropy, the secret only in the creation response -------------------
    const created = await t.http
      .post('/api-keys')
      .set('cookie', cookie)
      .send({ wabaId: upstream.wabaId, name: 'orders-service' });
    expect(created.status).toBe(201);
    const {
      id: keyId,
      accessKey,
      secretKey,
    } = created.body.data as { id: string; accessKey: string; secretKey: string };
    expect(created.body.data).toMatchObject({ name: 'orders-service', wabaId: upstream.wabaId });
    for (const [value, prefix] of [
      [accessKey, 'ak_'],
      [secretKey, 'sk_'],
    ] as const) {
      expect(value.startsWith(prefix)).toBe(true);
      const random = value.slice(prefix.length);
      expect(random).toMatch(/^[A-Za-z0-9_-]+$/); // URL-safe
      expect(random.length).toBeGreaterThanOrEqual(32); // ≥ 24 random bytes in base64url
      expect(Buffer.from(random, 'base64url').length).toBeGreaterThanOrEqual(24);
    }
    expect(accessKey.slice(3)).not.toBe(secretKey.slice(3));
    const secretRandom = secretKey.slice(3);

    const keys = await t.http.get('/api-keys').set('cookie', cookie);
    expect(keys.status).toBe(200);
    expect(keys.body.data).toMatchObject({ page: 1, total: 1, totalPages: 1 });
    expect(keys.body.data.items).toEqual([
      expect.objectContaining({
        id: keyId,
        accessKey,
        name: 'orders-service',
        wabaId: upstream.wabaId,
        revokedAt: null,
      }),
    ]);
    expect(keys.body.data.items[0]).not.toHaveProperty('secretKey');
    expect(JSON.stringify(keys.body)).not.toContain(secretRandom);
    const keyRow = await rowWhere(t.db, 'api_keys', { id: keyId });
    expect(JSON.stringify(keyRow)).not.toContain(secretRandom);

    // --- the pair works until it is revoked, then is refused ---------------------------------------------
    const keyHeaders = { 'x-access-key': accessKey, 'x-secret-key': secretKey };
    const before = await t.http.get('/messages').set(keyHeaders);
    expect(before.status).toBe(200);
    const revoke = await t.http.delete(`/api-keys/${keyId}`).set('cookie', cookie);
    expect(revoke.status).toBe(200);
    expect(revoke.body.data).toMatchObject({ id: keyId, accessKey });
    expect(Date.parse(revoke.body.data.revokedAt)).not.toBeNaN();
    // Refused within ~2 s (API_KEY_CACHE_TTL_MS on other API processes; at once on this one).
    const refused = await eventually(
      async () => {
        const res = await t.http.get('/messages').set(keyHeaders);
        return res.status === 401 ? res : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    expect(refused?.body).toEqual({ statusCode: 401, message: 'Invalid API key' });
    const keysAfter = await t.http.get('/api-keys').set('cookie', cookie);
    expect(keysAfter.body.data.items[0].revokedAt).not.toBeNull();

    // --- audit log: newest first, paginated, no secrets ----------------------------------------------
    const audit = await t.http.get('/audit-log?limit=100').set('cookie', cookie);
    expect(audit.status).toBe(200);
    const actions = audit.body.data.items.map((e: { action: string }) => e.action);
    expect(actions).toEqual([
      'api_key.revoked',
      'api_key.created',
      'templates.synced',
      'templates.synced',
      'phone_numbers.synced',
      'phone_numbers.synced',
      'business_account.connected',
      'operator.signed_in',
    ]);
    const times = audit.body.data.items.map((e: { createdAt: string }) => Date.parse(e.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(audit.body.data.items.every((e: { operatorEmail: string }) => e.operatorEmail === email)).toBe(true);
    expect(audit.body.data.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'api_key.created', targetType: 'api_key', targetId: keyId }),
        expect.objectContaining({ action: 'api_key.revoked', targetType: 'api_key', targetId: keyId }),
        expect.objectContaining({
          action: 'business_account.connected',
          targetType: 'business_account',
          targetId: upstream.wabaId,
        }),
      ]),
    );
    expect(JSON.stringify(audit.body)).not.toContain(secretRandom);
    expect(JSON.stringify(audit.body)).not.toContain(upstream.accessToken);
    const page1 = await t.http.get('/audit-log?page=1&limit=3').set('cookie', cookie);
    const page3 = await t.http.get('/audit-log?page=3&limit=3').set('cookie', cookie);
    expect(page1.body.data).toMatchObject({ page: 1, limit: 3, total: 8, totalPages: 3 });
    expect(page1.body.data.items.map((e: { action: string }) => e.action)).toEqual(actions.slice(0, 3));
    expect(page3.body.data.items.map((e: { action: string }) => e.action)).toEqual(actions.slice(6));

    // --- logout: the cookie is cleared and the session refused ---------------------------------------
    const logout = await t.http.post('/auth/logout').set('cookie', cookie);
    expect(logout.status).toBe(200);
    expect(logout.body.data).toEqual({ loggedOut: true });
    const cleared = setCookies(logout).find((c) => c.startsWith('bm_session='));
    expect(cleared).toBeDefined();
    expect(cleared).toMatch(/expires=Thu, 01 Jan 1970/i);
    for (const [method, path] of [
      ['get', '/auth/me'],
      ['get', '/business-accounts'],
      ['get', '/api-keys'],
    ] as const) {
      const after = await t.http[method](path).set('cookie', cookie);
      expect(after.status).toBe(401);
      expect(after.body).toEqual({ statusCode: 401, message: 'Session expired or invalid' });
    }
  }, 180_000); // one long journey: give it room on a loaded machine
});
