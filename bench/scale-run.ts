// One run of `npm run bench:scale` (bench/scale.ts runs it once per topology, side by side): the ingest run and a
// duplicate storm with two API processes and two worker processes, load split across both API ports: counts exact,
// throughput, no event processed twice; then sends at saturation through both APIs. BENCH_TOPOLOGY=scaled runs it on
// the hosted topology (PgBouncer before a primary with a streaming replica, a Redis Cluster of 3 + 3), otherwise on one
// PostgreSQL and one Redis. "Processed twice" is observed directly: on a database this bench started, an audit trigger
// records every claim of an event (processed false → true, or stored already processed by the transaction that
// applied it), and each event must have exactly one.
//
//   npm run bench:scale     (env: BENCH_SINGLES, BENCH_BATCHES, BENCH_STORM, BENCH_STORM_BATCHES: fixed counts instead of
//                            ~BENCH_LOAD_S seconds of load sized from a warm-up; BENCH_COPIES=4 BENCH_CONNECTIONS=64;
//                            BENCH_SEND_S=10 seconds of sends)
//   BENCH_TOPOLOGY=scaled tsx bench/scale-run.ts     (one topology only)
import { ingestPhase, sized, type PhaseResult } from './lib/ingest.js';
import { check, fmt, load, machine, printMachine, writeResult, type Check } from './lib/report.js';
import { TOPOLOGY, log, runBench, type Stack, type Tenant } from './lib/bench.js';
import { templateSends } from './lib/send-requests.js';
import { CpuMeter, formatCpu } from './lib/cpu.js';

const COPIES = Number(process.env.BENCH_COPIES ?? 4);
const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const SEND_S = Number(process.env.BENCH_SEND_S ?? 10);

const AUDIT_SQL = `
CREATE TABLE IF NOT EXISTS bench_claims (event_id bigint NOT NULL, backend_pid int NOT NULL DEFAULT pg_backend_pid(), at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE OR REPLACE FUNCTION bench_claim_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bench_claims (event_id) VALUES (NEW.id);
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bench_claim_audit ON events;
CREATE TRIGGER bench_claim_audit AFTER UPDATE OF processed ON events
  FOR EACH ROW WHEN (NEW.processed AND OLD.processed IS DISTINCT FROM NEW.processed) EXECUTE FUNCTION bench_claim_audit();
DROP TRIGGER IF EXISTS bench_claim_audit_insert ON events;
CREATE TRIGGER bench_claim_audit_insert AFTER INSERT ON events
  FOR EACH ROW WHEN (NEW.processed) EXECUTE FUNCTION bench_claim_audit();`;

interface Claims {
  claims: number;
  claimedEvents: number;
  claimedTwice: number;
}

async function claims(stack: Stack, tag: string): Promise<Claims> {
  const r = await stack.db.query<{ claims: string; events: string; twice: string }>(
    `SELECT count(*) AS claims, count(DISTINCT c.event_id) AS events,
            (SELECT count(*) FROM (SELECT c2.event_id FROM bench_claims c2 JOIN events e2 ON e2.id = c2.event_id
                                    WHERE e2.message_id LIKE $1 GROUP BY c2.event_id HAVING count(*) > 1) AS t) AS twice
       FROM bench_claims c JOIN events e ON e.id = c.event_id WHERE e.message_id LIKE $1`,
    [`wamid.${tag}.%`],
  );
  const row = r.rows[0]!;
  return { claims: Number(row.claims), claimedEvents: Number(row.events), claimedTwice: Number(row.twice) };
}

/** POST /messages at saturation through both APIs (hello_world to varied recipients), as bench:send does through one. */
async function sends(stack: Stack, tenant: Tenant) {
  const { requests, headers } = templateSends(tenant, '4477001');
  await load('sends warm-up', { url: stack.apiUrls, connections: 16, amount: 1500, headers, requests });
  const meter = new CpuMeter(() => stack.cpuLabels());
  meter.begin();
  const saturation = await load('sends saturation', {
    url: stack.apiUrls,
    connections: CONNECTIONS,
    duration: SEND_S,
    headers,
    requests,
  });
  const cpu = meter.end();
  console.log(formatCpu(cpu));
  return { saturation, cpu };
}

await runBench({ name: `scale-${TOPOLOGY}`, apis: 2, workers: 2, limitMs: 480_000 }, async (stack) => {
  const m = machine();
  printMachine(m);
  log(`topology: ${TOPOLOGY}`);
  const audit = !process.env.DATABASE_URL;
  if (audit) await stack.db.query(AUDIT_SQL);
  else log('DATABASE_URL given: no audit trigger installed; "processed twice" is checked through the counts only');
  const tenant = await stack.onboard();
  const urls = stack.apiUrls;

  const warm = await ingestPhase(stack, tenant, {
    label: 'warm-up',
    deliveries: 1500,
    perDelivery: 1,
    connections: CONNECTIONS,
    urls,
    processLimitMs: 60_000,
  });
  const warmBatch = await ingestPhase(stack, tenant, {
    label: 'warm-up batch100',
    deliveries: 60,
    perDelivery: 100,
    connections: CONNECTIONS,
    urls,
    processLimitMs: 60_000,
  });
  const SINGLES = sized(process.env.BENCH_SINGLES, warm.ackedPerSecond, LOAD_S, 1000, 100_000);
  // Capped so that the worker can finish within the processing limit (it handles a few hundred events per second here).
  const BATCHES = sized(process.env.BENCH_BATCHES, warmBatch.ackedPerSecond, LOAD_S * 0.3, 30, 150);
  const STORM = sized(process.env.BENCH_STORM, warm.ackedPerSecond / COPIES, LOAD_S, 500, 50_000);
  const STORM_BATCHES = sized(process.env.BENCH_STORM_BATCHES, warmBatch.ackedPerSecond / COPIES, LOAD_S * 0.3, 10, 50);
  const phases: PhaseResult[] = [];
  phases.push(
    await ingestPhase(stack, tenant, {
      label: 'single',
      deliveries: SINGLES,
      perDelivery: 1,
      connections: CONNECTIONS,
      urls,
      processLimitMs: 90_000,
    }),
  );
  phases.push(
    await ingestPhase(stack, tenant, {
      label: 'batch100',
      deliveries: BATCHES,
      perDelivery: 100,
      connections: CONNECTIONS,
      urls,
      processLimitMs: 90_000,
    }),
  );
  phases.push(
    await ingestPhase(stack, tenant, {
      label: `storm single x${COPIES}`,
      deliveries: STORM,
      perDelivery: 1,
      copies: COPIES,
      connections: CONNECTIONS,
      urls,
      processLimitMs: 90_000,
    }),
  );
  phases.push(
    await ingestPhase(stack, tenant, {
      label: `storm batch100 x${COPIES}`,
      deliveries: STORM_BATCHES,
      perDelivery: 100,
      copies: COPIES,
      connections: CONNECTIONS,
      urls,
      processLimitMs: 90_000,
    }),
  );

  const send = await sends(stack, tenant);

  const claimCounts: Record<string, Claims | null> = {};
  for (const p of phases) {
    claimCounts[p.label] = audit ? await claims(stack, p.tag) : null;
    if (claimCounts[p.label])
      console.log(`  ${p.label}: claims ${JSON.stringify(claimCounts[p.label])} for ${p.expected.events} events`);
  }
  console.log('\nTargets (2 API + 2 worker processes)');
  const checks: Check[] = [];
  for (const p of phases) {
    const c = claimCounts[p.label];
    const once = c
      ? c.claims === p.expected.events && c.claimedEvents === p.expected.events && c.claimedTwice === 0
      : true;
    checks.push(
      check(
        `${p.label}: exact counts`,
        '0 lost, 0 duplicated, all processed',
        `${p.posts} POSTs, ${p.processing.deliveriesStored} deliveries stored, events ${p.processing.eventsStored}/${p.expected.events} stored, ${p.processing.eventsProcessed} processed; lost ${p.lost}, duplicated ${p.duplicated}`,
        p.exact,
      ),
    );
    if (c)
      checks.push(
        check(
          `${p.label}: processed once`,
          'every event claimed exactly once',
          `${c.claims} claims for ${c.claimedEvents} events, ${c.claimedTwice} claimed twice`,
          once,
        ),
      );
    checks.push(
      check(
        `${p.label}: throughput`,
        'reported',
        `${fmt(p.ackedPerSecond, 0)} deliveries/s acked (p99 ${fmt(p.load.latencyMs.p99)} ms), ${fmt(p.eventsPerSecond, 0)} distinct events/s; processed ${p.processing.allProcessedAfterS === null ? 'NOT within the limit' : `${fmt(p.processing.allProcessedAfterS, 2)} s after the load`}`,
        p.processing.allProcessedAfterS !== null,
      ),
    );
  }
  checks.push(
    check(
      'sends: throughput',
      'reported, no error',
      `${fmt(send.saturation.okPerSecond, 0)} sends/s (p99 ${fmt(send.saturation.latencyMs.p99)} ms; ${send.saturation.non2xx} non-2xx, ${send.saturation.errors} errors)`,
      send.saturation.non2xx === 0 && send.saturation.errors === 0,
    ),
  );
  writeResult(`scale-${TOPOLOGY}`, {
    machine: m,
    topology: TOPOLOGY,
    config: { SINGLES, BATCHES, STORM, STORM_BATCHES, COPIES, CONNECTIONS, LOAD_S, SEND_S, apis: 2, workers: 2 },
    phases,
    sends: send,
    claims: claimCounts,
    checks,
  });
});
