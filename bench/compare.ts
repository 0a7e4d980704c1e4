// Two variants of the service compared against the ingest reference, in alternating order (A B B A A B …): the host's
// speed drifts by tens of percent within minutes, and a comparison that always runs one variant first credits it with
// the drift (bench/history/2026-12-03-young-generation-and-insert-cap.md). Each run is one `npm run bench` limited to
// the reference receiver and the service's ingest rows (BENCH_SKIP=hello,send,batch,send-reference and
// BENCH_REF_WINDOWS=2 unless set), ≈ 2.5 minutes; the first run builds, the others reuse the build (BENCH_SKIP_BUILD=1)
// unless a variant says otherwise. Prints each run's ratios (single-status ingest and the receive path alone, against
// the mean of the reference before and after the service), p99s and the API's CPU per delivery, then each variant's
// means.
//
//   npm run bench:compare -- --a 'WEBHOOK_BATCH_WINDOW_MS=2' --b 'WEBHOOK_BATCH_WINDOW_MS=4' [--rounds 3]
//
// A variant is a list of VAR=value (any variable the bench passes through, BENCH_API_NODE_ARGS, or BENCH_BUILD_DIR with
// BENCH_SKIP_BUILD=1 for a build of another commit); '' is the defaults. BENCH_CHECKOUT=<dir> runs another checkout's
// bench (its code, build and migrations: a before/after of a commit that changes the schema), e.g. one made with
// `git worktree add /tmp/before HEAD~1 && ln -s "$PWD/node_modules" /tmp/before/`. --rounds N: N runs of each (default 3).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib/bench.js';
import { fmt } from './lib/report.js';
import { referenceRatios, type RatioRow } from './lib/reference-ratios.js';

function arg(name: string, fallback?: string): string {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? process.argv[at + 1] : fallback;
  if (value === undefined) {
    console.error(`usage: npm run bench:compare -- --a 'VAR=value …' --b 'VAR=value …' [--rounds N]`);
    process.exit(64);
  }
  return value;
}

function variant(spec: string): Record<string, string> {
  const env: Record<string, string> = {};
  // VAR=value pairs; a value may hold spaces when quoted: BENCH_API_NODE_ARGS="--trace-gc --max-semi-space-size=64".
  for (const m of spec.matchAll(/([A-Z_][A-Z0-9_]*)=("([^"]*)"|'([^']*)'|\S*)/g)) env[m[1]!] = m[3] ?? m[4] ?? m[2]!;
  return env;
}

interface Run {
  label: 'A' | 'B';
  started: string;
  loadAvg: string;
  single?: number;
  held?: number;
  singleP99?: number;
  refP99?: number;
  refRates: number[];
  apiCpu: [number | undefined, number | undefined];
}

/** One `npm run bench` of the checkout `root` with the variant's environment; its result file's rows. */
function runOnce(root: string, env: Record<string, string>): Promise<RatioRow[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/all.ts')], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let resultFile: string | undefined;
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /\[bench\] result written to (\S+)/.exec(out);
      if (m) resultFile = m[1];
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0 || !resultFile) return reject(new Error(`npm run bench exited ${code}:\n${out.slice(-3000)}`));
      const file = path.join(root, resultFile);
      resolve((JSON.parse(fs.readFileSync(file, 'utf8')) as { rows: RatioRow[] }).rows);
    });
  });
}

const pct = (v?: number) => (v === undefined ? '–' : `${fmt(v * 100, 1)} %`);
const num = (v?: number, d = 0) => (v === undefined ? '–' : fmt(v, d));

async function main(): Promise<void> {
  const specs = { A: arg('a'), B: arg('b') };
  const rounds = Number(arg('rounds', '3'));
  const defaults = {
    BENCH_SKIP: process.env.BENCH_SKIP ?? 'hello,send,batch,send-reference',
    BENCH_REF_WINDOWS: process.env.BENCH_REF_WINDOWS ?? '2',
  };
  // A B, B A, A B, …: each variant runs first as often as the other.
  const order = Array.from({ length: rounds }, (_, i) => (i % 2 === 0 ? ['A', 'B'] : ['B', 'A'])).flat() as (
    'A' | 'B'
  )[];
  const runs: Run[] = [];
  const built = new Set<string>();
  for (const [i, label] of order.entries()) {
    const { BENCH_CHECKOUT: checkout, ...own } = variant(specs[label]);
    const root = checkout ? path.resolve(checkout) : ROOT;
    // Each checkout builds on its first run (its build in its own .local/bench), then reuses it.
    const reuse = built.has(root) && !('BENCH_SKIP_BUILD' in own);
    built.add(root);
    const env = { ...defaults, ...(reuse ? { BENCH_SKIP_BUILD: '1' } : {}), ...own };
    const started = new Date().toISOString().slice(11, 19);
    const loadAvg = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(
      `[compare] run ${i + 1}/${order.length}: ${label} (${specs[label] || 'defaults'}) at ${started}, load ${loadAvg}`,
    );
    const ratios = referenceRatios(await runOnce(root, env));
    const [single, held] = [ratios[0], ratios[1]];
    runs.push({
      label,
      started,
      loadAvg,
      single: single?.share,
      held: held?.share,
      singleP99: single?.ours.p99,
      refP99: single?.refP99,
      refRates: single?.refs.map((r) => r.rate) ?? [],
      apiCpu: [single?.ours.cpuMsPerOp?.server, held?.ours.cpuMsPerOp?.server],
    });
  }

  console.log(`\nA: ${specs.A || 'defaults'}\nB: ${specs.B || 'defaults'}\n`);
  console.log(
    '| run | variant | at (load) | reference before / after | single, % of mean ref | single p99 / ref p99 ms | held, % of mean ref | API CPU ms/delivery (single / held) |',
  );
  console.log('|---|---|---|---|---:|---:|---:|---:|');
  runs.forEach((r, i) =>
    console.log(
      `| ${i + 1} | ${r.label} | ${r.started} (${r.loadAvg.split(' ')[0]}) | ${r.refRates.map((v) => num(v)).join(' / ')} | ${pct(r.single)} | ${num(r.singleP99)} / ${num(r.refP99, 1)} | ${pct(r.held)} | ${num(r.apiCpu[0], 2)} / ${num(r.apiCpu[1], 2)} |`,
    ),
  );
  const mean = (xs: (number | undefined)[]) => {
    const ok = xs.filter((x): x is number => x !== undefined);
    return ok.length > 0 ? ok.reduce((a, b) => a + b, 0) / ok.length : undefined;
  };
  console.log('');
  for (const label of ['A', 'B'] as const) {
    const own = runs.filter((r) => r.label === label);
    console.log(
      `${label}: single ${pct(mean(own.map((r) => r.single)))}, p99 ${num(mean(own.map((r) => r.singleP99)))} ms, held ${pct(mean(own.map((r) => r.held)))}, API CPU ${num(mean(own.map((r) => r.apiCpu[0])), 3)} / ${num(mean(own.map((r) => r.apiCpu[1])), 3)} ms per delivery (${own.length} runs)`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
