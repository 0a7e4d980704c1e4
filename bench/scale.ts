// Issue 39's figure: the hosted topology against one PostgreSQL and one Redis, side by side in one run. Runs
// bench/scale-run.ts (two APIs and two workers: ingest, a duplicate storm, sends) once per topology, alternating
// single → scaled for BENCH_ROUNDS rounds (default 1), each run on fresh engines, then compares the best figure of each
// side: single-status ingest (deliveries acknowledged per second), batches of 100, and sends. The engines share this
// machine's two cores with the service, so the point is that the topology costs little (target: within 25 %), and that
// nothing is lost or done twice on either side (every check of each run).
//
//   npm run bench:scale     (env: BENCH_ROUNDS=1, and every variable of bench/scale-run.ts)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, log } from './lib/bench.js';
import { check, fmt, machine, printMachine, writeResult, type Check } from './lib/report.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const TOPOLOGIES = ['single', 'scaled'] as const;
type Topology = (typeof TOPOLOGIES)[number];

interface RunResult {
  phases: { label: string; ackedPerSecond: number; exact: boolean; load: { latencyMs: { p99: number } } }[];
  sends: { saturation: { okPerSecond: number; latencyMs: { p99: number } } };
  checks: Check[];
  machine: { loadAvg?: number[] };
}

/** One run of scale-run.ts; its output goes through, its result file is read back. */
function runOnce(topology: Topology): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/scale-run.ts')], {
      cwd: ROOT,
      env: { ...process.env, BENCH_TOPOLOGY: topology },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let file = '';
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString();
      process.stdout.write(text);
      file = /result written to (\S+\.json)/.exec(text)?.[1] ?? file;
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0 || !file) return reject(new Error(`bench/scale-run.ts (${topology}) exited ${code}`));
      resolve(JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as RunResult);
    });
  });
}

const m = machine();
printMachine(m);
const runs: Record<Topology, RunResult[]> = { single: [], scaled: [] };
for (let round = 1; round <= ROUNDS; round++) {
  for (const topology of TOPOLOGIES) {
    log(`round ${round}/${ROUNDS}: ${topology}`);
    runs[topology].push(await runOnce(topology));
  }
}

const best = (topology: Topology, pick: (r: RunResult) => number) => Math.max(...runs[topology].map(pick));
const phase = (label: string) => (r: RunResult) => r.phases.find((p) => p.label === label)?.ackedPerSecond ?? 0;
const figures = {
  'single-status ingest (deliveries/s)': phase('single'),
  'batch100 ingest (deliveries/s)': phase('batch100'),
  'sends (per s)': (r: RunResult) => r.sends.saturation.okPerSecond,
};
console.log('\nScaled topology against one PostgreSQL and one Redis (best of each side)');
const checks: Check[] = [];
const ratios: Record<string, { single: number; scaled: number; ratio: number }> = {};
for (const [name, pick] of Object.entries(figures)) {
  const single = best('single', pick);
  const scaled = best('scaled', pick);
  const ratio = scaled / single;
  ratios[name] = { single, scaled, ratio };
  checks.push(
    check(
      `${name}: scaled vs single`,
      '≥ 75 % (within 25 %)',
      `${fmt(scaled, 0)} vs ${fmt(single, 0)} = ${fmt(ratio * 100, 1)} %`,
      ratio >= 0.75,
    ),
  );
}
for (const topology of TOPOLOGIES) {
  const failed = runs[topology].flatMap((r) => r.checks.filter((c) => !c.pass).map((c) => c.name));
  checks.push(
    check(
      `${topology}: every run's own checks (exact counts, processed once, sends without error)`,
      'all pass',
      failed.length ? `missed: ${failed.join('; ')}` : `${runs[topology].length} run(s), all pass`,
      failed.length === 0,
    ),
  );
}
writeResult('scale', { machine: m, rounds: ROUNDS, ratios, runs, checks });
