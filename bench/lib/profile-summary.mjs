// Summarises a V8 .cpuprofile (node --cpu-prof): self time by package / file and the hottest functions.
//   node bench/lib/profile-summary.mjs <file.cpuprofile> [top=25] [operations] [from-s]
// With `operations` (the requests the process answered while profiled, from the bench's rows), the hottest functions
// also in µs of CPU per operation: two profiles side by side (the API's and the reference receiver's,
// BENCH_CPU_PROF=api,reference) then say where each one's CPU per delivery goes. `from-s` leaves out the first
// seconds of the profile (the process's start: module loading, compilation).
import fs from 'node:fs';

const [file, topArg, opsArg, fromArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/lib/profile-summary.mjs <file.cpuprofile> [top] [operations] [from-s]');
  process.exit(64);
}
const top = Number(topArg ?? 25);
const operations = Number(opsArg ?? 0);
const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const selfUs = new Map();
const dt = prof.timeDeltas;
const fromUs = prof.startTime + Number(fromArg ?? 0) * 1e6;
for (let i = 0, at = prof.startTime; i < prof.samples.length; i++) {
  at += dt[i] ?? 0;
  if (at < fromUs) continue;
  selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + (dt[i + 1] ?? 0));
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

function where(url) {
  if (!url) return '(native/vm)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const s = /\/(src|simulator)\/(.*)$/.exec(url);
  return s ? `${s[1]}/${s[2]}` : url;
}
const byPkg = new Map();
const byFn = new Map();
for (const [id, us] of selfUs) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const pkg =
    cf.functionName === '(idle)' || cf.functionName === '(program)' || cf.functionName === '(garbage collector)'
      ? cf.functionName
      : where(cf.url);
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us);
  const key = `${cf.functionName || '(anonymous)'} ${where(cf.url)}:${cf.lineNumber + 1}`;
  byFn.set(key, (byFn.get(key) ?? 0) + us);
}
const pct = (us) => ((us / total) * 100).toFixed(1).padStart(5) + '%';
const busy = total - (byPkg.get('(idle)') ?? 0);
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy`);
console.log('-- self time by package/file --');
for (const [k, v] of [...byPkg].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
console.log('-- hottest functions (self) --');
for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
if (operations > 0) {
  console.log(`-- CPU per operation (${operations} operations): ${(busy / operations).toFixed(1)} µs busy --`);
  for (const [k, v] of [...byFn]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`${(v / operations).toFixed(2).padStart(7)} µs  ${k}`);
}

// Inclusive time of the project's own functions (src/, simulator/) and of selected library entry points:
// where a request's time goes, call tree included. Each function counted once per stack.
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (const [id, us] of selfUs) {
  const seen = new Set();
  for (let p = id; p !== undefined; p = parent.get(p)) {
    const cf = byId.get(p).callFrame;
    const w = where(cf.url);
    if (
      !/^(src|simulator)\//.test(w) &&
      !/^(@prisma\/client|pg|pg-pool|ioredis|bullmq|axios|express|router|@nestjs\/core|class-validator|class-transformer|body-parser|pino)$/.test(
        w,
      )
    )
      continue;
    const key = `${cf.functionName || '(anonymous)'} ${w}:${cf.lineNumber + 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    incl.set(key, (incl.get(key) ?? 0) + us);
  }
}
console.log('-- inclusive time (own code and library entry points) --');
for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
