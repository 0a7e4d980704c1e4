// Issue 15: the events feed's long poll. Signed single-status deliveries posted at an even BENCH_FEED_RATE
// (500/s) to the API processes in turn, while long-polling clients (BENCH_FEED_POLLERS per API process, each on
// its own API process, `wait=25`, `limit=100`) follow the account's feed from `after=now`. Per event and client:
// the time from the webhook's 200 to the client holding the event (same clock: this process). Every client must
// see every event exactly once.
//
//   npm run bench:feed     (env: BENCH_LOAD_S=20 seconds of load, BENCH_FEED_RATE=500, BENCH_FEED_POLLERS=2)
//
// Not part of `npm run bench`: it needs a quiet machine to say anything about latency.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { CpuMeter, formatCpu } from './lib/cpu.js';
import { check, fmt, machine, printMachine, writeResult, type Check } from './lib/report.js';
import { log, runBench, sleep, type Stack, type Tenant } from './lib/bench.js';
import { StatusPlan } from './lib/webhooks.js';

const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 20);
const RATE = Number(process.env.BENCH_FEED_RATE ?? 500);
const POLLERS_PER_API = Number(process.env.BENCH_FEED_POLLERS ?? 2);
const APIS = 2;
const WARM_S = Math.min(3, LOAD_S);
/** After the last delivery is acknowledged, how long the clients may take to hold everything. */
const DRAIN_MS = 30_000;

interface FeedBody {
  data?: { items: { id: number; messageId: string | null; status: string | null }[]; nextCursor: string };
}

/** One client following the feed on one API process; `heldAt` per event key (messageId:status). */
class Poller {
  readonly heldAt = new Map<string, number>();
  readonly ids = new Set<number>();
  duplicates = 0;
  requests = 0;
  errors = 0;
  private stopped = false;
  private done: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly tenant: Tenant,
  ) {}

  /** Positions the client at the present (`after=now`), then follows the feed until stopped. */
  async start(): Promise<void> {
    let cursor = (await this.get('now', 0)).nextCursor;
    this.done = (async () => {
      while (!this.stopped) {
        try {
          const page = await this.get(cursor, 25);
          const now = performance.now();
          for (const e of page.items) {
            if (this.ids.has(e.id)) this.duplicates++;
            this.ids.add(e.id);
            this.heldAt.set(`${e.messageId}:${e.status}`, now);
          }
          cursor = page.nextCursor;
        } catch (err) {
          this.errors++;
          if (!this.stopped) log(`poller on ${this.url}: ${String(err)}`);
          await sleep(200);
        }
      }
    })();
  }

  /** Stops after the poll in flight (at most `wait` seconds; the caller's deadline decides when to stop waiting). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.race([this.done, sleep(26_000)]);
  }

  private async get(after: string, wait: number): Promise<NonNullable<FeedBody['data']>> {
    this.requests++;
    const res = await fetch(
      `${this.url}/webhooks/events?wabaId=${this.tenant.account.wabaId}&after=${encodeURIComponent(after)}&wait=${wait}&limit=100`,
      {
        headers: { cookie: this.tenant.operator.cookie },
      },
    );
    const body = (await res.json()) as FeedBody;
    if (res.status !== 200 || !body.data) throw new Error(`feed → ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    return body.data;
  }
}

interface PhaseResult {
  deliveries: number;
  acked: number;
  failed: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; samples: number };
  missing: number;
  duplicates: number;
  pollRequests: number;
  pollErrors: number;
}

function pct(sorted: number[], p: number): number {
  return sorted.length === 0
    ? NaN
    : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** `seconds` of deliveries at RATE, evenly spaced (open loop), while the pollers follow the feed. */
async function phase(stack: Stack, tenant: Tenant, label: string, seconds: number): Promise<PhaseResult> {
  const total = Math.round(RATE * seconds);
  const plan = new StatusPlan(`feed${stack.runId}${label}`, total);
  await plan.seedMessages(stack.db, tenant.account.businessAccountId, tenant.account.phoneNumberId);
  const deliveries = plan.deliveries(tenant.account.wabaId, tenant.account.phoneNumberId, 1, stack.appSecret);
  const keys = deliveries.map((_, i) => {
    const item = plan.item(i);
    return `${String(item.id)}:${String(item.status)}`;
  });

  const pollers = stack.apiUrls.flatMap((url) =>
    Array.from({ length: POLLERS_PER_API }, () => new Poller(url, tenant)),
  );
  await Promise.all(pollers.map((p) => p.start()));

  const agents = stack.apiUrls.map(() => new http.Agent({ keepAlive: true, maxSockets: 16 }));
  const urls = stack.apiUrls.map((u) => new URL(u));
  const ackedAt = new Array<number>(total).fill(NaN);
  let failed = 0;
  let settled = 0;
  let allSettled!: () => void;
  const finished = new Promise<void>((r) => (allSettled = r));
  const settle = () => {
    if (++settled === total) allSettled();
  };
  log(
    `${label}: ${total} deliveries at ${RATE}/s to ${urls.length} API process(es), ${pollers.length} long-polling clients`,
  );
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const ahead = due - performance.now();
    if (ahead > 1) await sleep(ahead);
    const d = deliveries[i]!;
    const k = i % urls.length;
    const req = http.request(
      {
        host: urls[k]!.hostname,
        port: urls[k]!.port,
        method: 'POST',
        path: '/webhooks/whatsapp',
        agent: agents[k],
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': d.signature,
          'content-length': d.body.length,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) ackedAt[i] = performance.now();
          else failed++;
          settle();
        });
      },
    );
    req.on('error', () => {
      failed++;
      settle();
    });
    req.end(d.body);
  }
  await Promise.race([finished, sleep(30_000)]);
  const deadline = performance.now() + DRAIN_MS;
  while (performance.now() < deadline && pollers.some((p) => keys.some((key) => !p.heldAt.has(key)))) await sleep(100);
  await Promise.all(pollers.map((p) => p.stop()));
  agents.forEach((a) => a.destroy());

  const latencies: number[] = [];
  let missing = 0;
  for (const p of pollers) {
    keys.forEach((key, i) => {
      const held = p.heldAt.get(key);
      if (held === undefined) missing++;
      else if (Number.isFinite(ackedAt[i]!)) latencies.push(Math.max(0, held - ackedAt[i]!));
    });
  }
  latencies.sort((a, b) => a - b);
  const result: PhaseResult = {
    deliveries: total,
    acked: ackedAt.filter(Number.isFinite).length,
    failed,
    latencyMs: {
      p50: pct(latencies, 50),
      p90: pct(latencies, 90),
      p99: pct(latencies, 99),
      max: latencies.at(-1) ?? NaN,
      samples: latencies.length,
    },
    missing,
    duplicates: pollers.reduce((n, p) => n + p.duplicates, 0),
    pollRequests: pollers.reduce((n, p) => n + p.requests, 0),
    pollErrors: pollers.reduce((n, p) => n + p.errors, 0),
  };
  const l = result.latencyMs;
  log(
    `${label}: acked ${result.acked}/${total} (${failed} failed); 200 → client holds it: p50 ${fmt(l.p50)} ms, p90 ${fmt(l.p90)} ms, p99 ${fmt(l.p99)} ms, max ${fmt(l.max)} ms over ${l.samples}; ` +
      `missing ${missing}, duplicates ${result.duplicates}; ${result.pollRequests} poll requests`,
  );
  return result;
}

await runBench({ name: 'feed', apis: APIS, limitMs: 300_000 }, async (stack) => {
  const m = machine();
  printMachine(m);
  const tenant = await stack.onboard();
  await phase(stack, tenant, 'warm-up', WARM_S);
  const meter = new CpuMeter(() => stack.cpuLabels());
  meter.begin();
  const measured = await phase(stack, tenant, 'measured', LOAD_S);
  const cpu = meter.end();
  console.log(formatCpu(cpu));

  console.log('\nTargets');
  const l = measured.latencyMs;
  const checks: Check[] = [
    check(
      `webhook 200 → long-polling client holds the event, p50 (${RATE}/s)`,
      '≤ 50 ms',
      `${fmt(l.p50)} ms`,
      l.p50 <= 50,
    ),
    check(
      `webhook 200 → long-polling client holds the event, p99 (${RATE}/s)`,
      '≤ 250 ms',
      `${fmt(l.p99)} ms (max ${fmt(l.max)} ms)`,
      l.p99 <= 250,
    ),
    check(
      'every client saw every event once',
      '0 missing, 0 duplicated',
      `missing ${measured.missing}, duplicated ${measured.duplicates}`,
      measured.missing === 0 && measured.duplicates === 0,
    ),
    check(
      'deliveries acknowledged',
      `${measured.deliveries}`,
      `${measured.acked} (${measured.failed} failed)`,
      measured.acked === measured.deliveries,
    ),
  ];
  writeResult('feed', { machine: m, config: { LOAD_S, RATE, POLLERS_PER_API, APIS }, measured, cpu, checks });
});
