// One webhook ingest phase, shared by bench/ingest.ts and bench/scale.ts: seed the messages, post the signed
// deliveries (optionally each several times: a duplicate storm), wait until everything is processed, count.
import { CpuMeter, formatCpu, type CpuUsage } from './cpu.js';
import { formatProfile, type DbProfile } from './db-profile.js';
import { paced } from './paced.js';
import { fmt, load, type LoadSummary } from './report.js';
import { log, type Stack, type Tenant } from './bench.js';
import { StatusPlan, deliveryRequests, maxDeliveryId, waitProcessed, type ProcessingOutcome } from './webhooks.js';

export interface PhaseOptions {
  label: string;
  /** Distinct deliveries (each carrying `perDelivery` distinct statuses). */
  deliveries: number;
  perDelivery: number;
  /** Each delivery is posted this many times, in a shuffled order (1 = no duplicates). */
  copies?: number;
  connections: number;
  /** API base URLs; connections are spread over them. */
  urls: string[];
  /** How long to wait for processing after the load. */
  processLimitMs: number;
  /** Requests per second, evenly paced (paced.ts; latency counted from each request's due time); as fast as possible when absent. */
  rate?: number;
  /**
   * Processing held during the load (bench/all.ts: the worker processes stopped by SIGSTOP from the first POST to the
   * last answer, then continued): the receive path alone on the machine, the processing after it.
   */
  hold?: { pause(): void; resume(): void };
}

export interface PhaseResult {
  label: string;
  /** The wamid tag of this phase's events (wamid.<tag>.<n>). */
  tag: string;
  posts: number;
  expected: { deliveriesStored: number; events: number; messageStatuses: Record<string, number> };
  load: LoadSummary;
  /** Acknowledged deliveries (HTTP 200) per second. */
  ackedPerSecond: number;
  /** Events carried by acknowledged deliveries per second (batches: 100 per delivery). */
  eventsPerSecond: number;
  processing: ProcessingOutcome;
  lost: number;
  duplicated: number;
  /** Events not processed (or not yet stored) when the wait ended; 0 when complete. */
  pending: number;
  messageStatuses: Record<string, number>;
  messagesExact: boolean;
  exact: boolean;
  cpuLoad: CpuUsage | null;
  cpuProcessing: CpuUsage | null;
  /** BENCH_PROFILE=1: PostgreSQL's statements and Redis's commands per acknowledged delivery, load and processing. */
  profile?: DbProfile;
  /** Distinct events processed per second, from the start of the load until the last one was processed. */
  processedPerSecond: number | null;
}

/** A fixed count from the environment, or `seconds` of load at the rate a warm-up reached (within min..max). */
export function sized(
  envValue: string | undefined,
  warmRate: number,
  seconds: number,
  min: number,
  max: number,
): number {
  if (envValue) return Number(envValue);
  return Math.max(min, Math.min(max, Math.round(warmRate * seconds)));
}

/** A fixed permutation (xorshift), so that duplicate storms are reproducible. */
function shuffled(n: number, copies: number): number[] {
  const order: number[] = [];
  for (let c = 0; c < copies; c++) for (let i = 0; i < n; i++) order.push(i);
  let x = 0x9e3779b9;
  for (let i = order.length - 1; i > 0; i--) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const j = (x >>> 0) % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

export async function ingestPhase(stack: Stack, tenant: Tenant, o: PhaseOptions): Promise<PhaseResult> {
  const copies = o.copies ?? 1;
  const tag = `b${stack.runId}${o.label.replace(/[^a-z0-9]/gi, '')}`;
  const plan = new StatusPlan(tag, o.deliveries * o.perDelivery);
  await plan.seedMessages(stack.db, tenant.account.businessAccountId, tenant.account.phoneNumberId);
  const deliveries = plan.deliveries(
    tenant.account.wabaId,
    tenant.account.phoneNumberId,
    o.perDelivery,
    stack.appSecret,
  );
  const posts = deliveries.length * copies;
  const order = copies > 1 ? shuffled(deliveries.length, copies) : undefined;
  const { requests, issued } = deliveryRequests(deliveries, order);
  const before = await maxDeliveryId(stack.db);
  log(
    `${o.label}: posting ${deliveries.length} deliveries × ${o.perDelivery} status(es)${copies > 1 ? ` × ${copies} copies` : ''} = ${posts} POSTs ` +
      `(${plan.events} distinct events) over ${o.connections} connections to ${o.urls.length} API process(es)${o.rate ? ` at ${o.rate}/s` : ''}`,
  );

  const meter = new CpuMeter(() => stack.cpuLabels());
  await stack.profiler?.begin();
  meter.begin();
  o.hold?.pause();
  let result: LoadSummary;
  try {
    // A fixed rate is paced evenly by our own generator (autocannon's overallRate sends it in bursts, see paced.ts).
    result = o.rate
      ? await paced(o.label, {
          url: o.urls,
          rate: o.rate,
          amount: posts,
          connections: Math.ceil(o.connections / o.urls.length),
          requests,
        })
      : await load(o.label, {
          url: o.urls.length === 1 ? o.urls[0]! : o.urls,
          connections: Math.min(o.connections, posts),
          amount: posts,
          requests,
        });
  } finally {
    o.hold?.resume();
  }
  const loadEndedAt = Date.now();
  const cpuLoad = meter.end();
  console.log(formatCpu(cpuLoad));
  if (issued() !== posts) throw new Error(`the load generator built ${issued()} requests for ${posts} posts`);

  meter.begin();
  const processing = await waitProcessed(stack.db, {
    afterDeliveryId: before,
    deliveries: posts,
    wabaId: tenant.account.wabaId,
    tag,
    events: plan.events,
    loadEndedAt,
    limitMs: o.processLimitMs,
  });
  const cpuProcessing = meter.end();
  // The load and the processing after it: everything the deliveries cost.
  const profile = await stack.profiler?.end(`${o.label} (load and processing)`, result.ok2xx);
  if (profile) console.log(formatProfile(profile));
  const processedRate =
    processing.allProcessedAfterS === null ? null : plan.events / (result.durationS + processing.allProcessedAfterS);
  const messageStatuses = await plan.messageStatuses(stack.db, tenant.account.businessAccountId);
  const expectedStatuses = plan.expectedMessageStatuses();
  const messagesExact = JSON.stringify(sortKeys(messageStatuses)) === JSON.stringify(sortKeys(expectedStatuses));

  const complete = processing.allProcessedAfterS !== null;
  // Events are stored by the worker: until it is done, missing ones are pending, not lost. An acknowledged
  // delivery that is not stored is lost at once.
  const deliveriesLost = Math.max(0, result.ok2xx - processing.deliveriesStored);
  const lost = deliveriesLost + (complete ? Math.max(0, plan.events - processing.eventsStored) : 0);
  const pending = complete ? 0 : plan.events - processing.eventsProcessed;
  const duplicated =
    processing.eventsStored - processing.eventsDistinct + Math.max(0, processing.eventsDistinct - plan.events);
  const exact =
    lost === 0 &&
    duplicated === 0 &&
    processing.eventsProcessed === plan.events &&
    processing.deliveriesStored === posts &&
    processing.deliveriesFailed === 0 &&
    messagesExact;
  console.log(
    `  processing: ${processing.allProcessedAfterS === null ? `NOT complete within ${o.processLimitMs / 1000} s` : `all processed ${fmt(processing.allProcessedAfterS, 2)} s after the load ended (${fmt(processedRate ?? 0, 0)} events/s end to end)`}; ` +
      `deliveries stored ${processing.deliveriesStored}/${posts} (processed ${processing.deliveriesProcessed}, dead-lettered ${processing.deliveriesFailed}); ` +
      `events stored ${processing.eventsStored}/${plan.events}, processed ${processing.eventsProcessed}; lost ${lost}, duplicated ${duplicated}${pending ? `, still pending ${pending}` : ''}; ` +
      `messages ${JSON.stringify(messageStatuses)} ${messagesExact ? '(as expected)' : `(expected ${JSON.stringify(expectedStatuses)})`}`,
  );
  console.log(formatCpu(cpuProcessing));
  stack.assertAlive();
  return {
    label: o.label,
    tag,
    posts,
    expected: { deliveriesStored: posts, events: plan.events, messageStatuses: expectedStatuses },
    load: result,
    ackedPerSecond: result.ok2xx / result.durationS,
    eventsPerSecond: (result.ok2xx * o.perDelivery) / result.durationS / copies,
    processing,
    lost,
    duplicated,
    pending,
    messageStatuses,
    messagesExact,
    exact,
    cpuLoad,
    cpuProcessing,
    ...(profile ? { profile } : {}),
    processedPerSecond: processedRate,
  };
}

function sortKeys(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
