import { randomBytes, randomInt } from 'node:crypto';
import type { CreatedAccount } from '../../simulator/store.js';
import type { SyncedPhoneNumber } from '../../src/accounts/phone-numbers/phone-numbers.repository.js';
import type { SyncedTemplate } from '../../src/accounts/templates/templates.repository.js';
import type { DeliveryStatus } from '../../src/webhooks/deliveries/dto/deliveries.dto.js';
import type { IncomingDelivery } from '../../src/webhooks/deliveries/webhook-deliveries.repository.js';
import type { EventRow } from '../../src/events/events.repository.js';
import type { Prisma } from '../../src/generated/prisma/client.js';
import type { PendingMessage } from '../../src/messages/messages.repository.js';
import { AppConfig } from '../../src/core/config/app-config.js';
import { Db } from '../../src/core/db/db.js';
import { PrismaService, withNumberId } from '../../src/core/prisma/prisma.service.js';
import type { Stack } from './stack.js';
import type { TestApp } from './test-app.js';
import { testEnv } from './test-env.js';

export const PASSWORD = 'correct horse battery staple';

export interface Operator {
  email: string;
  cookie: string;
  organizationId: string;
  operatorId: string;
}

export const uniqueEmail = () => `op-${randomBytes(6).toString('hex')}@example.test`;

/** A fresh organization with its first operator, logged in. */
export async function signupAndLogin(
  t: TestApp,
  organizationName = 'Test Org',
  email = uniqueEmail(),
): Promise<Operator> {
  const signup = await t.http.post('/auth/signup').send({ email, password: PASSWORD, organizationName });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${JSON.stringify(signup.body)}`);
  const { cookie } = await loginAs(t, email);
  return { email, cookie, organizationId: signup.body.data.organization.id, operatorId: signup.body.data.id };
}

/** Another operator of `owner`'s organization with `role`: invited by the owner, signed up with the link, logged in. */
export async function joinOrganization(
  t: TestApp,
  owner: Operator,
  role: 'owner' | 'admin' | 'member',
  email = uniqueEmail(),
): Promise<Operator> {
  const invitation = await t.http.post('/invitations').set('cookie', owner.cookie).send({ email, role });
  if (invitation.status !== 201)
    throw new Error(`invitation failed: ${invitation.status} ${JSON.stringify(invitation.body)}`);
  const signup = await t.http
    .post('/auth/signup')
    .send({ email, password: PASSWORD, inviteToken: invitation.body.data.token });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${JSON.stringify(signup.body)}`);
  return { ...(await loginAs(t, email)), organizationId: owner.organizationId, operatorId: signup.body.data.id };
}

/** A new session of an existing operator (another device). */
export async function loginAs(
  t: TestApp,
  email: string,
  password = PASSWORD,
): Promise<Pick<Operator, 'email' | 'cookie'>> {
  const login = await t.http.post('/auth/login').send({ email, password });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  return {
    email,
    cookie: ([] as string[])
      .concat(login.headers['set-cookie'] ?? [])
      .map((c) => c.split(';')[0])
      .join('; '),
  };
}

/** A business account of a tenant: Meta's id, ours, and the number its messages go out from. */
export interface TenantAccount {
  wabaId: string;
  businessAccountId: string;
  phoneNumberId: string;
}

/** A simulator business account connected in the console (phoneNumberId: its CONNECTED number). */
export interface ConnectedAccount extends TenantAccount {
  accessToken: string;
  /** The simulator's own record of the account (its numbers and templates). */
  sim: CreatedAccount;
}

/** A new simulator business account, connected in the console by `operator`. */
export async function connectAccount(stack: Stack, operator: Operator): Promise<ConnectedAccount> {
  const sim = stack.sim.createAccount();
  const res = await stack.http
    .post('/business-accounts')
    .set('cookie', operator.cookie)
    .send({ wabaId: sim.wabaId, accessToken: sim.accessToken });
  if (res.status !== 201) throw new Error(`connect failed: ${res.status} ${JSON.stringify(res.body)}`);
  const connected = sim.phoneNumbers.find((p) => p.status === 'CONNECTED');
  if (!connected) throw new Error('simulator account has no CONNECTED number');
  return {
    wabaId: sim.wabaId,
    businessAccountId: res.body.data.id,
    accessToken: sim.accessToken,
    phoneNumberId: connected.id,
    sim,
  };
}

export async function syncAll(stack: Stack, operator: Operator, wabaId: string): Promise<void> {
  for (const path of ['phone-numbers', 'templates']) {
    const res = await stack.http.post(`/business-accounts/${wabaId}/${path}/sync`).set('cookie', operator.cookie);
    if (res.status !== 200) throw new Error(`${path} sync failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

export interface KeyPair {
  id: string;
  accessKey: string;
  secretKey: string;
  headers: { 'x-access-key': string; 'x-secret-key': string };
}

export async function createKey(t: TestApp, operator: Operator, wabaId: string, name = 'test key'): Promise<KeyPair> {
  const res = await t.http.post('/api-keys').set('cookie', operator.cookie).send({ wabaId, name });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  const { id, accessKey, secretKey } = res.body.data;
  return { id, accessKey, secretKey, headers: { 'x-access-key': accessKey, 'x-secret-key': secretKey } };
}

/** A tenant, as every test sees one: an organization's logged-in operator, one business account of it, a key pair of that account. */
export interface Tenant {
  operator: Operator;
  account: TenantAccount;
  key: KeyPair;
}

/** A tenant onboarded against the simulator (onboard): its account is a simulator account. */
export interface OnboardedTenant extends Tenant {
  account: ConnectedAccount;
}

/** The spec's onboarding in one call: signup, login, connect, sync numbers and templates, create a key. */
export async function onboard(stack: Stack, organizationName = 'Test Org'): Promise<OnboardedTenant> {
  const operator = await signupAndLogin(stack, organizationName);
  const account = await connectAccount(stack, operator);
  await syncAll(stack, operator, account.wabaId);
  const key = await createKey(stack, operator, account.wabaId);
  return { operator, account, key };
}

/**
 * A tenant without the simulator (webhook tests: Meta is the test itself): a real signup and login, a business account
 * row (connected, with a token nobody can use) with a random number, and a key pair of it.
 */
export async function createTenant(t: TestApp, opts: { wabaId?: string } = {}): Promise<Tenant> {
  const operator = await signupAndLogin(t, 'Webhook Test Co');
  const wabaId = opts.wabaId ?? metaId();
  const row = await t.prisma.businessAccount.create({
    data: {
      organizationId: operator.organizationId,
      wabaId,
      name: `Test WABA ${wabaId}`,
      accessTokenEncrypted: 'not-a-real-token',
    },
  });
  const key = await createKey(t, operator, wabaId);
  return { operator, account: { wabaId, businessAccountId: row.id, phoneNumberId: metaId() }, key };
}

/** A UK mobile number the simulator treats as a normal recipient (accepted, then sent → delivered → read). */
export const recipient = () => `4477${randomInt(10_000_000, 99_999_999)}`;

/** The body of POST /messages for the simulator's approved `hello_world` (en_US) template. */
export const helloWorld = (t: Tenant, to: string, extra: Record<string, unknown> = {}) => ({
  phoneNumberId: t.account.phoneNumberId,
  to,
  type: 'template',
  templateName: 'hello_world',
  templateLanguage: 'en_US',
  ...extra,
});

/** POST to one of the simulator's control routes (`/_sim/<path>`); anything but 200 throws with the answer. */
export async function simControl(stack: Stack, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${stack.sim.url}/_sim/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`simulator ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/** Has the simulator post one signed status webhook, in Meta's format, carrying these statuses in order. */
export async function postSimStatuses(stack: Stack, t: Tenant, statuses: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(`${stack.sim.url}/_sim/statuses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wabaId: t.account.wabaId, phoneNumberId: t.account.phoneNumberId, statuses }),
  });
  if (res.status !== 200) throw new Error(`the simulator refused the statuses: ${res.status} ${await res.text()}`);
}

/** Polls until `probe` returns a truthy value (or the time is up) and returns the last value. */
export async function eventually<T>(probe: () => Promise<T>, { timeoutMs = 10000, intervalMs = 100 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!value && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, intervalMs));
    value = await probe();
  }
  return value;
}

// ---- Rows straight into PostgreSQL, for the repository tests (test/medium), which run without the API. ----

/**
 * For a repository test file: the real PostgreSQL of the run (./scripts/test.sh provides DATABASE_URL)
 * without the rest of the app, and the repository on it; set before the file's tests, closed after them.
 */
export function repositoryUnderTest<R>(make: (prisma: PrismaService, db: Db) => R): {
  prisma: PrismaService;
  db: Db;
  repo: R;
} {
  const t = {} as { prisma: PrismaService; db: Db; repo: R };
  beforeAll(() => {
    t.db = new Db(AppConfig.fromEnv(testEnv()));
    t.prisma = new PrismaService(t.db);
    t.repo = make(t.prisma, t.db);
  });
  afterAll(() => t.prisma.close());
  return t;
}

/** n random decimal digits, the first not 0 (Meta's ids are numbers). */
export const digits = (n: number) =>
  String(randomInt(1, 10)) + Array.from({ length: n - 1 }, () => randomInt(0, 10)).join('');

/** A random id in Meta's format (a wabaId, a phone number id), for rows that need no business account. */
export const metaId = () => digits(15);

/**
 * A random second in [fromYear, toYear) UTC: the rows of a test that reads across tenants (the sweeper's and
 * retention's statements) are dated there, so that no other test's rows fall inside the bounds it queries.
 */
export function momentIn(fromYear: number, toYear: number): Date {
  const [from, to] = [Date.UTC(fromYear, 0, 1), Date.UTC(toYear, 0, 1)];
  return new Date(from + randomInt(0, (to - from) / 1000) * 1000);
}

export interface Org {
  organizationId: string;
  operatorId: string;
  email: string;
}

/** A fresh organization with one operator (the password hash is not a real one: these tests never log in). */
export async function insertOrganization(prisma: PrismaService, name = 'Medium Org'): Promise<Org> {
  const organization = await prisma.organization.create({ data: { name } });
  const operator = await prisma.operator.create({
    data: { organizationId: organization.id, email: uniqueEmail(), passwordHash: 'not-a-hash' },
  });
  return { organizationId: organization.id, operatorId: operator.id, email: operator.email };
}

/** A connected business account of `organizationId` with a random wabaId. */
export function insertBusinessAccount(
  prisma: PrismaService,
  organizationId: string,
  data: { name?: string; disconnectedAt?: Date } = {},
) {
  return prisma.businessAccount.create({
    data: {
      organizationId,
      wabaId: metaId(),
      name: data.name ?? 'Medium WABA',
      accessTokenEncrypted: `v1.sealed-${randomBytes(8).toString('hex')}`,
      disconnectedAt: data.disconnectedAt,
    },
  });
}

/** A phone number as a sync would list it (override any field). */
export const syncedPhoneNumber = (overrides: Partial<SyncedPhoneNumber> = {}): SyncedPhoneNumber => ({
  phoneNumberId: digits(15),
  displayPhoneNumber: `+1 555 ${digits(7)}`,
  verifiedName: 'Medium Co',
  qualityRating: 'GREEN',
  status: 'CONNECTED',
  codeVerificationStatus: null,
  nameStatus: null,
  platformType: 'CLOUD_API',
  throughputLevel: 'STANDARD',
  ...overrides,
});

/** A template as a sync would list it: `hello_world`-like, one body parameter. */
export const syncedTemplate = (overrides: Partial<SyncedTemplate> = {}): SyncedTemplate => ({
  upstreamId: digits(15),
  name: `t_${randomBytes(4).toString('hex')}`,
  language: 'en_US',
  status: 'APPROVED',
  category: 'UTILITY',
  parameterFormat: 'POSITIONAL',
  components: [{ type: 'BODY', text: 'Hello {{1}}' }],
  parameterCounts: { header: 0, body: 1, buttons: {}, names: { header: [], body: ['1'] } },
  ...overrides,
});

/** A key pair row of a business account (its secret is irrelevant to these tests). */
export function insertApiKey(
  prisma: PrismaService,
  organizationId: string,
  businessAccountId: string,
  data: { revokedAt?: Date } = {},
) {
  return prisma.apiKey.create({
    data: {
      organizationId,
      businessAccountId,
      name: 'medium key',
      accessKey: `ak_${randomBytes(12).toString('hex')}`,
      secretHash: randomBytes(32).toString('hex'),
      revokedAt: data.revokedAt,
    },
  });
}

/** The scope of a send through the API: a business account of a fresh organization and a key pair of it. */
export async function insertSendScope(prisma: PrismaService) {
  const org = await insertOrganization(prisma);
  const account = await insertBusinessAccount(prisma, org.organizationId);
  const key = await insertApiKey(prisma, org.organizationId, account.id);
  return {
    organizationId: org.organizationId,
    businessAccountId: account.id,
    wabaId: account.wabaId,
    apiKeyId: key.id,
  };
}

/** A message id as Meta returns it (`wamid.` + base64, which may hold `/` and `+`, as Meta's do). */
export const wamid = () => `wamid.${randomBytes(18).toString('base64')}`;

/** A text message as the send path stores it before the upstream call (override any field). */
export const pendingMessage = (apiKeyId: string, overrides: Partial<PendingMessage> = {}): PendingMessage => ({
  apiKeyId,
  phoneNumberId: metaId(),
  to: recipient(),
  userId: null,
  upstreamApi: 'cloud_api',
  type: 'text',
  templateName: null,
  templateLanguage: null,
  content: { text: { body: 'Hello from the medium tier', previewUrl: false } },
  ...overrides,
});

/** A message row in any state and at any time (the send path only ever inserts new `pending` ones). */
export async function insertMessage(
  prisma: PrismaService,
  businessAccountId: string,
  data: Partial<Prisma.MessageUncheckedCreateInput> = {},
) {
  return withNumberId(
    await prisma.message.create({
      data: { businessAccountId, phoneNumberId: metaId(), to: recipient(), type: 'text', status: 'pending', ...data },
    }),
  );
}

/**
 * A signed POST as the receiver hands it to storage. The payload carries no items: if another test file's
 * worker (the e2e tier shares the database) ever picks the row up, it processes it as zero events.
 */
export const incomingDelivery = (overrides: Partial<IncomingDelivery> = {}): IncomingDelivery => {
  const wabaIds = overrides.wabaIds ?? [metaId()];
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: wabaIds.map((id) => ({ id, time: 1, changes: [] })),
    n: randomBytes(4).toString('hex'),
  });
  return { rawBody: Buffer.from(body), signature: `sha256=${randomBytes(32).toString('hex')}`, wabaIds, ...overrides };
};

/** A delivery row in any state (the receiver's storeBatch only ever writes new `received` ones). */
export async function insertDelivery(
  prisma: PrismaService,
  data: {
    wabaIds?: string[];
    status?: DeliveryStatus;
    receivedAt?: Date;
    batchId?: string;
    eventCount?: number;
    lastError?: string;
    processedAt?: Date;
  } = {},
) {
  const { rawBody, signature, wabaIds } = incomingDelivery(data.wabaIds && { wabaIds: data.wabaIds });
  return withNumberId(
    await prisma.webhookDelivery.create({ data: { ...data, rawBody: new Uint8Array(rawBody), signature, wabaIds } }),
  );
}

/** An event of `deliveryId` as the worker stores it: a `delivered` status, not applied yet (override any field). */
export const eventRow = (deliveryId: number, wabaId: string, overrides: Partial<EventRow> = {}): EventRow => {
  const messageId = wamid();
  return {
    deliveryId,
    wabaId,
    phoneNumberId: metaId(),
    eventType: 'messages',
    kind: 'status_update',
    title: 'Message delivered',
    status: 'delivered',
    recipient: recipient(),
    userId: null,
    messageId,
    upstreamTimestamp: new Date('2026-03-01T10:00:00.000Z'),
    errorCode: null,
    errorTitle: null,
    errorDetail: null,
    raw: { id: messageId, status: 'delivered' },
    pricing: null,
    dedupeKey: `${messageId}:delivered`,
    processed: false,
    attempts: 0,
    ...overrides,
  };
};

/**
 * Has the simulator post a customer's message to the tenant's number (`/_sim/inbound`: `from` or only `userId`,
 * `text`, or `type` with the type's object; media types take `media: {base64, mimeType}`). Returns the wamid and,
 * for media, Meta's media id.
 */
export async function simInbound(
  stack: Stack,
  t: Pick<Tenant, 'account'>,
  body: Record<string, unknown>,
): Promise<{ wamid: string; mediaId?: string }> {
  const res = await fetch(`${stack.sim.url}/_sim/inbound`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wabaId: t.account.wabaId, phoneNumberId: t.account.phoneNumberId, ...body }),
  });
  if (res.status !== 200)
    throw new Error(`the simulator refused the inbound message: ${res.status} ${await res.text()}`);
  return (await res.json()) as { wamid: string; mediaId?: string };
}
