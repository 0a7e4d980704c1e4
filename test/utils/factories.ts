import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import request from 'supertest';
import type { CreatedAccount } from '../../simulator/store.js';
import type { SyncedPhoneNumber } from '../../src/accounts/phone-numbers/phone-numbers.repository.js';
import type { SyncedTemplate } from '../../src/accounts/templates/templates.repository.js';
import type { DeliveryStatus } from '../../src/webhooks/deliveries/dto/deliveries.dto.js';
import type { IncomingDelivery } from '../../src/webhooks/deliveries/webhook-deliveries.repository.js';
import type { EventRow } from '../../src/events/events.repository.js';
import type { PendingMessage } from '../../src/messages/messages.repository.js';
import { AppConfig } from '../../src/core/config/app-config.js';
import { Db } from '../../src/core/db/db.js';
import type { Insertable } from 'kysely';
import { columns, type MessageTable } from '../../src/core/db/database.js';
import { storeDeliveries, type DeliveryInsert } from './delivery-rows.js';
import type { Row } from '../../src/core/db/rows.js';
import { poll } from './poll.js';
import type { Stack } from './stack.js';
import type { TestApp } from './test-app.js';
import { testEnv } from './test-env.js';

export const PASSWORD = 'correct horse battery staple';

/**
 * The API over HTTP, as the factories drive it: a test's app or stack (supertest on the in-process API), or a bench's
 * built processes (`apiAt(url)`).
 */
export type Api = Pick<TestApp, 'http'>;

/** The API listening at `url` (another process: a bench's, the fault suite's). */
export const apiAt = (url: string): Api => ({ http: request(url) });

export interface Operator {
  email: string;
  cookie: string;
  organizationId: string;
  operatorId: string;
}

export const uniqueEmail = () => `op-${randomBytes(6).toString('hex')}@example.test`;

/** A fresh organization with its first operator, logged in. */
export async function signupAndLogin(t: Api, organizationName = 'Test Org', email = uniqueEmail()): Promise<Operator> {
  const signup = await t.http.post('/auth/signup').send({ email, password: PASSWORD, organizationName });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${JSON.stringify(signup.body)}`);
  const { cookie } = await loginAs(t, email);
  return { email, cookie, organizationId: signup.body.data.organization.id, operatorId: signup.body.data.id };
}

/** Another operator of `owner`'s organization with `role`: invited by the owner, signed up with the link, logged in. */
export async function joinOrganization(
  t: Api,
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
export async function loginAs(t: Api, email: string, password = PASSWORD): Promise<Pick<Operator, 'email' | 'cookie'>> {
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
export function connectAccount(stack: Stack, operator: Operator): Promise<ConnectedAccount> {
  return connectSimAccount(stack, operator, stack.sim.createAccount());
}

/** A simulator business account (`sim`: made in-process or by `POST /_sim/accounts`) connected by `operator`. */
export async function connectSimAccount(api: Api, operator: Operator, sim: CreatedAccount): Promise<ConnectedAccount> {
  const res = await api.http
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

export async function syncAll(stack: Api, operator: Operator, wabaId: string): Promise<void> {
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

export async function createKey(t: Api, operator: Operator, wabaId: string, name = 'test key'): Promise<KeyPair> {
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
  const row = await insertBusinessAccount(t.db, operator.organizationId, {
    wabaId,
    name: `Test WABA ${wabaId}`,
    accessTokenEncrypted: 'not-a-real-token',
  });
  const key = await createKey(t, operator, wabaId);
  return { operator, account: { wabaId, businessAccountId: row.id, phoneNumberId: metaId() }, key };
}

/**
 * The spec's onboarding against a simulator in another process (a bench's, the fault suite's): signup, login, a new
 * simulator account connected with its number at `level` (the simulator's throughput), numbers and templates synced,
 * a key pair.
 */
export async function onboardOver(
  api: Api,
  simUrl: string,
  opts: { organizationName?: string; email?: string; level?: 'HIGH' | 'STANDARD'; keyName?: string } = {},
): Promise<OnboardedTenant> {
  const operator = await signupAndLogin(api, opts.organizationName ?? 'Test Org', opts.email);
  const account = await connectOver(api, simUrl, operator, { name: opts.organizationName, level: opts.level });
  const key = await createKey(api, operator, account.wabaId, opts.keyName);
  return { operator, account, key };
}

/**
 * One more business account of `operator`, from a simulator in another process: a new simulator account connected,
 * its number at `level`, numbers and templates synced.
 */
export async function connectOver(
  api: Api,
  simUrl: string,
  operator: Operator,
  opts: { name?: string; level?: 'HIGH' | 'STANDARD' } = {},
): Promise<ConnectedAccount> {
  const sim = (await postSim(simUrl, 'accounts', { name: opts.name }, 201)) as unknown as CreatedAccount;
  const account = await connectSimAccount(api, operator, sim);
  if (opts.level)
    await postSim(simUrl, 'throughput', {
      wabaId: sim.wabaId,
      phoneNumberId: account.phoneNumberId,
      level: opts.level,
    });
  await syncAll(api, operator, account.wabaId);
  return account;
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
export function simControl(stack: Stack, path: string, body: unknown): Promise<Record<string, unknown>> {
  return postSim(stack.sim.url, path, body);
}

/** POST to a control route of the simulator at `simUrl`; any other status than `expected` throws with the answer. */
export async function postSim(
  simUrl: string,
  path: string,
  body: unknown,
  expected = 200,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${simUrl}/_sim/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== expected) throw new Error(`simulator ${path}: ${res.status} ${await res.text()}`);
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

/** Polls until `probe` returns a truthy value (or the time is up) and returns the last value (see poll). */
export function eventually<T>(probe: () => Promise<T>, { timeoutMs = 90_000, intervalMs = 100 } = {}): Promise<T> {
  return poll(probe, { timeoutMs, intervalMs });
}

// ---- Rows straight into PostgreSQL, for the repository tests (test/medium), which run without the API. ----

/**
 * For a repository test file: the real PostgreSQL of the run (./scripts/test.sh provides DATABASE_URL)
 * without the rest of the app, and the repository on it; set before the file's tests, closed after them.
 */
export function repositoryUnderTest<R>(make: (db: Db) => R): { db: Db; repo: R } {
  const t = {} as { db: Db; repo: R };
  beforeAll(() => {
    t.db = new Db(AppConfig.fromEnv(testEnv()));
    t.repo = make(t.db);
  });
  afterAll(() => t.db.close());
  return t;
}

/** camelCase fields (as rows are read: `Row<table>`) as the snake_case columns Kysely writes. */
function toColumns(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]),
  );
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
export async function insertOrganization(db: Db, name = 'Medium Org'): Promise<Org> {
  const organization = await db
    .on()
    .insertInto('organizations')
    .values({ id: randomUUID(), name })
    .returning('id')
    .executeTakeFirstOrThrow();
  const operator = await db
    .on()
    .insertInto('operators')
    .values({ id: randomUUID(), organization_id: organization.id, email: uniqueEmail(), password_hash: 'not-a-hash' })
    .returning(['id', 'email'])
    .executeTakeFirstOrThrow();
  return { organizationId: organization.id, operatorId: operator.id, email: operator.email };
}

/** A connected business account of `organizationId` with a random wabaId. */
export function insertBusinessAccount(
  db: Db,
  organizationId: string,
  data: { wabaId?: string; name?: string; accessTokenEncrypted?: string; disconnectedAt?: Date } = {},
): Promise<Row<'business_accounts'>> {
  return db
    .on()
    .insertInto('business_accounts')
    .values({
      id: randomUUID(),
      organization_id: organizationId,
      waba_id: data.wabaId ?? metaId(),
      name: data.name ?? 'Medium WABA',
      access_token_encrypted: data.accessTokenEncrypted ?? `v1.sealed-${randomBytes(8).toString('hex')}`,
      disconnected_at: data.disconnectedAt,
      updated_at: new Date(),
    })
    .returning(columns.business_accounts)
    .executeTakeFirstOrThrow();
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
  db: Db,
  organizationId: string,
  businessAccountId: string,
  data: { revokedAt?: Date } = {},
): Promise<Row<'api_keys'>> {
  return db
    .on()
    .insertInto('api_keys')
    .values({
      id: randomUUID(),
      organization_id: organizationId,
      business_account_id: businessAccountId,
      name: 'medium key',
      access_key: `ak_${randomBytes(12).toString('hex')}`,
      secret_hash: randomBytes(32).toString('hex'),
      revoked_at: data.revokedAt,
    })
    .returning(columns.api_keys)
    .executeTakeFirstOrThrow();
}

/** The scope of a send through the API: a business account of a fresh organization and a key pair of it. */
export async function insertSendScope(db: Db) {
  const org = await insertOrganization(db);
  const account = await insertBusinessAccount(db, org.organizationId);
  const key = await insertApiKey(db, org.organizationId, account.id);
  return {
    organizationId: org.organizationId,
    businessAccountId: account.id,
    wabaId: account.wabaId,
    apiKeyId: key.id,
  };
}

/**
 * A business account of a fresh organization (insertOrganization) with a random number, rows only: a tenant as the
 * worker sees one (the fault suite's, whose webhooks come from the test itself).
 */
export async function insertTenantAccount(
  db: Db,
  name = 'Medium Org',
): Promise<TenantAccount & { organizationId: string }> {
  const { organizationId } = await insertOrganization(db, name);
  const account = await insertBusinessAccount(db, organizationId, { name: `${name} WABA` });
  return { organizationId, wabaId: account.wabaId, businessAccountId: account.id, phoneNumberId: metaId() };
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
export function insertMessage(
  db: Db,
  businessAccountId: string,
  data: Partial<Omit<Row<'messages'>, 'id'>> = {},
): Promise<Row<'messages'>> {
  const fields = {
    businessAccountId,
    phoneNumberId: metaId(),
    to: recipient(),
    type: 'text',
    status: 'pending',
    updatedAt: new Date(),
    ...data,
  };
  return db
    .on()
    .insertInto('messages')
    .values(
      toColumns({
        ...fields,
        content: fields.content === undefined ? undefined : JSON.stringify(fields.content),
      }) as Insertable<MessageTable>,
    )
    .returning(columns.messages)
    .executeTakeFirstOrThrow();
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
  db: Db,
  data: {
    wabaIds?: string[];
    status?: DeliveryStatus;
    receivedAt?: Date;
    batchId?: string;
    eventCount?: number;
    lastError?: string;
    processedAt?: Date;
  } = {},
): Promise<Row<'webhook_deliveries'>> {
  const { rawBody, signature, wabaIds } = incomingDelivery(data.wabaIds && { wabaIds: data.wabaIds });
  const [row] = await storeDeliveries(db, [toColumns({ ...data, rawBody, signature, wabaIds }) as DeliveryInsert]);
  return row!;
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
