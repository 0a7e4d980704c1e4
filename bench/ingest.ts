// Item 2 of issue 7: webhook ingest. Signed deliveries of one status each, then batches of 100 statuses; acked
// per second, ack latency, time until every event is processed, exact counts; and a bare node:http server as
// the ceiling, measured in the same run.
//
//   npm run bench:ingest        (env: BENCH_SINGLES, BENCH_BATCHES: fixed counts instead of ~BENCH_LOAD_S seconds of
//                                load sized from a warm-up; BENCH_CONNECTIONS=64; BENCH_INGEST_RATE=500: the rate of
//                                the fixed-rate phase, which shows the ack latency below saturation)
import path from 'node:path';
import { ingestPhase, sized, type PhaseResult } from './lib/ingest.js';
import { check, fmt, load, machine, printMachine, writeResult, type Check } from './lib/report.js';
import { CpuMeter, formatCpu } from './lib/cpu.js';
import { ROOT, freePort, log, runBench, waitFor } from './lib/bench.js';
import { StatusPlan, deliveryRequests } from './lib/webhooks.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
/** Each measured phase posts a fixed set of distinct deliveries (exact counts), sized for about this long. */
const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 10);
const CEILING_S = 10;
/** The fixed-rate phase: single-status deliveries at this rate, for the ack latency when not saturated. */
const RATE = Number(process.env.BENCH_INGEST_RATE ?? 500);

await runBench({ name: 'ingest', limitMs: 540_000 }, async (stack) => {
  const m = machine();
  printMachine(m);
  const tenant = await stack.onboard();

  // The ceiling: same load generator, same bodies and connections, a server that does nothing.
  const helloPort = await freePort();
  const hello = await stack.spawnExtra('hello', [path.join(ROOT, 'bench/lib/hello-server.mjs')], {
    HELLO_PORT: String(helloPort),
  });
  await waitFor(
    'hello server',
    async () => (await fetch(`http://127.0.0.1:${helloPort}/`, { method: 'POST', body: '{}' })).ok,
    10_000,
    [hello],
  );
  const sample = new StatusPlan('ceiling', 20_000).deliveries(
    tenant.account.wabaId,
    tenant.account.phoneNumberId,
    1,
    stack.appSecret,
  );
  const meter = new CpuMeter(() => stack.cpuLabels());
  meter.begin();
  const ceiling = await load('node:http ceiling', {
    url: `http://127.0.0.1:${helloPort}`,
    connections: CONNECTIONS,
    duration: CEILING_S,
    requests: deliveryRequests(sample).requests,
  });
  const ceilingCpu = meter.end();
  console.log(formatCpu(ceilingCpu));
  await hello.stop();

  // Warm-ups (JIT, pools), not counted: their own tags and messages; their rates size the measured phases.
  const warm = await ingestPhase(stack, tenant, {
    label: 'warm-up',
    deliveries: 1500,
    perDelivery: 1,
    connections: CONNECTIONS,
    urls: stack.apiUrls,
    processLimitMs: 60_000,
  });
  const SINGLES = sized(process.env.BENCH_SINGLES, warm.ackedPerSecond, LOAD_S, 1000, 100_000);
  const single = await ingestPhase(stack, tenant, {
    label: 'single',
    deliveries: SINGLES,
    perDelivery: 1,
    connections: CONNECTIONS,
    urls: stack.apiUrls,
    processLimitMs: 90_000,
  });
  const fixed = await ingestPhase(stack, tenant, {
    label: `single at ${RATE}/s`,
    deliveries: Math.round(RATE * LOAD_S),
    perDelivery: 1,
    connections: 16,
    urls: stack.apiUrls,
    processLimitMs: 60_000,
    rate: RATE,
  });
  const warmBatch = await ingestPhase(stack, tenant, {
    label: 'warm-up batch100',
    deliveries: 60,
    perDelivery: 100,
    connections: CONNECTIONS,
    urls: stack.apiUrls,
    processLimitMs: 60_000,
  });
  // Capped so that the worker can finish within the processing limit (it handles a few hundred events per second here).
  const BATCHES = sized(process.env.BENCH_BATCHES, warmBatch.ackedPerSecond, LOAD_S * 0.3, 30, 150);
  const batch = await ingestPhase(stack, tenant, {
    label: 'batch100',
    deliveries: BATCHES,
    perDelivery: 100,
    connections: CONNECTIONS,
    urls: stack.apiUrls,
    processLimitMs: 120_000,
  });

  const fraction = single.ackedPerSecond / ceiling.okPerSecond;
  console.log(
    `\n  our single-status ingest: ${fmt(single.ackedPerSecond, 0)}/s = ${fmt(fraction * 100, 1)}% of the bare node:http ceiling (${fmt(ceiling.okPerSecond, 0)}/s)`,
  );
  console.log('\nTargets');
  const checks: Check[] = [
    ...phaseChecks('single', single, `${fmt(single.ackedPerSecond, 0)}/s`),
    check(
      `single at ${RATE}/s: ack latency p99`,
      '< 25 ms',
      `${fmt(fixed.load.latencyMs.p99)} ms (p50 ${fmt(fixed.load.latencyMs.p50)} ms, ${fmt(fixed.ackedPerSecond, 0)}/s achieved)`,
      fixed.load.latencyMs.p99 < 25,
    ),
    check(
      `single at ${RATE}/s: all processed after load end`,
      '≤ 5 s',
      secs(fixed.processing.allProcessedAfterS),
      (fixed.processing.allProcessedAfterS ?? Infinity) <= 5,
    ),
    check(
      `single at ${RATE}/s: exact counts`,
      '0 lost, 0 duplicated',
      `lost ${fixed.lost}, duplicated ${fixed.duplicated}`,
      fixed.exact,
    ),
    ...phaseChecks('batch100', batch, `${fmt(batch.ackedPerSecond, 0)}/s (${fmt(batch.eventsPerSecond, 0)} events/s)`),
  ];
  log(`ceiling fraction ${fmt(fraction * 100, 1)}%`);
  writeResult('ingest', {
    machine: m,
    config: { SINGLES, BATCHES, CONNECTIONS, LOAD_S, RATE },
    ceiling,
    ceilingCpu,
    single,
    fixed,
    batch,
    ceilingFraction: fraction,
    checks,
  });
});

function secs(s: number | null): string {
  return s === null ? 'not within the limit' : `${fmt(s, 2)} s`;
}

/** A saturation phase's four targets: acked/s, ack p99, everything processed soon after, exact counts. */
function phaseChecks(name: string, r: PhaseResult, acked: string): Check[] {
  return [
    check(`${name}: deliveries acked/s`, '≥ 5000/s', acked, r.ackedPerSecond >= 5000),
    check(
      `${name}: ack latency p99`,
      '< 25 ms',
      `${fmt(r.load.latencyMs.p99)} ms (p50 ${fmt(r.load.latencyMs.p50)} ms)`,
      r.load.latencyMs.p99 < 25,
    ),
    check(
      `${name}: all processed after load end`,
      '≤ 5 s',
      secs(r.processing.allProcessedAfterS),
      (r.processing.allProcessedAfterS ?? Infinity) <= 5,
    ),
    check(
      `${name}: exact counts`,
      '0 lost, 0 duplicated',
      `lost ${r.lost}, duplicated ${r.duplicated}, ${r.processing.eventsProcessed}/${r.expected.events} processed${r.pending ? ` (${r.pending} still pending)` : ''}`,
      r.exact,
    ),
  ];
}
