// Item 1 of issue 7: POST /messages (template hello_world en_US, no parameters, varied recipients) against the
// simulator with its webhooks off: saturation throughput, then latency at a fixed 500 requests/s.
//
//   npm run bench:send        (env: BENCH_DURATION=15 BENCH_CONNECTIONS=64 BENCH_RATE=500 BENCH_APIS=1 BENCH_NUMBERS=4)
//
// The sends go round-robin over BENCH_NUMBERS HIGH numbers (1,000/s each at Meta), one business account and key pair
// each, so that neither the service nor the reference meets a number's tier: the figure is the code's, not Meta's cap.
//
// Then the durable-send reference (bench/reference/durable-send.mjs: key check from memory, the pacing slot, INSERT
// pending, the call to the simulator on keep-alive, UPDATE sent) on the same PostgreSQL, Redis and simulator, at
// saturation with the same requests: our saturation figure as a share of it (issue 40: ≥ 70 %). BENCH_REFERENCE=0
// skips it.
import { CpuMeter, formatCpu } from './lib/cpu.js';
import { paced } from './lib/paced.js';
import { templateSends } from './lib/send-requests.js';
import { check, fmt, load, machine, printMachine, writeResult } from './lib/report.js';
import { runBench } from './lib/bench.js';
import { startDurableSendReference } from './lib/durable-send-reference.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const RATE = Number(process.env.BENCH_RATE ?? 500);
/** API processes; with more than one the load is spread over their ports. */
const APIS = Number(process.env.BENCH_APIS ?? 1);
/** HIGH numbers the sends are spread over (one tenant each). */
const NUMBERS = Number(process.env.BENCH_NUMBERS ?? 4);
/** Meta's throughput of one HIGH number (sends per second). */
const HIGH_TIER = 1000;

await runBench({ name: 'send', apis: APIS, simulatorWebhooks: false, limitMs: 180_000 }, async (stack) => {
  const m = machine();
  printMachine(m);
  const tenants = [];
  for (let i = 0; i < NUMBERS; i++) tenants.push(await stack.onboard(NUMBERS === 1 ? '' : `-n${i}`));

  // Recipients 447700000000…447700099999.
  const { requests, headers } = templateSends(tenants, '4477000');
  const url = APIS === 1 ? stack.apiUrl : stack.apiUrls;

  // Long enough for the JIT to settle (a cold process is several times slower per request).
  const warm = await load('warm-up', { url, connections: 16, amount: 1500, headers, requests });
  const meter = new CpuMeter(() => stack.cpuLabels());
  meter.begin();
  const saturation = await load('saturation', {
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers,
    requests,
  });
  const saturationCpu = meter.end();
  console.log(formatCpu(saturationCpu));
  meter.begin();
  // Evenly paced by our own generator (autocannon's overallRate sends the rate in bursts once a second, see lib/paced.ts).
  const fixed = await paced(`fixed ${RATE}/s`, {
    url,
    connections: 50,
    durationS: DURATION_S,
    rate: RATE,
    headers,
    requests,
  });
  const fixedCpu = meter.end();
  console.log(formatCpu(fixedCpu));

  // Every acknowledged send is a stored message with status sent (requests still in flight when a run ended
  // finish on the server a moment later).
  await new Promise((r) => setTimeout(r, 2000));
  const stored = await stack.db.query<{ status: string; n: string }>(
    'SELECT status, count(*) AS n FROM messages WHERE business_account_id = ANY($1) GROUP BY status',
    [tenants.map((t) => t.account.businessAccountId)],
  );
  const byStatus = Object.fromEntries(stored.rows.map((r) => [r.status, Number(r.n)]));
  const acked = warm.ok2xx + saturation.ok2xx + fixed.ok2xx;
  console.log(`  stored messages by status: ${JSON.stringify(byStatus)}; acknowledged sends (200): ${acked}`);
  stack.assertAlive();

  // The durable-send reference, on the same engines, the API idle meanwhile.
  let reference: { saturation: Awaited<ReturnType<typeof load>>; cpu: ReturnType<CpuMeter['end']> } | undefined;
  if (process.env.BENCH_REFERENCE !== '0') {
    const refUrl = await startDurableSendReference(
      stack,
      tenants.map((t) => ({
        accessKey: t.key.accessKey,
        secretKey: t.key.secretKey,
        businessAccountId: t.account.businessAccountId,
        accessToken: t.account.accessToken,
      })),
    );
    await load('reference warm-up', { url: refUrl, connections: 16, amount: 1500, headers, requests });
    meter.begin();
    const refSaturation = await load('reference saturation', {
      url: refUrl,
      connections: CONNECTIONS,
      duration: DURATION_S,
      headers,
      requests,
    });
    reference = { saturation: refSaturation, cpu: meter.end() };
    console.log(formatCpu(reference.cpu));
    console.log(
      `\n  our sends: ${fmt(saturation.okPerSecond, 0)}/s = ${fmt((saturation.okPerSecond / refSaturation.okPerSecond) * 100, 1)}% of the durable-send reference (${fmt(refSaturation.okPerSecond, 0)}/s, p99 ${fmt(refSaturation.latencyMs.p99)} ms; ours p99 ${fmt(saturation.latencyMs.p99)} ms)`,
    );
  }

  // A HIGH number sends at most 1,000/s: a reference at 90 % of the numbers' sum is capped by the tier, not its code.
  const atTier = reference !== undefined && reference.saturation.okPerSecond >= 0.9 * HIGH_TIER * NUMBERS;
  console.log('\nTargets');
  const checks = [
    check(
      'saturation throughput',
      '≥ 1000 sends/s',
      `${fmt(saturation.okPerSecond, 0)}/s (${saturation.non2xx} non-2xx, ${saturation.errors} errors)`,
      saturation.okPerSecond >= 1000 && saturation.non2xx === 0,
    ),
    check(
      `latency p99 at ${RATE}/s`,
      '< 50 ms',
      `${fmt(fixed.latencyMs.p99)} ms (p50 ${fmt(fixed.latencyMs.p50)} ms, achieved ${fmt(fixed.okPerSecond, 0)}/s)`,
      fixed.latencyMs.p99 < 50 && fixed.okPerSecond >= RATE * 0.95,
    ),
    ...(reference
      ? [
          check(
            'saturation against the durable-send reference (issue 40)',
            '≥ 70 %, p99 ≤ 2×',
            `${fmt((saturation.okPerSecond / reference.saturation.okPerSecond) * 100, 1)}% (${fmt(saturation.okPerSecond, 0)} of ${fmt(reference.saturation.okPerSecond, 0)}/s), p99 ${fmt(saturation.latencyMs.p99)} vs ${fmt(reference.saturation.latencyMs.p99)} ms${atTier ? `; not a verdict: the reference is at the numbers' tier (${NUMBERS} × ${HIGH_TIER}/s), so the ratio measures the tier, not the code` : ''}`,
            !atTier &&
              saturation.okPerSecond >= 0.7 * reference.saturation.okPerSecond &&
              saturation.latencyMs.p99 <= 2 * reference.saturation.latencyMs.p99,
          ),
        ]
      : []),
  ];
  writeResult('send', {
    machine: m,
    config: { DURATION_S, CONNECTIONS, RATE, APIS, NUMBERS },
    saturation,
    saturationCpu,
    fixed,
    fixedCpu,
    storedByStatus: byStatus,
    acked,
    reference,
    checks,
  });
});
