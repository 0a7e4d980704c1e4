// Load runs (autocannon, programmatic), their summaries, the machine description and result files.
import autocannon, { type Options, type Result } from 'autocannon';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './bench.js';
import { fmt } from './fmt.js';

export interface LoadSummary {
  label: string;
  connections: number;
  durationS: number;
  /** Requests that got a response (any status). */
  responses: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** 2xx responses per second over the whole run. */
  okPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; p99_9: number; max: number; mean: number };
  statusCodes: Record<string, number>;
}

/** `wallS`: first request to last response (autocannon's own duration is only checked once a second). */
export function summarize(label: string, r: Result, wallS = r.duration): LoadSummary {
  const statusCodes: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = Number(v.count);
  const responses = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  return {
    label,
    connections: r.connections,
    durationS: wallS,
    responses,
    ok2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    okPerSecond: r['2xx'] / wallS,
    latencyMs: {
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      p99_9: r.latency.p99_9,
      max: r.latency.max,
      mean: r.latency.mean,
    },
    statusCodes,
  };
}

/** Runs autocannon and returns its summary; bounded by `duration` or `amount` (and the request timeout). */
export async function load(label: string, opts: Options): Promise<LoadSummary> {
  const t0 = Date.now();
  let last = t0;
  const instance = autocannon({ timeout: 10, ...opts });
  instance.on('response', () => {
    last = Date.now();
  });
  const result = await instance;
  const s = summarize(label, result, Math.max(0.001, (last - t0) / 1000));
  console.log(formatLoad(s));
  return s;
}

export function formatLoad(s: LoadSummary): string {
  const l = s.latencyMs;
  const codes = Object.entries(s.statusCodes)
    .map(([c, n]) => `${c}×${n}`)
    .join(' ');
  return (
    `  ${s.label}: ${s.ok2xx} ok in ${s.durationS.toFixed(2)} s = ${fmt(s.okPerSecond, 0)}/s with ${s.connections} connections; ` +
    `latency p50 ${fmt(l.p50)} ms, p90 ${fmt(l.p90)} ms, p99 ${fmt(l.p99)} ms, max ${fmt(l.max)} ms` +
    `${s.non2xx || s.errors ? `; non-2xx ${s.non2xx} (${codes}), errors ${s.errors}, timeouts ${s.timeouts}` : ''}`
  );
}

export { fmt };

export interface Machine {
  date: string;
  cores: number;
  cpuModel: string;
  ramGiB: number;
  node: string;
  postgres?: string;
  redis?: string;
  loadAvg: number[];
  gitCommit: string;
  gitDirty: boolean;
}

export function machine(): Machine {
  let gitCommit = 'unknown';
  let gitDirty = false;
  try {
    gitCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    gitDirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
  } catch {
    /* not a git checkout */
  }
  return {
    date: new Date().toISOString(),
    cores: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    ramGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    loadAvg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    gitCommit,
    gitDirty,
  };
}

export function printMachine(m: Machine): void {
  console.log(
    `[bench] ${m.date} · ${m.cores} cores (${m.cpuModel}), ${m.ramGiB} GiB RAM, node ${m.node} · load average ${m.loadAvg.join(' / ')} (1/5/15 min)` +
      ` · git ${m.gitCommit}${m.gitDirty ? ' (uncommitted changes)' : ''}`,
  );
  if (m.loadAvg[0]! > m.cores * 0.5)
    console.log(
      `[bench] note: the machine is busy (1-min load ${m.loadAvg[0]} on ${m.cores} cores); figures will be noisy`,
    );
}

/** A check against a target, printed as one line and kept in the result file. */
export interface Check {
  name: string;
  target: string;
  actual: string;
  pass: boolean;
}

export function check(name: string, target: string, actual: string, pass: boolean): Check {
  console.log(`  ${pass ? 'PASS' : 'MISS'}  ${name}: ${actual} (target ${target})`);
  return { name, target, actual, pass };
}

/** bench/results/<name>-<timestamp>.json (git-ignored). */
export function writeResult(name: string, data: Record<string, unknown>): string {
  const dir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) =>
      /^(BENCH_|DATABASE_POOL_SIZE$|WORKER_CONCURRENCY$|DATABASE_URL$|REDIS_URL$)/.test(k),
    ),
  );
  fs.writeFileSync(file, JSON.stringify({ command: process.argv.slice(1).join(' '), env, ...data }, null, 2) + '\n');
  console.log(`[bench] result written to ${path.relative(ROOT, file)}`);
  return file;
}
