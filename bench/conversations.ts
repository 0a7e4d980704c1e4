// Issue 26: conversations for customer backends. Three measurements on 1 API + 1 worker process:
//
// 1. wake: signed single-status deliveries at an even BENCH_CONV_RATE (300/s) to one account (the ingest load)
//    and customers' messages at BENCH_CONV_INBOUND_RATE (20/s) to another, whose key pair is followed by
//    BENCH_CONV_POLLERS (4) long-polling clients (GET /messages?after=…&wait=25). Per inbound message and client:
//    the time from the webhook's 200 to the client holding the message (one clock: this process). Every client
//    must see every inbound message exactly once. Target: p99 ≤ 1 s.
// 2. idle: BENCH_CONV_IDLE_POLLS (1,000) long polls over BENCH_CONV_ACCOUNTS (20) accounts' key pairs, held for
//    BENCH_CONV_IDLE_S (15) s while nothing happens: CPU of the API process and PostgreSQL. Target: < 5 % of a core.
// 3. ingest: single-status deliveries at saturation (the `npm run bench` ingest row's shape) with the messages
//    triggers of this issue on and off (same run, same machine, after a warm-up phase, in the order on, off, off, on), and customers' messages at
//    saturation (each stored as an event and an inbound message row).
// 4. triggers: the row trigger's cost in PostgreSQL alone, one UPDATE of 20,000 messages on and off
//    (BENCH_CONV_ONLY=triggers runs this alone).
//
//   npm run bench:conversations   (env above, BENCH_CONV_INGEST=6000 deliveries per ingest phase)
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { signedDelivery } from '../simulator/payloads/signature.js';
import { inboundWebhook } from '../simulator/payloads/webhooks.js';
import { CpuMeter, formatCpu, waitUntilQuiet } from './lib/cpu.js';
import { ingestPhase } from './lib/ingest.js';
import { check, fmt, load, machine, printMachine, writeResult, type Check } from './lib/report.js';
import { log, runBench, sleep, type Stack, type Tenant } from './lib/bench.js';
import { benchPhone, deliveryRequests, StatusPlan, type Delivery } from './lib/webhooks.js';

const RATE = Number(process.env.BENCH_CONV_RATE ?? 300);
const INBOUND_RATE = Number(process.env.BENCH_CONV_INBOUND_RATE ?? 20);
const LOAD_S = Number(process.env.BENCH_CONV_LOAD_S ?? 15);
const POLLERS = Number(process.env.BENCH_CONV_POLLERS ?? 4);
const IDLE_POLLS = Number(process.env.BENCH_CONV_IDLE_POLLS ?? 1000);
const ACCOUNTS = Number(process.env.BENCH_CONV_ACCOUNTS ?? 20);
const IDLE_S = Number(process.env.BENCH_CONV_IDLE_S ?? 15);
const INGEST = Number(process.env.BENCH_CONV_INGEST ?? 6000);
const TRIGGERS = ['messages_changed_xid', 'messages_feed_notify_insert', 'messages_feed_notify_update'];

interface FeedItem {
  id: number;
  direction: string;
  upstreamMessageId: string | null;
}

const keyHeaders = (t: Tenant) => ({ 'x-access-key': t.key.accessKey, 'x-secret-key': t.key.secretKey });

async function feed(
  url: string,
  t: Tenant,
  after: string,
  wait: number,
): Promise<{ items: FeedItem[]; nextCursor: string }> {
  const res = await fetch(`${url}/messages?after=${encodeURIComponent(after)}&wait=${wait}&limit=100`, {
    headers: keyHeaders(t),
  });
  const body = (await res.json()) as { data?: { items: FeedItem[]; nextCursor: string } };
  if (res.status !== 200 || !body.data)
    throw new Error(`messages feed → ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  return body.data;
}

/** The cursor at the end of an account's feed now. */
async function endOf(url: string, t: Tenant): Promise<string> {
  let cursor = '0';
  for (;;) {
    const page = await feed(url, t, cursor, 0);
    if (page.items.length === 0) return cursor;
    cursor = page.nextCursor;
  }
}

/** Customers' text messages to the tenant's number, one signed delivery each (distinct wamids). */
function inboundDeliveries(
  stack: Stack,
  t: Tenant,
  tag: string,
  n: number,
): { deliveries: Delivery[]; wamids: string[] } {
  const phone = benchPhone(t.account.phoneNumberId);
  const wamids: string[] = [];
  const deliveries = Array.from({ length: n }, (_, i) => {
    const from = `4479${String(i).padStart(8, '0')}`;
    const wamid = `wamid.${tag}.${i}`;
    wamids.push(wamid);
    return signedDelivery(
      inboundWebhook(t.account.wabaId, phone, {
        from,
        id: wamid,
        timestamp: Math.floor(Date.now() / 1000),
        text: `question ${i}`,
        name: 'Bench',
      }),
      stack.appSecret,
    );
  });
  return { deliveries, wamids };
}

function pct(sorted: number[], p: number): number {
  return sorted.length === 0
    ? NaN
    : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Posts `d` to the API at its due time (open loop); resolves with the time of the 200 (NaN otherwise). */
function post(agent: http.Agent, url: URL, d: Delivery): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/webhooks/whatsapp',
        agent,
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': d.signature,
          'content-length': d.body.length,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 ? performance.now() : NaN));
      },
    );
    req.on('error', () => resolve(NaN));
    req.end(d.body);
  });
}

async function wakePhase(stack: Stack, loadTenant: Tenant, inbox: Tenant) {
  const url = stack.apiUrl;
  const statuses = new StatusPlan(`conv${stack.runId}`, Math.round(RATE * LOAD_S));
  await statuses.seedMessages(stack.db, loadTenant.account.businessAccountId, loadTenant.account.phoneNumberId);
  const statusDeliveries = statuses.deliveries(
    loadTenant.account.wabaId,
    loadTenant.account.phoneNumberId,
    1,
    stack.appSecret,
  );
  const { deliveries: inbound, wamids } = inboundDeliveries(
    stack,
    inbox,
    `convin${stack.runId}`,
    Math.round(INBOUND_RATE * LOAD_S),
  );

  // Long-polling clients of the inbox account, from the end of its feed.
  const start = await endOf(url, inbox);
  let stopped = false;
  const held = Array.from({ length: POLLERS }, () => new Map<string, number>());
  let duplicates = 0;
  let requests = 0;
  const pollers = held.map(async (mine) => {
    let cursor = start;
    while (!stopped) {
      requests++;
      const page = await feed(url, inbox, cursor, 25);
      const now = performance.now();
      for (const item of page.items) {
        if (item.direction !== 'inbound' || !item.upstreamMessageId) continue;
        if (mine.has(item.upstreamMessageId)) duplicates++;
        else mine.set(item.upstreamMessageId, now);
      }
      cursor = page.nextCursor;
    }
  });

  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const target = new URL(url);
  const ackedAt = new Map<string, number>();
  const inflight: Promise<unknown>[] = [];
  log(
    `wake: ${statusDeliveries.length} status deliveries at ${RATE}/s to one account, ${inbound.length} customers' messages at ${INBOUND_RATE}/s to another, ${POLLERS} long-polling clients`,
  );
  const meter = new CpuMeter(() => stack.cpuLabels());
  meter.begin();
  const t0 = performance.now();
  const everyInbound = Math.max(1, Math.round(RATE / INBOUND_RATE));
  for (let i = 0, k = 0; i < statusDeliveries.length; i++) {
    const ahead = t0 + (i * 1000) / RATE - performance.now();
    if (ahead > 1) await sleep(ahead);
    inflight.push(post(agent, target, statusDeliveries[i]!));
    if (i % everyInbound === 0 && k < inbound.length) {
      const n = k++;
      inflight.push(post(agent, target, inbound[n]!).then((at) => Number.isFinite(at) && ackedAt.set(wamids[n]!, at)));
    }
  }
  await Promise.all(inflight);
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline && held.some((m) => [...ackedAt.keys()].some((w) => !m.has(w)))) await sleep(100);
  const cpu = meter.end();
  stopped = true;
  agent.destroy();
  await Promise.race([Promise.all(pollers), sleep(26_000)]);

  const latencies: number[] = [];
  let missing = 0;
  for (const m of held)
    for (const [w, at] of ackedAt) {
      const h = m.get(w);
      if (h === undefined) missing++;
      else latencies.push(Math.max(0, h - at));
    }
  latencies.sort((a, b) => a - b);
  const stored = await stack.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM messages WHERE direction = 'inbound' AND upstream_message_id LIKE $1`,
    [`wamid.convin${stack.runId}.%`],
  );
  const result = {
    inbound: inbound.length,
    acked: ackedAt.size,
    storedRows: Number(stored.rows[0]!.n),
    latencyMs: {
      p50: pct(latencies, 50),
      p90: pct(latencies, 90),
      p99: pct(latencies, 99),
      max: latencies.at(-1) ?? NaN,
      samples: latencies.length,
    },
    missing,
    duplicates,
    requests,
  };
  const l = result.latencyMs;
  log(
    `wake: 200 → client holds the message p50 ${fmt(l.p50)} ms, p90 ${fmt(l.p90)} ms, p99 ${fmt(l.p99)} ms, max ${fmt(l.max)} ms over ${l.samples}; missing ${missing}, duplicates ${duplicates}; rows ${result.storedRows}/${result.inbound}`,
  );
  console.log(formatCpu(cpu));
  return { ...result, cpu };
}

async function idlePhase(stack: Stack, tenants: Tenant[]) {
  const url = stack.apiUrl;
  const cursors = await Promise.all(tenants.map((t) => endOf(url, t)));
  const agent = new http.Agent({ keepAlive: true, maxSockets: IDLE_POLLS + 10 });
  const target = new URL(url);
  let answered = 0;
  let refused = 0;
  const polls = Array.from({ length: IDLE_POLLS }, (_, i) => {
    const t = tenants[i % tenants.length]!;
    return new Promise<void>((resolve) => {
      const req = http.get(
        {
          host: target.hostname,
          port: target.port,
          path: `/messages?after=${encodeURIComponent(cursors[i % tenants.length]!)}&wait=30`,
          agent,
          headers: keyHeaders(t),
        },
        (res) => {
          if (res.statusCode === 200) answered++;
          else refused++;
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', () => resolve());
    });
  });
  await sleep(3000); // every poll registered and past its first read
  const quiet = await waitUntilQuiet(0.5, 5000);
  const meter = new CpuMeter(() => stack.cpuLabels());
  meter.begin();
  await sleep(IDLE_S * 1000);
  const cpu = meter.end();
  const early = answered + refused;
  log(
    `idle: ${IDLE_POLLS} long polls over ${tenants.length} accounts for ${IDLE_S} s; answered early ${early} (refused ${refused}); machine idle ${quiet.idleCores} cores before`,
  );
  console.log(formatCpu(cpu));
  await Promise.race([Promise.all(polls), sleep(35_000)]);
  agent.destroy();
  return { polls: IDLE_POLLS, accounts: tenants.length, seconds: IDLE_S, answeredEarly: early, refused, cpu };
}

async function setTriggers(stack: Stack, on: boolean): Promise<void> {
  for (const t of TRIGGERS) await stack.db.query(`ALTER TABLE messages ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${t}`);
}

/**
 * The row trigger's own cost on the status write, in PostgreSQL alone: one UPDATE of ROWS messages' status and
 * pricing (every row's followed columns change, so the trigger fires for each), triggers on and off in turn.
 */
async function triggerCost(stack: Stack, t: Tenant) {
  const ROWS = 20_000;
  const tag = `convtc${stack.runId}`;
  await stack.db.query(
    `INSERT INTO messages (business_account_id, phone_number_id, "to", type, status, upstream_message_id, updated_at)
     SELECT $1::uuid, $2, '4477' || lpad(i::text, 8, '0'), 'text', 'sent', $3 || i, now() FROM generate_series(1, $4::int) AS i`,
    [t.account.businessAccountId, t.account.phoneNumberId, `wamid.${tag}.`, ROWS],
  );
  const ms: Record<'on' | 'off', number[]> = { on: [], off: [] };
  let status = 'delivered';
  for (let round = 0; round < 6; round++) {
    const on = round % 2 === 0;
    await setTriggers(stack, on);
    status = status === 'delivered' ? 'read' : 'delivered';
    const t0 = performance.now();
    await stack.db.query(
      `UPDATE messages SET status = $2, pricing_category = $3, updated_at = now() WHERE business_account_id = $1 AND upstream_message_id LIKE $4`,
      [t.account.businessAccountId, status, `c${round}`, `wamid.${tag}.%`],
    );
    ms[on ? 'on' : 'off'].push(performance.now() - t0);
  }
  await setTriggers(stack, true);
  const best = { on: Math.min(...ms.on), off: Math.min(...ms.off) };
  const perRowUs = ((best.on - best.off) * 1000) / ROWS;
  log(
    `trigger cost: UPDATE of ${ROWS} rows best of 3: ${fmt(best.on)} ms with the triggers, ${fmt(best.off)} ms without: ${fmt(perRowUs, 2)} µs per row`,
  );
  return { rows: ROWS, ms, best, perRowUs };
}

async function inboundIngest(stack: Stack, t: Tenant) {
  const tag = `convii${stack.runId}`;
  const { deliveries } = inboundDeliveries(stack, t, tag, INGEST);
  const { requests } = deliveryRequests(deliveries);
  const t0 = Date.now();
  const summary = await load('inbound ingest (saturation)', {
    url: stack.apiUrl,
    connections: 64,
    amount: deliveries.length,
    requests,
  });
  const loadS = (Date.now() - t0) / 1000;
  let rows = 0;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    rows = Number(
      (
        await stack.db.query<{ n: string }>(
          `SELECT count(*) AS n FROM messages WHERE direction = 'inbound' AND upstream_message_id LIKE $1`,
          [`wamid.${tag}.%`],
        )
      ).rows[0]!.n,
    );
    if (rows >= deliveries.length) break;
    await sleep(100);
  }
  const endToEndS = (Date.now() - t0) / 1000;
  log(
    `inbound ingest: ${summary.ok2xx} acked in ${fmt(loadS)} s; ${rows} inbound rows stored ${fmt(endToEndS)} s after the first POST (${fmt(rows / endToEndS, 0)} messages/s end to end)`,
  );
  return {
    acked: summary.ok2xx,
    ackedPerSecond: summary.ok2xx / loadS,
    rows,
    storedPerSecond: rows / endToEndS,
    latencyMs: summary.latencyMs,
  };
}

await runBench({ name: 'conversations', apis: 1, limitMs: 900_000 }, async (stack) => {
  const m = machine();
  printMachine(m);
  const tenants: Tenant[] = [];
  const accounts = process.env.BENCH_CONV_ONLY === 'triggers' ? 1 : Math.max(2, ACCOUNTS);
  for (let i = 0; i < accounts; i++) tenants.push(await stack.onboard(`-${i}`));
  log(`${tenants.length} accounts onboarded`);

  if (process.env.BENCH_CONV_ONLY === 'triggers') {
    writeResult('conversations-triggers', { machine: m, triggers: await triggerCost(stack, tenants[0]!) });
    return;
  }
  const wake = await wakePhase(stack, tenants[0]!, tenants[1]!);
  const idle = await idlePhase(stack, tenants);

  const ingest: Record<string, { ackedPerSecond: number; processedPerSecond: number | null; exact: boolean }[]> = {
    on: [],
    off: [],
  };
  // A warm-up phase first (not counted: the first phase of a run was the slowest whatever its setting, 2,913/s against
  // 4,225–4,399/s), then on, off, off, on, so that drift over the run weighs on both settings alike.
  await ingestPhase(stack, tenants[2 % tenants.length]!, {
    label: 'statuses warm-up',
    deliveries: INGEST,
    perDelivery: 1,
    connections: 64,
    urls: stack.apiUrls,
    processLimitMs: 120_000,
  });
  for (const [round, on] of [true, false, false, true].entries()) {
    await setTriggers(stack, on);
    const r = await ingestPhase(stack, tenants[2 % tenants.length]!, {
      label: `statuses triggers ${on ? 'on' : 'off'} ${round + 1}`,
      deliveries: INGEST,
      perDelivery: 1,
      connections: 64,
      urls: stack.apiUrls,
      processLimitMs: 120_000,
    });
    ingest[on ? 'on' : 'off']!.push({
      ackedPerSecond: r.ackedPerSecond,
      processedPerSecond: r.processedPerSecond,
      exact: r.exact,
    });
  }
  await setTriggers(stack, true);
  const inbound = await inboundIngest(stack, tenants[3 % tenants.length]!);
  const triggers = await triggerCost(stack, tenants[4 % tenants.length]!);

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const acked = {
    on: mean(ingest.on!.map((r) => r.ackedPerSecond)),
    off: mean(ingest.off!.map((r) => r.ackedPerSecond)),
  };
  const processed = {
    on: mean(ingest.on!.map((r) => r.processedPerSecond ?? 0)),
    off: mean(ingest.off!.map((r) => r.processedPerSecond ?? 0)),
  };
  const idleCores = (idle.cpu?.cores.api ?? 0) + (idle.cpu?.cores.postgres ?? 0);
  const l = wake.latencyMs;
  console.log('\nTargets');
  const checks: Check[] = [
    check(
      `long poll wakes after an inbound message is stored, p99 (statuses at ${RATE}/s)`,
      '≤ 1,000 ms',
      `${fmt(l.p99)} ms (p50 ${fmt(l.p50)}, max ${fmt(l.max)})`,
      l.p99 <= 1000,
    ),
    check(
      'every client held every inbound message once',
      '0 missing, 0 duplicated',
      `missing ${wake.missing}, duplicated ${wake.duplicates}`,
      wake.missing === 0 && wake.duplicates === 0,
    ),
    check(
      `${IDLE_POLLS} idle long polls over ${idle.accounts} accounts: API + PostgreSQL CPU`,
      '< 0.05 cores',
      `${fmt(idleCores, 3)} cores (API ${fmt(idle.cpu?.cores.api ?? 0, 3)}, PostgreSQL ${fmt(idle.cpu?.cores.postgres ?? 0, 3)})`,
      idleCores < 0.05,
    ),
    check(
      'status ingest with the messages triggers vs without (acked/s, same run)',
      '≥ 90 %',
      `${fmt(acked.on, 0)} vs ${fmt(acked.off, 0)} (${fmt((100 * acked.on) / acked.off)} %)`,
      acked.on >= 0.9 * acked.off,
    ),
    check(
      'status ingest processed end to end, triggers on vs off',
      '≥ 90 %',
      `${fmt(processed.on, 0)} vs ${fmt(processed.off, 0)} events/s (${fmt((100 * processed.on) / processed.off)} %)`,
      processed.on >= 0.9 * processed.off,
    ),
  ];
  writeResult('conversations', {
    machine: m,
    config: { RATE, INBOUND_RATE, LOAD_S, POLLERS, IDLE_POLLS, ACCOUNTS, IDLE_S, INGEST },
    wake,
    idle,
    ingest,
    inbound,
    triggers,
    checks,
  });
});
