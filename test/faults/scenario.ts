// What the webhook fault scenarios share (test/faults/webhooks.fault-spec.ts, scaled.fault-spec.ts): a tenant with its
// workload, the wait until every acknowledged delivery is processed, the verdict's line in the suite's output, and
// the one expectation every scenario ends with (nothing lost, nothing twice, effects right, counts exact).
import { expect } from '@jest/globals';
import {
  ackedNotStored,
  createFaultTenant,
  progress,
  storedByHash,
  verdict,
  type Db,
  type FaultTenant,
  type Verdict,
} from './db.js';
import { buildWorkload, type SendStats, type Workload, type WorkloadOptions } from './load.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export interface Scenario {
  tenant: FaultTenant;
  workload: Workload;
}

export interface Outcome {
  stats: SendStats;
  verdict: Verdict;
  ackedNotStored: number;
  settleMs: number;
}

export interface ScenarioOptions {
  db: Db;
  /** The app secret the deliveries are signed with. */
  secret: string;
  /** The suite's output (one line per call). */
  out: (line: string) => void;
  /** Names the deliveries of a scenario still `received`, for the line of a scenario that did not settle. */
  stragglers: (s: Scenario) => Promise<string>;
  /** How long settle() waits at most (a ceiling, not a budget). */
  settleCeilingMs: number;
}

export class Scenarios {
  /** Every scenario's line, printed again by the suite at its end. */
  readonly summary: string[] = [];

  constructor(private readonly o: ScenarioOptions) {}

  async prepare(label: string, messages: number, opts: Omit<WorkloadOptions, 'secret'>): Promise<Scenario> {
    const tenant = await createFaultTenant(this.o.db, label, messages);
    return { tenant, workload: buildWorkload(tenant, { ...opts, secret: this.o.secret }) };
  }

  /**
   * Waits for "every acknowledged delivery processed, every expected event stored and processed": nothing left
   * `received`, and the events counted. Past the ceiling it names what is missing (the deliveries still `received`
   * and the state of the job that should carry each) in the suite's output; the verdict's counts then fail the test.
   */
  async settle(s: Scenario, timeoutMs = this.o.settleCeilingMs): Promise<number> {
    const t = Date.now();
    const n = s.workload.expected.length;
    for (;;) {
      const p = await this.o.db.queryRetrying(`SELECT 1`).then(() => progress(this.o.db, s.tenant.wabaId));
      if (p.received === 0 && p.events >= n && p.processed >= n) return Date.now() - t;
      if (Date.now() - t > timeoutMs) {
        this.o.out(
          `not settled within ${secs(timeoutMs)}: ${JSON.stringify(p)} of ${n} expected events; still received: ${await this.o.stragglers(s)}`,
        );
        return Date.now() - t;
      }
      await sleep(250);
    }
  }

  async conclude(name: string, s: Scenario, stats: SendStats, startedAt: number, extra: string): Promise<Outcome> {
    const settleMs = await this.settle(s);
    const v = await verdict(
      this.o.db,
      s.tenant,
      s.workload.expected,
      s.workload.expectedMessages,
      s.workload.expectedWindows,
    );
    const missing = ackedNotStored(stats.ackedByHash, await storedByHash(this.o.db, s.tenant.wabaId));
    const answers = Object.entries(stats.answers)
      .sort()
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ');
    const line =
      `${name}: acknowledged ${stats.acked} deliveries (${stats.posts} POSTs; ${answers}; retries ${stats.retries}; stale keep-alive sockets sent again ${stats.staleSockets}; gave up ${stats.gaveUp}), ` +
      `stored deliveries ${v.deliveriesStored} (acknowledged but not stored ${missing}; processed ${v.deliveriesProcessed}, dead-lettered ${v.deliveriesFailed}, left received ${v.deliveriesReceived}), ` +
      `expected events ${v.expectedEvents}, stored ${v.storedEvents}, processed ${v.processedEvents}, applied (claims) ${v.claims}, applied twice ${v.claimedTwice}, ` +
      `duplicates ${v.duplicates}, lost ${v.lost}, unexpected ${v.unexpected}, event_counts ${v.eventCountsTotal} vs COUNT(*) ${v.storedEvents}, ` +
      `messages wrong ${v.wrongMessages}, backward/repeated status changes ${v.badTransitions}, windows ${v.windows}/${v.expectedWindows}; ` +
      `load ${secs(stats.elapsedMs)} (ack p50 ${stats.p50} ms, p99 ${stats.p99} ms; slowest ${stats.slowest.map((a) => `${a.ms} ms at ${secs(a.at)}`).join(', ')}), ` +
      `all processed ${secs(settleMs)} after the load; ${extra}; scenario ${secs(Date.now() - startedAt)}`;
    this.o.out(line);
    this.summary.push(line);
    return { stats, verdict: v, ackedNotStored: missing, settleMs };
  }

  /** What every scenario must end with: nothing lost, nothing twice, effects right, counts exact. */
  expectExactlyOnce(o: Outcome): void {
    const v = o.verdict;
    const got = {
      gaveUp: o.stats.gaveUp,
      ackedNotStored: o.ackedNotStored,
      deliveriesReceived: v.deliveriesReceived,
      deliveriesFailed: v.deliveriesFailed,
      storedEvents: v.storedEvents,
      processedEvents: v.processedEvents,
      claims: v.claims,
      claimedTwice: v.claimedTwice,
      duplicates: v.duplicates,
      lost: v.lost,
      unexpected: v.unexpected,
      eventCountsTotal: v.eventCountsTotal,
      wrongMessages: v.wrongMessages,
      badTransitions: v.badTransitions,
      windows: v.windows,
    };
    expect(got).toEqual({
      gaveUp: 0,
      ackedNotStored: 0,
      deliveriesReceived: 0,
      deliveriesFailed: 0,
      storedEvents: v.expectedEvents,
      processedEvents: v.expectedEvents,
      claims: v.expectedEvents,
      claimedTwice: 0,
      duplicates: 0,
      lost: 0,
      unexpected: 0,
      eventCountsTotal: v.expectedEvents,
      wrongMessages: 0,
      badTransitions: 0,
      windows: v.expectedWindows,
    });
    // Every 200 is a stored row; a row may exist without a 200 only when its answer was not a 200 (a commit
    // whose answer was lost in the fault), and the sender then retried.
    expect(v.deliveriesStored).toBeGreaterThanOrEqual(o.stats.acked);
    expect(v.deliveriesStored).toBeLessThanOrEqual(o.stats.acked + nonOk(o.stats));
  }
}

export function nonOk(stats: SendStats): number {
  return Object.entries(stats.answers)
    .filter(([k]) => k !== '200')
    .reduce((n, [, c]) => n + c, 0);
}
