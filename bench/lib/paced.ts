// An open-loop load at a fixed rate, evenly spaced: request i is due at start + i / rate, whatever happened to the
// earlier ones, and its latency counts from that due time (so time spent waiting for a free connection is
// counted too: no coordinated omission).
//
// Why not autocannon's `overallRate`: autocannon 8 gives each connection a budget of rate/connections requests per
// second, refilled by a 1 s timer; every connection spends its budget back to back at the start of each second
// and then waits. The "fixed 500/s" load is therefore a burst of 500 requests at full speed once a second (seen
// with the reference receiver: ≈ 36 rows per 2 ms window at "500/s"), and its coordinated-omission correction
// uses an expected interval of ceil(1 / rate) = 1 ms, which adds a synthetic sample for every millisecond of
// each response. Saturation runs (no rate) are not affected and stay on autocannon.
import type { RequestSpec } from 'autocannon';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { formatLoad, type LoadSummary } from './report.js';

export interface PacedOptions {
  /** Base URL(s); requests go to them in turn. */
  url: string | string[];
  /** Requests per second. */
  rate: number;
  /** Number of requests (or durationS × rate). */
  amount?: number;
  durationS?: number;
  /** Keep-alive connections per URL (requests beyond wait for one, and that wait counts in their latency). */
  connections: number;
  /** Like autocannon's: the first spec's setupRequest (or its fields) builds each request. */
  requests: RequestSpec[];
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export interface PacedSummary extends LoadSummary {
  /** Latency from the moment the request was written (what autocannon reports without a rate). */
  sentToAnswerMs: { p50: number; p99: number; max: number };
  /** How late the generator itself was in writing requests (its timer and event loop): p99, max. */
  lateStartMs: { p99: number; max: number };
}

function pct(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export async function paced(label: string, o: PacedOptions): Promise<PacedSummary> {
  const urls = (Array.isArray(o.url) ? o.url : [o.url]).map((u) => new URL(u));
  const total = o.amount ?? Math.round((o.durationS ?? 10) * o.rate);
  const agents = urls.map(() => new http.Agent({ keepAlive: true, maxSockets: o.connections }));
  const spec = o.requests[0] ?? {};
  const timeoutMs = o.timeoutMs ?? 10_000;
  const fromDue = new Float64Array(total);
  const fromSent = new Float64Array(total);
  const late = new Float64Array(total);
  const statusCodes: Record<string, number> = {};
  let answered = 0;
  let ok = 0;
  let errors = 0;
  let timeouts = 0;
  let lastAnswerAt = 0;
  let settled = 0;

  // BENCH_TIMELINE=dir: one CSV per paced phase (due time in epoch ms and from the start, latency from due, from the write, status), to see
  // whether a p99 comes from one stall or from the whole phase.
  const timeline: string[] | undefined = process.env.BENCH_TIMELINE
    ? ['due_epoch_ms,due_ms,from_due_ms,from_write_ms,status']
    : undefined;
  const start = performance.now() + 5;
  let scheduled = 0;
  const done = new Promise<void>((resolve) => {
    const finish = () => {
      if (++settled === total) resolve();
    };
    const send = (i: number, due: number) => {
      const base = {
        method: spec.method ?? 'GET',
        path: spec.path ?? '/',
        headers: { ...o.headers, ...spec.headers },
        body: spec.body,
      };
      const req = spec.setupRequest ? (spec.setupRequest(base, {}) ?? base) : base;
      const target = urls[i % urls.length]!;
      const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
      const headers: Record<string, string | number> = { ...req.headers };
      if (body) headers['content-length'] = body.length;
      let sentAt = 0;
      let finished = false;
      const end = (kind: 'ok' | 'error' | 'timeout', status?: number) => {
        if (finished) return;
        finished = true;
        const now = performance.now();
        if (kind === 'ok') {
          if (timeline)
            timeline.push(
              `${(performance.timeOrigin + due).toFixed(0)},${(due - start).toFixed(1)},${(now - due).toFixed(1)},${(now - (sentAt || due)).toFixed(1)},${status}`,
            );
          fromDue[answered] = now - due;
          fromSent[answered] = now - (sentAt || due);
          answered++;
          lastAnswerAt = now;
          statusCodes[String(status)] = (statusCodes[String(status)] ?? 0) + 1;
          if (status! >= 200 && status! < 300) ok++;
        } else if (kind === 'timeout') timeouts++;
        else errors++;
        finish();
      };
      const r = http.request(
        {
          agent: agents[i % agents.length],
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.path,
          headers,
        },
        (res) => {
          res.on('data', () => undefined);
          res.on('end', () => end('ok', res.statusCode));
          res.on('error', () => end('error'));
        },
      );
      r.on('socket', (s) => {
        const mark = () => {
          sentAt = performance.now();
        };
        if (s.connecting) s.once('connect', mark);
        else mark();
      });
      r.setTimeout(timeoutMs, () => {
        end('timeout');
        r.destroy();
      });
      r.on('error', () => end('error'));
      late[i] = performance.now() - due;
      r.end(body);
    };
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - start) * o.rate) / 1000) + 1);
      while (scheduled < due) {
        send(scheduled, start + (scheduled * 1000) / o.rate);
        scheduled++;
      }
      if (scheduled < total) setTimeout(tick, Math.max(0, start + (scheduled * 1000) / o.rate - performance.now()));
    };
    if (total === 0) resolve();
    else setTimeout(tick, 5);
  });
  await done;
  agents.forEach((a) => a.destroy());
  if (timeline) {
    fs.mkdirSync(process.env.BENCH_TIMELINE!, { recursive: true });
    fs.writeFileSync(
      path.join(process.env.BENCH_TIMELINE!, `${label.replace(/[^\w.-]+/g, '_')}-${Date.now()}.csv`),
      timeline.join('\n') + '\n',
    );
  }

  const a = fromDue.subarray(0, answered).sort();
  const s = fromSent.subarray(0, answered).sort();
  const l = late.sort();
  const durationS = Math.max(0.001, (lastAnswerAt - start) / 1000);
  const mean = a.length ? a.reduce((x, y) => x + y, 0) / a.length : NaN;
  const summary: PacedSummary = {
    label,
    connections: o.connections * urls.length,
    durationS,
    responses: answered,
    ok2xx: ok,
    non2xx: answered - ok,
    errors,
    timeouts,
    okPerSecond: ok / durationS,
    latencyMs: {
      p50: pct(a, 50),
      p90: pct(a, 90),
      p99: pct(a, 99),
      p99_9: pct(a, 99.9),
      max: a[a.length - 1] ?? NaN,
      mean,
    },
    statusCodes,
    sentToAnswerMs: { p50: pct(s, 50), p99: pct(s, 99), max: s[s.length - 1] ?? NaN },
    lateStartMs: { p99: pct(l, 99), max: l[l.length - 1] ?? NaN },
  };
  console.log(
    `${formatLoad(summary)} [paced ${o.rate}/s, latency from each request's due time; from the write: p50 ${summary.sentToAnswerMs.p50.toFixed(1)} / p99 ${summary.sentToAnswerMs.p99.toFixed(1)} ms; generator late p99 ${summary.lateStartMs.p99.toFixed(1)} ms]`,
  );
  return summary;
}
