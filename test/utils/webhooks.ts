import { inspect } from 'node:util';
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Response } from 'supertest';
import { metaJson } from '../../simulator/meta-json.js';
import type { AppConfig } from '../../src/core/config/app-config.js';
import type { CoreOptions } from '../../src/core/core.module.js';
import { DeliverySweeper } from '../../src/webhooks/processing/delivery.sweeper.js';
import { DeliveryWorker } from '../../src/webhooks/processing/delivery.worker.js';
import { WorkerModule } from '../../src/worker/worker.module.js';
import type { TestApp } from './test-app.js';

/** The worker process (WorkerModule) started in-process, with the API's config: same database, same queue prefix. */
export interface TestWorker {
  context: INestApplicationContext;
  sweeper: DeliverySweeper;
  /** Graceful stop, as on SIGTERM. */
  close(): Promise<void>;
  /** As if the process died: running jobs stop mid-way and stay locked until another worker takes them over. */
  crash(): Promise<void>;
}

export async function startTestWorker(config: AppConfig, core: CoreOptions = {}): Promise<TestWorker> {
  const context = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, core), { logger: false });
  await context.init();
  let closed = false;
  return {
    context,
    sweeper: context.get(DeliverySweeper),
    close: async () => {
      if (closed) return;
      closed = true;
      await context.close();
    },
    crash: async () => {
      if (closed) return;
      closed = true;
      await context.get(DeliveryWorker).stop({ force: true });
      await context.close();
    },
  };
}

export function signatureOf(body: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Posts a payload as Meta does: serialised with Meta's escaping, signed over exactly those bytes. */
export function postWebhook(t: TestApp, payload: unknown, opts: { signature?: string | null; body?: string } = {}): Promise<Response> {
  const body = opts.body ?? metaJson(payload);
  let req = t.http.post('/webhooks/whatsapp').set('content-type', 'application/json');
  const signature = opts.signature === undefined ? signatureOf(body, t.config.whatsappAppSecret) : opts.signature;
  if (signature !== null) req = req.set('x-hub-signature-256', signature);
  return req.send(body);
}

/** A WABA-like id of digits, unique per test run. */
export function randomDigits(prefix: string, length = 15): string {
  let out = prefix;
  while (out.length < length) out += String(randomInt(0, 10));
  return out;
}

export interface Tenant {
  organizationId: string;
  cookie: string;
  email: string;
  wabaId: string;
  businessAccountId: string;
  phoneNumberId: string;
}

/** A fresh organization with a logged-in operator (real signup + login) and one business account row. */
export async function createTenant(t: TestApp, opts: { wabaId?: string } = {}): Promise<Tenant> {
  const { organizationId, cookie, email } = await signUp(t);
  const wabaId = opts.wabaId ?? randomDigits('3109');
  const account = await t.prisma.businessAccount.create({
    data: { organizationId, wabaId, name: `Test WABA ${wabaId}`, accessTokenEncrypted: 'not-a-real-token' },
  });
  return { organizationId, cookie, email, wabaId, businessAccountId: account.id, phoneNumberId: randomDigits('4029') };
}

export async function signUp(t: TestApp): Promise<{ organizationId: string; cookie: string; email: string }> {
  const email = `ops-${randomBytes(6).toString('hex')}@example.test`;
  const password = 'correct horse battery staple';
  const signup = await t.http.post('/auth/signup').send({ email, password, organizationName: 'Webhook Test Co' });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${JSON.stringify(signup.body)}`);
  const login = await t.http.post('/auth/login').send({ email, password });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  const setCookie = ([] as string[]).concat(login.headers['set-cookie'] ?? []);
  const cookie = setCookie.map((c) => c.split(';')[0]!).find((c) => c.startsWith('bm_session='));
  if (!cookie) throw new Error('login set no session cookie');
  return { organizationId: login.body.data.operator.organization.id as string, cookie, email };
}

// Payload builders in Meta's shapes (docs/whatsapp-cloud-api.md §2).

export interface StatusItem {
  id: string;
  status: string;
  timestamp: string;
  recipient_id: string;
  [key: string]: unknown;
}

export function statusesPayload(wabaId: string, phoneNumberId: string, statuses: StatusItem[]) {
  return {
    object: 'whatsapp_business_account',
    entry: [{ id: wabaId, changes: [{ field: 'messages', value: messagesValue(phoneNumberId, { statuses }) }] }],
  };
}

export function inboundPayload(wabaId: string, phoneNumberId: string, message: { from: string; id: string; timestamp: string; text: string; name?: string }) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: wabaId,
        changes: [
          {
            field: 'messages',
            value: messagesValue(phoneNumberId, {
              contacts: [{ profile: { name: message.name ?? 'Priya S' }, wa_id: message.from }],
              messages: [{ from: message.from, id: message.id, timestamp: message.timestamp, type: 'text', text: { body: message.text } }],
            }),
          },
        ],
      },
    ],
  };
}

export function fieldPayload(wabaId: string, field: string, value: Record<string, unknown>, time = unixNow()) {
  return { object: 'whatsapp_business_account', entry: [{ id: wabaId, time, changes: [{ field, value }] }] };
}

export function messagesValue(phoneNumberId: string, value: Record<string, unknown>) {
  return { messaging_product: 'whatsapp', metadata: { display_phone_number: '447700900500', phone_number_id: phoneNumberId }, ...value };
}

export function wamid(): string {
  return `wamid.${randomBytes(18).toString('base64')}`;
}

export function unixNow(offsetSeconds = 0): number {
  return Math.floor(Date.now() / 1000) + offsetSeconds;
}

/** Polls until `probe` returns a value other than undefined (or throws with `what` after the timeout). */
export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${inspect(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
