// Issue 27: campaigns and per-number pacing, against the simulator (which refuses sends over a number's
// throughput with 130429, as Meta does), its status webhooks off.
//   1. a 100,000-recipient campaign on one HIGH number (1,000/s): time from creation to completed (target ≤ 110 s),
//      no upstream 130429, every recipient exactly once (the simulator's record and the stored messages);
//   2. a campaign on a STANDARD number (80/s): the rate between its first and last send (target ≥ 95 % of 80/s);
//   3. POST /messages over several HIGH numbers at saturation, pacing on and off (PACING_ENABLED), in the order
//      on, off, on: the cost of the pacer's Redis call (target: within 10 %).
//
//   npm run bench:campaigns    (env: BENCH_CAMPAIGN_SIZE=100000 BENCH_STANDARD_SIZE=1200 BENCH_NUMBERS=8 BENCH_DURATION=12 BENCH_CONNECTIONS=64)
import type { RequestSpec } from 'autocannon';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { CpuMeter, formatCpu, waitUntilQuiet } from './lib/cpu.js';
import { check, fmt, load, machine, printMachine, writeResult, type LoadSummary } from './lib/report.js';
import { log, runBench, type Stack, type Tenant } from './lib/bench.js';

const CAMPAIGN_SIZE = Number(process.env.BENCH_CAMPAIGN_SIZE ?? 100_000);
const STANDARD_SIZE = Number(process.env.BENCH_STANDARD_SIZE ?? 1200);
const NUMBERS = Number(process.env.BENCH_NUMBERS ?? 8);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 12);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);

const load1 = () => os.loadavg()[0]!.toFixed(2);
const METRICS_TOKEN = randomBytes(16).toString('hex');

/**
 * The workers' pacing histogram (bmapi_pacing_send_lateness_seconds: how long after its slot each paced send was
 * ready to leave, sent or forfeited), summed over the workers: cumulative counts per bucket bound and outcome.
 */
async function pacingHistogram(stack: Stack): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  for (const url of stack.workerUrls) {
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    for (const line of (await res.text()).split('\n')) {
      const m = /^bmapi_pacing_send_lateness_seconds_(bucket|count)\{(.*)\} (\S+)$/.exec(line);
      if (!m) continue;
      const outcome = /outcome="([^"]+)"/.exec(m[2]!)?.[1] ?? '';
      const le = m[1] === 'count' ? 'count' : (/le="([^"]+)"/.exec(m[2]!)?.[1] ?? '');
      sums.set(`${outcome} ${le}`, (sums.get(`${outcome} ${le}`) ?? 0) + Number(m[3]));
    }
  }
  return sums;
}

/** What the pacing histogram says for one run (after − before): sends on time, slots forfeited, lateness quantiles. */
function pacingSummary(before: Map<string, number>, after: Map<string, number>) {
  const delta = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
  const sent = delta('sent count');
  const bounds = [...after.keys()]
    .filter((k) => k.startsWith('sent ') && k !== 'sent count' && k !== 'sent +Inf')
    .map((k) => Number(k.slice(5)))
    .sort((a, b) => a - b);
  /** The smallest bucket bound holding at least this share of the on-time sends (ms). */
  const within = (share: number) => {
    for (const b of bounds) if (delta(`sent ${b}`) >= share * sent) return b * 1000;
    return Infinity;
  };
  return {
    sent,
    forfeited: delta('forfeited count'),
    lateP50Ms: within(0.5),
    lateP99Ms: within(0.99),
    lateP999Ms: within(0.999),
  };
}

/** The simulator's arrivals for one number (its clock): the most in any 1 s (Meta's count) and in any 100 ms (bunching). */
function arrivals(times: number[]): { busiestSecond: number; busiest100ms: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const busiest = (span: number) => {
    let most = 0;
    for (let i = 0, j = 0; j < sorted.length; j++) {
      while (sorted[j]! - sorted[i]! >= span) i++;
      most = Math.max(most, j - i + 1);
    }
    return most;
  };
  return { busiestSecond: busiest(1000), busiest100ms: busiest(100) };
}

/** What the console answers about a campaign (the fields this bench reads). */
interface CampaignView {
  id: number;
  status: string;
  counts: Record<string, number>;
}

async function call<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  cookie?: string,
): Promise<{ status: number; body: T }> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

async function setLevel(stack: Stack, t: Tenant, level: 'HIGH' | 'STANDARD'): Promise<void> {
  const res = await call('POST', `${stack.simUrl}/_sim/throughput`, {
    wabaId: t.account.wabaId,
    phoneNumberId: t.account.phoneNumberId,
    level,
  });
  if (res.status !== 200) throw new Error(`throughput: ${res.status}`);
  const sync = await call(
    'POST',
    `${stack.apiUrl}/business-accounts/${t.account.wabaId}/phone-numbers/sync`,
    {},
    t.operator.cookie,
  );
  if (sync.status !== 200) throw new Error(`sync: ${sync.status}`);
}

interface CampaignRun {
  recipients: number;
  createMs: number;
  /** From the 201 to status completed. */
  runMs: number;
  /** First to last upstream acceptance (the stored messages' accepted_at). */
  sendSpanS: number;
  ratePerSecond: number;
  counts: Record<string, number>;
  upstreamAccepted: number;
  upstreamTwice: number;
  upstream130429: number;
  storedMessages: number;
  /** The simulator's arrivals on the number: the most in any 1 s (over 1,000 at HIGH is a 130429) and any 100 ms. */
  busiestSecond: number;
  busiest100ms: number;
  /** The workers' slot timing (bmapi_pacing_send_lateness_seconds) during the run; null against a build without it. */
  pacing: ReturnType<typeof pacingSummary> | null;
  loadAvgStart: string;
  loadAvgEnd: string;
}

async function runCampaign(stack: Stack, t: Tenant, label: string, n: number, prefix: string): Promise<CampaignRun> {
  const tos = Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(6, '0')}`);
  const loadAvgStart = load1();
  const pacingBefore = await pacingHistogram(stack);
  const t0 = Date.now();
  const created = await call<{ data: CampaignView }>(
    'POST',
    `${stack.apiUrl}/business-accounts/${t.account.wabaId}/campaigns`,
    {
      name: label,
      phoneNumberId: t.account.phoneNumberId,
      templateName: 'hello_world',
      templateLanguage: 'en_US',
      recipients: tos.map((to) => ({ to })),
    },
    t.operator.cookie,
  );
  if (created.status !== 201)
    throw new Error(`campaign: ${created.status} ${JSON.stringify(created.body).slice(0, 500)}`);
  const createMs = Date.now() - t0;
  const id = created.body.data.id;
  log(`${label}: ${n} recipients, created in ${createMs} ms (campaign ${id}); running…`);
  let view = created.body.data;
  for (let polls = 0; view.status === 'running'; polls++) {
    await new Promise((r) => setTimeout(r, 1000));
    view = (
      await call<{ data: CampaignView }>(
        'GET',
        `${stack.apiUrl}/business-accounts/${t.account.wabaId}/campaigns/${id}`,
        undefined,
        t.operator.cookie,
      )
    ).body.data;
    if (polls % 10 === 9)
      log(
        `  ${label}: ${JSON.stringify(view.counts)} after ${((Date.now() - t0) / 1000).toFixed(0)} s (load ${load1()})`,
      );
    if (Date.now() - t0 > 600_000) throw new Error(`${label} still running after 600 s`);
  }
  const runMs = Date.now() - t0 - createMs;
  const loadAvgEnd = load1();
  const span = await stack.db.query<{ first: Date; last: Date; n: string; recipients: string }>(
    `SELECT min(accepted_at) AS first, max(accepted_at) AS last, count(*) AS n, count(DISTINCT "to") AS recipients FROM messages WHERE campaign_id = $1 AND upstream_message_id IS NOT NULL`,
    [id],
  );
  const s = span.rows[0]!;
  const sendSpanS = (s.last.getTime() - s.first.getTime()) / 1000;
  const pacingAfter = await pacingHistogram(stack);
  const { data } = (await call('GET', `${stack.simUrl}/_sim/sends`)).body as {
    data: {
      phoneNumberId: string;
      at: string;
      body: { to?: string };
      response: { status: number; body: { error?: { code?: number } } };
    }[];
  };
  const mine = data.filter((d) => d.phoneNumberId === t.account.phoneNumberId);
  const accepted = new Map<string, number>();
  let refused = 0;
  for (const d of mine) {
    if (d.response.status === 200) accepted.set(d.body.to ?? '', (accepted.get(d.body.to ?? '') ?? 0) + 1);
    if (d.response.body?.error?.code === 130429) refused++;
  }
  const wanted = new Set(tos.map((to) => `+${to}`));
  const upstreamAccepted = [...accepted.keys()].filter((to) => wanted.has(to)).length;
  const upstreamTwice = [...accepted.entries()].filter(([to, c]) => wanted.has(to) && c > 1).length;
  const arrived = arrivals(mine.map((d) => Date.parse(d.at)));
  const run: CampaignRun = {
    recipients: n,
    createMs,
    runMs,
    sendSpanS,
    ratePerSecond: Number(s.n) / Math.max(0.001, sendSpanS),
    counts: view.counts,
    upstreamAccepted,
    upstreamTwice,
    upstream130429: refused,
    storedMessages: Number(s.n),
    ...arrived,
    pacing: pacingAfter.size > 0 ? pacingSummary(pacingBefore, pacingAfter) : null,
    loadAvgStart,
    loadAvgEnd,
  };
  log(
    `${label}: completed ${(runMs / 1000).toFixed(1)} s after creation; sends over ${sendSpanS.toFixed(1)} s = ${fmt(run.ratePerSecond)}/s; Meta accepted ${upstreamAccepted} recipients (twice: ${upstreamTwice}), 130429: ${refused}; counts ${JSON.stringify(view.counts)}; load ${loadAvgStart} → ${loadAvgEnd}`,
  );
  log(
    `${label}: at the simulator, busiest 1 s ${arrived.busiestSecond} sends, busiest 100 ms ${arrived.busiest100ms}; worker slots ${run.pacing ? JSON.stringify(run.pacing) : 'n/a (build without the pacing histogram)'}`,
  );
  return run;
}

await runBench(
  {
    name: 'campaigns',
    simulatorWebhooks: false,
    limitMs: 1_200_000,
    env: {
      ACCOUNT_RATE_LIMIT_PER_SECOND: '1000000',
      ACCOUNT_RATE_LIMIT_BURST: '1000000',
      DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE ?? '20',
      METRICS_TOKEN,
    },
  },
  async (stack) => {
    const m = machine();
    printMachine(m);

    // 1. 100,000 recipients at HIGH.
    const high = await stack.onboard('-high');
    await setLevel(stack, high, 'HIGH');
    await waitUntilQuiet(1.2, 30_000);
    const meter = new CpuMeter(() => stack.cpuLabels());
    meter.begin();
    const big = await runCampaign(stack, high, `HIGH campaign`, CAMPAIGN_SIZE, '4478');
    const bigCpu = meter.end();
    console.log(formatCpu(bigCpu));

    // 2. STANDARD (80/s).
    const standard = await stack.onboard('-standard', 'STANDARD');
    await waitUntilQuiet(1.2, 30_000);
    const slow = await runCampaign(stack, standard, 'STANDARD campaign', STANDARD_SIZE, '4476');

    // 3. POST /messages over several HIGH numbers, pacing on / off / on.
    const tenants: Tenant[] = [];
    for (let i = 0; i < NUMBERS; i++) {
      const t = await stack.onboard(`-send${i}`);
      await setLevel(stack, t, 'HIGH');
      tenants.push(t);
    }
    stack.opts.env = { ...stack.opts.env, PACING_ENABLED: 'false' };
    await stack.startApis(1);
    const [paced, unpaced] = stack.apiUrls;
    if (!paced || !unpaced) throw new Error('the campaigns bench needs two API processes');
    let n = 0;
    const requests: RequestSpec[] = [
      {
        method: 'POST',
        path: '/messages',
        setupRequest: (req) => {
          const t = tenants[n % tenants.length]!;
          return {
            ...req,
            headers: {
              ...req.headers,
              'content-type': 'application/json',
              'x-access-key': t.key.accessKey,
              'x-secret-key': t.key.secretKey,
            },
            body: JSON.stringify({
              phoneNumberId: t.account.phoneNumberId,
              to: `4475${String(n++ % 1_000_000).padStart(7, '0')}`,
              type: 'template',
              templateName: 'hello_world',
              templateLanguage: 'en_US',
            }),
          };
        },
      },
    ];
    await load('warm-up (paced API)', { url: paced, connections: 16, amount: 2000, requests });
    await load('warm-up (unpaced API)', { url: unpaced, connections: 16, amount: 2000, requests });
    const sends: { label: string; s: LoadSummary; loadAvg: string }[] = [];
    for (const [label, url] of [
      ['pacing on', paced],
      ['pacing off', unpaced],
      ['pacing on (again)', paced],
    ] as const) {
      await waitUntilQuiet(1.2, 30_000);
      const loadAvg = load1();
      sends.push({
        label,
        s: await load(`POST /messages over ${NUMBERS} HIGH numbers, ${label}`, {
          url,
          connections: CONNECTIONS,
          duration: DURATION_S,
          requests,
        }),
        loadAvg,
      });
    }
    const on = (sends[0]!.s.okPerSecond + sends[2]!.s.okPerSecond) / 2;
    const off = sends[1]!.s.okPerSecond;
    const refused = await stack.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM messages WHERE error_code = 130429 AND campaign_id IS NULL`,
    );
    stack.assertAlive();

    console.log('\nTargets');
    const checks = [
      check(
        '100k campaign at HIGH',
        '≤ 110 s',
        `${fmt(big.runMs / 1000)} s after creation (created in ${fmt(big.createMs / 1000)} s; ${fmt(big.ratePerSecond, 0)}/s over ${fmt(big.sendSpanS)} s)`,
        big.runMs <= 110_000,
      ),
      check('100k campaign: no upstream 130429', '0', String(big.upstream130429), big.upstream130429 === 0),
      check(
        '100k campaign: each recipient exactly once',
        `${CAMPAIGN_SIZE} accepted once, 0 twice`,
        `${big.upstreamAccepted} accepted, ${big.upstreamTwice} twice, ${big.storedMessages} stored sent`,
        big.upstreamAccepted === CAMPAIGN_SIZE && big.upstreamTwice === 0 && big.storedMessages === CAMPAIGN_SIZE,
      ),
      check(
        'STANDARD campaign rate',
        '≥ 76/s (95 % of 80/s)',
        `${fmt(slow.ratePerSecond)}/s over ${fmt(slow.sendSpanS)} s (${slow.upstream130429} × 130429)`,
        slow.ratePerSecond >= 76 && slow.upstream130429 === 0,
      ),
      check(
        'POST /messages over HIGH numbers',
        'pacing on within 10 % of off',
        `on ${fmt(on, 0)}/s (${fmt(sends[0]!.s.okPerSecond, 0)}, ${fmt(sends[2]!.s.okPerSecond, 0)}), off ${fmt(off, 0)}/s: ${fmt((on / off - 1) * 100)} %`,
        on >= off * 0.9,
      ),
      check('POST /messages: no 130429 stored', '0', refused.rows[0]!.n, refused.rows[0]!.n === '0'),
    ];
    writeResult('campaigns', {
      machine: m,
      config: { CAMPAIGN_SIZE, STANDARD_SIZE, NUMBERS, DURATION_S, CONNECTIONS },
      big,
      bigCpu,
      slow,
      sends,
      checks,
    });
  },
);
