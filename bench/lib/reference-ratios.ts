import { fmt } from './report.js';

/** The rows `npm run bench` names its references and the service's ingest phases by (bench/all.ts). */
export const REF_2MS = '(b) reference, 2 ms window';
/** The 2 ms reference measured again after the service's ingest rows. */
export const REF_AGAIN = '(b) reference, 2 ms window, again after the service';
export const SEND_REFERENCE = '(b) durable-send reference';
export const SINGLE_PHASE = 'saturation, 1 status';
export const HELD_PHASE = 'saturation, 1 status, processing held during the load';
export const BATCH_PHASE = 'saturation, 100 statuses';
/** `npm run bench:floor`'s `service` design, measured in the same run (bench/lib/status-floor.ts). */
export const FLOOR_REFERENCE = "(b) floor: PostgreSQL alone, the worker's statements";
export const FLOOR_PHASE = 'batches of 100 statuses';

/** What a ratio needs of a summary row (bench/all.ts's Row, as its result file keeps it). */
export interface RatioRow {
  target: string;
  phase: string;
  rate: number;
  p99: number;
  /** The batch phase: events processed per second, first POST to last event processed. */
  processedPerSecond?: number | null;
  cpuMsPerOp?: Record<string, number>;
}

export interface Ratio {
  what: string;
  /** The service's row, and the reference rows it is compared with (their mean). */
  ours: RatioRow;
  refs: RatioRow[];
  refRate: number;
  refP99: number;
  share: number;
  target: number;
  /** Against the floor: events processed per second, and no latency to compare (the floor has no clients). */
  processed: boolean;
  /** share ≥ target and (but against the floor) p99 ≤ 2× the reference's. */
  met: boolean;
}

/**
 * Each of the service's rates against its reference in one run (issue 40's targets): single-status ingest against
 * the group-commit receiver's 2 ms window (≥ 75 %, ack p99 ≤ 2×), the receive path alone against the same (a
 * measurement), sends against the durable-send reference (≥ 70 %, p99 ≤ 2×). The ingest rows sit between two
 * measurements of the 2 ms reference (before the service, and again after it): the ratios take their mean. Batches
 * of 100 statuses: events processed per second (first POST to last event processed) against `bench:floor`'s
 * `service` design in the same run, PostgreSQL alone running the worker's statements on as many connections as the
 * worker's jobs hold (≥ 80 %).
 */
export function referenceRatios(rows: RatioRow[]): Ratio[] {
  // A phase's name may carry a note after it ("saturation (34.0 rows per INSERT)").
  const find = (target: (t: string) => boolean, phase: string) =>
    rows.find((r) => target(r.target) && (r.phase === phase || r.phase.startsWith(`${phase} (`)));
  const ingestRefs = [find((t) => t === REF_2MS, 'saturation'), find((t) => t === REF_AGAIN, 'saturation')].filter(
    (r): r is RatioRow => r !== undefined,
  );
  const pairs = [
    {
      what: 'single-status ingest against the reference receiver (2 ms window)',
      ours: find((t) => t.startsWith('(c) service'), SINGLE_PHASE),
      refs: ingestRefs,
      target: 0.75,
    },
    {
      what: 'the receive path alone (processing held during the load; a measurement, not the target) against the same reference',
      ours: find((t) => t.startsWith('(c) service'), HELD_PHASE),
      refs: ingestRefs,
      target: 0.75,
    },
    {
      what: 'sends against the durable-send reference',
      ours: find((t) => t.startsWith('send,'), 'saturation'),
      refs: [find((t) => t === SEND_REFERENCE, 'saturation')].filter((r): r is RatioRow => r !== undefined),
      target: 0.7,
    },
    {
      what: "batches of 100 statuses, events processed/s, against the floor (bench:floor's `service`: PostgreSQL alone, the worker's statements on the worker's connections)",
      ours: find((t) => t.startsWith('(c) service'), BATCH_PHASE),
      refs: [find((t) => t === FLOOR_REFERENCE, FLOOR_PHASE)].filter((r): r is RatioRow => r !== undefined),
      target: 0.8,
      processed: true,
    },
  ];
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const ratios: Ratio[] = [];
  for (const { what, ours, refs, target, processed = false } of pairs) {
    if (!ours || refs.length === 0) continue;
    const [refRate, refP99] = [mean(refs.map((r) => r.rate)), mean(refs.map((r) => r.p99))];
    const share = (processed ? (ours.processedPerSecond ?? 0) : ours.rate) / refRate;
    const met = share >= target && (processed || ours.p99 <= 2 * refP99);
    ratios.push({ what, ours, refs, refRate, refP99, share, target, processed, met });
  }
  return ratios;
}

/** The ratios as `npm run bench` prints them under its summary. */
export function referenceRatioLines(rows: RatioRow[]): string[] {
  const lines = referenceRatios(rows).map(({ what, ours, refs, refRate, refP99, share, target, processed, met }) => {
    if (processed)
      return `- ${what}: ${fmt(share * 100, 1)} % (${int(ours.processedPerSecond ?? NaN)} of ${int(refRate)} events/s; target ≥ ${target * 100} %): ${met ? 'met' : 'MISSED'}`;
    const both =
      refs.length > 1
        ? ` (the mean of ${int(refs[0]!.rate)}/s before the service and ${int(refs[1]!.rate)}/s after it: ${fmt((100 * Math.abs(refs[1]!.rate - refs[0]!.rate)) / refRate, 0)} % apart)`
        : '';
    return `- ${what}: ${fmt(share * 100, 1)} % (${int(ours.rate)} of ${int(refRate)}/s${both}; target ≥ ${target * 100} %), p99 ${ms(ours.p99)} vs ${ms(refP99)} ms (target ≤ 2×): ${met ? 'met' : 'MISSED'}`;
  });
  return lines.length > 0 ? ['Against the references (issue 40):', ...lines] : [];
}

export const int = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–');
export const ms = (v: number) => (Number.isFinite(v) ? (v >= 10 ? v.toFixed(1) : v.toFixed(2)) : '–');
