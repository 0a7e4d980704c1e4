// What SCRYPT_CONCURRENCY buys (issue 29, finding 7): a burst of BENCH_LOGINS password verifications at the
// production cost (PASSWORD_HASH_COST=17: N = 2^17, 128 MiB each) through the service's PasswordHasher, once per
// concurrency in BENCH_CONCURRENCIES. Prints the peak RSS above the starting RSS (sampled every 5 ms), the time
// until all are verified and the slowest verification, with the machine's load average.
//
//   npx tsx bench/scrypt-memory.ts        (env: BENCH_LOGINS=16, BENCH_CONCURRENCIES=2,16)
import { loadavg } from 'node:os';
import { PasswordHasher } from '../src/console/operators/password-hasher.js';

const logins = Number(process.env.BENCH_LOGINS ?? 16);
const concurrencies = (process.env.BENCH_CONCURRENCIES ?? '2,16').split(',').map(Number);
const MiB = 1024 * 1024;

async function run(scryptConcurrency: number): Promise<void> {
  const hasher = new PasswordHasher({ passwordHashCost: 17, scryptConcurrency });
  const stored = await hasher.hash('correct horse battery staple');
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((r) => setTimeout(r, 500));
  const base = process.memoryUsage.rss();
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  const started = performance.now();
  const times = await Promise.all(
    Array.from({ length: logins }, async () => {
      const t0 = performance.now();
      await hasher.verify('wrong horse battery staple', stored);
      return performance.now() - t0;
    }),
  );
  clearInterval(sampler);
  const total = performance.now() - started;
  console.log(
    `SCRYPT_CONCURRENCY=${scryptConcurrency}: ${logins} verifications in ${(total / 1000).toFixed(2)} s, slowest ${(Math.max(...times) / 1000).toFixed(2)} s, ` +
      `peak RSS +${Math.round((peak - base) / MiB)} MiB (load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
  );
}

for (const c of concurrencies) await run(c);
