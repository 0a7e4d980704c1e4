import { jest } from '@jest/globals';
import http from 'node:http';
import { portOf, startMetricsServer } from '../../src/core/metrics/metrics-endpoint.js';
import { Metrics } from '../../src/core/metrics/metrics.js';
import { eventually, helloWorld, onboard, recipient, type Tenant } from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';
import { LogCapture } from '../utils/log-capture.js';
import { startTestApp } from '../utils/test-app.js';

jest.setTimeout(180_000);

/** The value of one series in a Prometheus text exposition (0 when absent). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('Metrics: /metrics on the API, and the worker on its own port', () => {
  let stack: Stack;
  let tenant: Tenant;
  let workerMetrics: http.Server;

  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { METRICS_TOKEN: 'scrape-token-123' } });
    await stack.startWorker();
    // The worker process (src/worker/main.ts) serves its Metrics like this on WORKER_METRICS_PORT.
    workerMetrics = await startMetricsServer(stack.worker!.get(Metrics), {
      port: 0,
      host: '127.0.0.1',
      token: stack.config.metricsToken,
    });
    tenant = await onboard(stack);
  });
  afterAll(async () => {
    workerMetrics?.close();
    await stack?.close();
  });

  const scrapeApi = () => stack.http.get('/metrics').set('authorization', 'Bearer scrape-token-123');
  const scrapeWorker = async () =>
    (
      await fetch(`http://127.0.0.1:${portOf(workerMetrics)}/metrics`, {
        headers: { authorization: 'Bearer scrape-token-123' },
      })
    ).text();

  it("exposes the Graph API version of UPSTREAM_BASE_URL against Meta's published expiry (v25.0: 2028-07-29, not expiring)", async () => {
    const text = (await scrapeApi()).text;
    expect(sample(text, 'bmapi_upstream_api_version_expiring{version="v25.0"}')).toBe(0);
    expect(sample(text, 'bmapi_upstream_api_version_expiry_timestamp_seconds{version="v25.0"}')).toBe(
      Date.parse('2028-07-29T00:00:00Z') / 1000,
    );
    expect(sample(await scrapeWorker(), 'bmapi_upstream_api_version_expiring{version="v25.0"}')).toBe(0);
  });

  it('warns at start and sets the gauge to 1 for a version within 180 days of its expiry (v20.0: past it)', async () => {
    const logs = new LogCapture();
    const old = await startTestApp(
      { UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v20.0', LOG_LEVEL: 'info' },
      { logDestination: logs.destination },
    );
    try {
      const text = (await old.http.get('/metrics')).text;
      expect(sample(text, 'bmapi_upstream_api_version_expiring{version="v20.0"}')).toBe(1);
      const [warning] = logs.where('version', 'v20.0');
      expect(warning).toMatchObject({ level: 40, expiresAt: '2026-09-24' });
      expect(warning!.msg).toMatch(/Graph API v20\.0 \(UPSTREAM_BASE_URL\) expired on 2026-09-24/);
    } finally {
      await old.close();
    }
  });

  it('counts a made-up HTTP method as other, so callers cannot mint series (issue 29, finding 7)', async () => {
    const url = new URL(stack.url);
    await new Promise<void>((resolve) => {
      const req = http.request(
        { host: url.hostname, port: url.port, method: 'PROPFIND', path: '/messages', agent: false },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', () => resolve());
      req.end();
    });
    const text = (await scrapeApi()).text;
    expect(text).not.toMatch(/method="PROPFIND"/);
    expect(text).toMatch(/bmapi_http_request_duration_seconds_count\{method="other"/);
  });

  it("exports on each process only what that process counts, not the other's counters as 0 (issue 43)", async () => {
    const api = (await scrapeApi()).text;
    const worker = await scrapeWorker();
    const names = (text: string) =>
      new Set(
        text
          .split('\n')
          .filter((l) => l.startsWith('# TYPE bmapi_'))
          .map((l) => l.split(' ')[2]),
      );
    const [onApi, onWorker] = [names(api), names(worker)];
    const apiOnly = [
      'bmapi_http_request_duration_seconds',
      'bmapi_sends_total',
      'bmapi_webhook_deliveries_received_total',
    ];
    const workerOnly = [
      'bmapi_webhook_deliveries_processed_total',
      'bmapi_webhook_deliveries_dead_lettered_total',
      'bmapi_webhook_events_stored_total',
      'bmapi_webhook_processing_held_seconds_total',
      'bmapi_queue_job_duration_seconds',
      'bmapi_scheduled_task_duration_seconds',
      'bmapi_storage_partition_maintenance_failures_total',
    ];
    expect({
      apiOnly: apiOnly.map((n) => [n, onApi.has(n), onWorker.has(n)]),
      workerOnly: workerOnly.map((n) => [n, onApi.has(n), onWorker.has(n)]),
      // Both call Meta: the API's sends and syncs, the worker's campaigns and credential checks.
      both: [
        onApi.has('bmapi_upstream_request_duration_seconds'),
        onWorker.has('bmapi_upstream_request_duration_seconds'),
      ],
    }).toEqual({
      apiOnly: apiOnly.map((n) => [n, true, false]),
      workerOnly: workerOnly.map((n) => [n, false, true]),
      both: [true, true],
    });
  });

  it('needs the bearer token when METRICS_TOKEN is set', async () => {
    expect((await stack.http.get('/metrics')).status).toBe(401);
    expect((await stack.http.get('/metrics').set('authorization', 'Bearer wrong')).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${portOf(workerMetrics)}/metrics`)).status).toBe(401);
    const ok = await scrapeApi();
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toContain('text/plain');
  });

  it('counts a send and a webhook delivery: the request by route, the outcome, the upstream call, receipt and processing', async () => {
    const before = (await scrapeApi()).text;
    const workerBefore = await scrapeWorker();

    const sent = await stack.http.post('/messages').set(tenant.key.headers).send(helloWorld(tenant, recipient()));
    expect(sent.status).toBe(200);
    // The simulator posts the message's statuses (sent, delivered, read) as signed webhooks.
    const message = await eventually(async () => {
      const res = await stack.http.get(`/messages/${sent.body.data.id}`).set(tenant.key.headers);
      return res.body.data.status === 'read' ? res.body.data : undefined;
    });
    expect(message).toBeDefined();

    // Counters move when each request and job finishes, which on a slow host can trail the message's status:
    // wait until every expected count is in, then compare.
    const received = 'bmapi_webhook_deliveries_received_total';
    const webhookRoute =
      'bmapi_http_request_duration_seconds_count{method="POST",route="/webhooks/whatsapp",status="200"}';
    const [processed, stored] = ['bmapi_webhook_deliveries_processed_total', 'bmapi_webhook_events_stored_total'];
    const counted = await eventually(async () => {
      const [api, worker] = [(await scrapeApi()).text, await scrapeWorker()];
      const grown = (text: string, was: string, series: string) => sample(text, series) - sample(was, series) >= 3;
      const done =
        grown(api, before, received) &&
        grown(api, before, webhookRoute) &&
        grown(worker, workerBefore, processed) &&
        grown(worker, workerBefore, stored);
      return done ? { after: api, workerAfter: worker } : undefined;
    });
    expect(counted).toBeDefined();
    const { after, workerAfter } = counted!;
    const delta = (series: string) => sample(after, series) - sample(before, series);
    expect(delta('bmapi_sends_total{outcome="accepted"}')).toBe(1);
    expect(delta('bmapi_http_request_duration_seconds_count{method="POST",route="/messages",status="200"}')).toBe(1);
    expect(delta('bmapi_upstream_request_duration_seconds_count{operation="sendMessage",outcome="ok"}')).toBe(1);
    expect(delta(received)).toBeGreaterThanOrEqual(3);
    expect(delta(webhookRoute)).toBeGreaterThanOrEqual(3);
    // Message ids never become label values: the route pattern is the label.
    expect(after).toContain('route="/messages/:id"');
    expect(after).not.toContain(`route="/messages/${sent.body.data.id}"`);
    expect(after).toContain('bmapi_webhook_oldest_unprocessed_age_seconds');
    expect(after).toContain('bmapi_webhook_queue_jobs_waiting');
    expect(sample(workerAfter, processed) - sample(workerBefore, processed)).toBeGreaterThanOrEqual(3);
    expect(sample(workerAfter, stored) - sample(workerBefore, stored)).toBeGreaterThanOrEqual(3);
  });
});
