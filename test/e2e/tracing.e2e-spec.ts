// Traces (docs/operations-and-scaling.md, "Traces"): the built API and worker run as production runs them (node
// --import of the tracing bootstrap, scripts/stack/app.ts), exporting OTLP/HTTP JSON to a real receiver in this test.
// A send must be one trace from POST /messages to the call to Meta (the simulator); a status webhook one trace from
// its POST to the worker's statements; a process with tracing turned off must export nothing.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signedDelivery } from '../../simulator/payloads/signature.js';
import { statusItem, statusesWebhook } from '../../simulator/payloads/webhooks.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/simulator.js';
import { startApi, startWorker, type Served } from '../../scripts/stack/app.js';
import {
  apiAt,
  connectSimAccount,
  createKey,
  eventually,
  helloWorld,
  recipient,
  signupAndLogin,
  syncAll,
  type OnboardedTenant,
} from '../utils/factories.js';
import { OtlpReceiver, type ReceivedSpan } from '../utils/otlp-receiver.js';
import { poll } from '../utils/poll.js';
import { runProcess } from '../utils/run-built.js';
import { scratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';
import { testEnv } from '../utils/test-env.js';

jest.setTimeout(120_000);

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;
const APP_SECRET = 'test-app-secret';

const pathOf = (s: ReceivedSpan) => String(s.attributes['url.path'] ?? s.attributes['http.target'] ?? '');
const urlOf = (s: ReceivedSpan) => String(s.attributes['url.full'] ?? s.attributes['http.url'] ?? '');
const isPg = (s: ReceivedSpan) => s.scope === '@opentelemetry/instrumentation-pg';
const isRedis = (s: ReceivedSpan) => s.scope === '@opentelemetry/instrumentation-ioredis';

let dir: string;
let sim: SimulatorHandle;
let receiver: OtlpReceiver;
let silentReceiver: OtlpReceiver;
let api: Served;
let worker: Served;
let untracedApi: Served;
let sampledOutApi: Served;
let database: ScratchDatabase;

async function onboardThrough(url: string, name: string): Promise<OnboardedTenant> {
  const client = apiAt(url);
  const operator = await signupAndLogin(client, name);
  const account = await connectSimAccount(client, operator, sim.createAccount());
  await syncAll(client, operator, account.wabaId);
  return { operator, account, key: await createKey(client, operator, account.wabaId) };
}

function sendThrough(url: string, tenant: OnboardedTenant, to = recipient()) {
  return fetch(`${url}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...tenant.key.headers },
    body: JSON.stringify(helloWorld(tenant, to)),
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bmapi-tracing-'));
  [receiver, silentReceiver] = await Promise.all([new OtlpReceiver().start(), new OtlpReceiver().start()]);
  sim = await startSimulator({ appSecret: APP_SECRET, statusDelaysMs: { sent: 50, delivered: 300, read: 600 } });
  // A database of its own: the worker's sweeper gives a job (with no trace of its own) to any delivery left unqueued in
  // its database, and other files' deliveries would make root spans the assertions below cannot tell from a leak.
  database = await scratchDatabase();
  const env = {
    ...testEnv({
      DATABASE_URL: database.url,
      UPSTREAM_BASE_URL: sim.baseUrl,
      WHATSAPP_APP_SECRET: APP_SECRET,
      LOG_LEVEL: 'info',
    }),
    PATH: process.env.PATH ?? '',
  };
  const traced = {
    ...env,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    // Exported every 200 ms instead of every 5 s: the waits below end sooner.
    OTEL_BSP_SCHEDULE_DELAY: '200',
  };
  // Turned off although an endpoint is given: OTEL_SDK_DISABLED wins.
  const untraced = {
    ...env,
    OTEL_SDK_DISABLED: 'true',
    OTEL_EXPORTER_OTLP_ENDPOINT: silentReceiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '200',
  };
  // Samples no request of its own (a caller's sampled traceparent still is): the worker, above, samples everything.
  const sampledOut = {
    ...traced,
    OTEL_SERVICE_NAME: 'bmapi-api-sampled-out',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
  };
  [api, worker, untracedApi, sampledOutApi] = await Promise.all([
    startApi({ name: 'api', logDir: dir, env: traced }),
    startWorker({ name: 'worker', logDir: dir, env: { ...traced, WORKER_METRICS_PORT: '0' } }),
    startApi({ name: 'api-untraced', logDir: dir, env: untraced }),
    startApi({ name: 'api-sampled-out', logDir: dir, env: sampledOut }),
  ]);
  sim.setWebhookUrl(`${api.url}/webhooks/whatsapp`);
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([api, worker, untracedApi, sampledOutApi].map((s) => s?.proc.stop()));
  await Promise.allSettled([sim?.close(), receiver?.close(), silentReceiver?.close(), database?.drop()]);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('Tracing on (OTEL_EXPORTER_OTLP_ENDPOINT given)', () => {
  let tenant: OnboardedTenant;
  let sendSpan: ReceivedSpan;
  let messageId: string;

  beforeAll(async () => {
    tenant = await onboardThrough(api.url, 'Traced Org');
  });

  it('makes one send one trace: the POST /messages server span, its PostgreSQL and Redis statements, and the call to Meta', async () => {
    const res = await sendThrough(api.url, tenant);
    expect(res.status).toBe(200);
    messageId = ((await res.json()) as { data: { id: string } }).data.id;
    const serverSpan = (s: ReceivedSpan) =>
      s.service === 'bmapi-api' && s.kind === SERVER && s.name === 'POST /messages';
    // The exporter sends every 200 ms; the call to Meta ends before the server span, so both are in once it is.
    const found = await eventually(async () => receiver.spans.find(serverSpan), { timeoutMs: 30_000 });
    expect(found).toBeDefined();
    sendSpan = found!;
    const toMeta = await eventually(
      async () =>
        receiver
          .trace(sendSpan.traceId)
          .find((s) => s.kind === CLIENT && urlOf(s).startsWith(sim.baseUrl) && urlOf(s).endsWith('/messages')),
      { timeoutMs: 10_000 },
    );
    expect(toMeta).toBeDefined();
    expect(receiver.descendsFrom(toMeta!, sendSpan)).toBe(true);
    const inTrace = receiver.trace(sendSpan.traceId);
    expect(inTrace.filter((s) => isPg(s) && receiver.descendsFrom(s, sendSpan)).length).toBeGreaterThan(0);
    expect(inTrace.filter((s) => isRedis(s) && receiver.descendsFrom(s, sendSpan)).length).toBeGreaterThan(0);
  });

  it("writes the send's trace id on its log lines", async () => {
    const lines = fs
      .readFileSync(path.join(dir, 'api.log'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const sent = lines.find((l) => l.msg === 'message sent' && l.messageId === messageId);
    expect(sent).toMatchObject({ traceId: sendSpan.traceId, spanId: expect.stringMatching(/^[0-9a-f]{16}$/) });
  });

  it("makes each of Meta's status webhooks one trace with the worker's job that processed it and the job's statements", async () => {
    // The simulator posts sent, delivered and read for the message; the worker applies them.
    await eventually(
      async () => {
        const res = await fetch(`${api.url}/messages/${messageId}`, { headers: tenant.key.headers });
        return ((await res.json()) as { data?: { status?: string } }).data?.status === 'read';
      },
      { timeoutMs: 30_000 },
    );
    const hooks = () =>
      receiver.spans.filter(
        (s) => s.service === 'bmapi-api' && s.kind === SERVER && pathOf(s) === '/webhooks/whatsapp',
      );
    const jobs = () =>
      receiver.spans.filter(
        (s) => s.service === 'bmapi-worker' && s.kind === CONSUMER && s.name === 'process webhook-deliveries',
      );
    // A job that carries several POSTs' deliveries joins the first one's trace and links the others.
    const jobOf = (hook: ReceivedSpan) =>
      jobs().find(
        (j) =>
          (j.traceId === hook.traceId && receiver.descendsFrom(j, hook)) ||
          j.links.some((l) => l.traceId === hook.traceId && l.spanId === hook.spanId),
      );
    const all = await eventually(
      async () => {
        const posted = hooks();
        return posted.length >= 3 && posted.every((h) => jobOf(h)) ? posted : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(all?.length).toBeGreaterThanOrEqual(3);
    // The job joined at least one POST's trace, and its statements are in it, under the job.
    const joined = jobs().filter((j) => all!.some((h) => h.traceId === j.traceId));
    expect(joined.length).toBeGreaterThan(0);
    const statements = await eventually(
      async () =>
        receiver.spans.filter(
          (s) => s.service === 'bmapi-worker' && isPg(s) && joined.some((j) => receiver.descendsFrom(s, j)),
        ).length,
      { timeoutMs: 10_000 },
    );
    expect(statements).toBeGreaterThan(0);
  });
});

describe('Tracing on: a campaign run', () => {
  it("is one trace from the POST that created it through the worker's job to each call to Meta", async () => {
    const tenant = await onboardThrough(api.url, 'Campaign Org');
    const recipients = [recipient(), recipient()];
    const res = await fetch(`${api.url}/business-accounts/${tenant.account.wabaId}/campaigns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: tenant.operator.cookie },
      body: JSON.stringify({
        name: 'Traced campaign',
        phoneNumberId: tenant.account.phoneNumberId,
        templateName: 'hello_world',
        templateLanguage: 'en_US',
        recipients: recipients.map((to) => ({ to })),
      }),
    });
    expect(res.status).toBe(201);
    const post = await eventually(
      async () =>
        receiver.spans.find(
          (s) =>
            s.service === 'bmapi-api' && s.kind === SERVER && s.name === 'POST /business-accounts/:wabaId/campaigns',
        ),
      { timeoutMs: 30_000 },
    );
    expect(post).toBeDefined();
    // The job runs in the worker, under the POST; every send of the run is a call to Meta under the job.
    const calls = await poll(
      () => {
        const job = receiver
          .trace(post!.traceId)
          .find((s) => s.service === 'bmapi-worker' && s.kind === CONSUMER && s.name === 'process campaigns');
        if (!job || !receiver.descendsFrom(job, post!)) return [];
        return receiver
          .trace(post!.traceId)
          .filter((s) => s.kind === CLIENT && urlOf(s).endsWith('/messages') && receiver.descendsFrom(s, job));
      },
      { timeoutMs: 60_000, done: (found) => found.length >= recipients.length, what: "the run's calls to Meta" },
    );
    expect(calls.length).toBeGreaterThanOrEqual(recipients.length);
  });
});

describe('Tracing on, a sampler that leaves requests out (OTEL_TRACES_SAMPLER=parentbased_traceidratio)', () => {
  const traceId = () => randomBytes(16).toString('hex');
  const spanId = () => randomBytes(8).toString('hex');
  let tenant: OnboardedTenant;

  beforeAll(async () => {
    tenant = await onboardThrough(sampledOutApi.url, 'Sampled Org');
  });

  it("records nothing of a request it leaves out: not its statements, not its call to Meta, not the worker's job it queued", async () => {
    const before = receiver.spans.length;
    const res = await sendThrough(sampledOutApi.url, tenant);
    expect(res.status).toBe(200);
    const sent = ((await res.json()) as { data: { id: string; upstreamMessageId: string } }).data;
    // A status for that message, posted to the same API under a caller's trace it was told not to sample (flags 00).
    const left = traceId();
    const delivery = signedDelivery(
      statusesWebhook(tenant.account.wabaId, tenant.account.phoneNumberId, [
        statusItem(sent.upstreamMessageId, 'delivered', Math.floor(Date.now() / 1000)),
      ]),
      APP_SECRET,
    );
    const hook = await fetch(`${sampledOutApi.url}/webhooks/whatsapp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': delivery.signature,
        traceparent: `00-${left}-${spanId()}-00`,
      },
      body: delivery.body,
    });
    expect(hook.status).toBe(200);
    // The worker (which samples every trace of its own) applied the status, yet follows the request's decision.
    await eventually(
      async () => {
        const got = await fetch(`${sampledOutApi.url}/messages/${sent.id}`, { headers: tenant.key.headers });
        return ((await got.json()) as { data?: { status?: string } }).data?.status === 'delivered';
      },
      { timeoutMs: 30_000 },
    );
    // Past several export intervals (200 ms) of both processes.
    await new Promise((r) => setTimeout(r, 1500));
    const since = receiver.spans.slice(before);
    expect(since.filter((s) => s.service === 'bmapi-api-sampled-out')).toEqual([]);
    expect(since.filter((s) => s.traceId === left)).toEqual([]);
    // No job span without a parent or a link: this file's database holds only its own deliveries (beforeAll).
    expect(
      since.filter(
        (s) =>
          s.service === 'bmapi-worker' &&
          s.name === 'process webhook-deliveries' &&
          s.links.length === 0 &&
          !s.parentSpanId,
      ),
    ).toEqual([]);
  });

  it("records a request whose caller's traceparent says sampled, as a child of the caller's span, with its statements and its call to Meta", async () => {
    const [callerTrace, callerSpan] = [traceId(), spanId()];
    const res = await fetch(`${sampledOutApi.url}/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: `00-${callerTrace}-${callerSpan}-01`,
        ...tenant.key.headers,
      },
      body: JSON.stringify(helloWorld(tenant, recipient())),
    });
    expect(res.status).toBe(200);
    const server = await eventually(
      async () => receiver.trace(callerTrace).find((s) => s.kind === SERVER && s.name === 'POST /messages'),
      { timeoutMs: 30_000 },
    );
    expect(server).toMatchObject({
      service: 'bmapi-api-sampled-out',
      parentSpanId: callerSpan,
      attributes: expect.objectContaining({ 'http.route': '/messages', 'http.response.status_code': 200 }),
    });
    const toMeta = await eventually(
      async () => receiver.trace(callerTrace).find((s) => s.kind === CLIENT && urlOf(s).endsWith('/messages')),
      { timeoutMs: 10_000 },
    );
    expect(receiver.descendsFrom(toMeta!, server!)).toBe(true);
    expect(
      receiver.trace(callerTrace).filter((s) => isPg(s) && receiver.descendsFrom(s, server!)).length,
    ).toBeGreaterThan(0);
  });
});

describe('Tracing asked for in a way it cannot honour', () => {
  it('stops the process at start, naming the variable (no gRPC exporter is installed)', async () => {
    const run = await runProcess(
      process.execPath,
      ['--import', './dist/src/core/tracing/register.js', 'dist/src/main.js'],
      {
        env: {
          ...testEnv(),
          PATH: process.env.PATH ?? '',
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        },
        timeoutMs: 60_000,
      },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL=grpc: only http/protobuf and http/json are supported');
  });
});

describe('Tracing off (OTEL_SDK_DISABLED=true)', () => {
  it('exports nothing, however much the process does', async () => {
    const tenant = await onboardThrough(untracedApi.url, 'Untraced Org');
    const res = await sendThrough(untracedApi.url, tenant);
    expect(res.status).toBe(200);
    // Past several export intervals of the traced process (200 ms): a traced one would have sent by now.
    await new Promise((r) => setTimeout(r, 1500));
    expect(silentReceiver.requests).toBe(0);
    const lines = fs.readFileSync(path.join(dir, 'api-untraced.log'), 'utf8');
    expect(lines).toContain('"msg":"message sent"');
    expect(lines).not.toContain('"traceId"');
  });
});
