// Preloaded (node --import) into every process a bench starts:
// - the process exits when the bench that started it is gone (no orphans after a SIGKILLed bench;
//   scripts/stack/parent-guard.mjs);
// - (SIGWINCH, because NestJS shutdown hooks listen to SIGUSR2) with BENCH_PROFILE_DIR set, SIGWINCH starts a CPU profile and the next SIGWINCH writes it to that directory
//   (a profile of the steady state only, without start-up);
// - otherwise SIGWINCH means "exit normally now", so that --cpu-prof writes its profile (it does not on a
//   signal death);
// - with BENCH_GC_LOG set, the process's garbage collections of 5 ms or more go to a CSV in that directory.
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';
import '../../scripts/stack/parent-guard.mjs';

// BENCH_GC_LOG=dir: every garbage collection of 5 ms or more, one CSV line (wall-clock end in epoch ms, kind,
// duration ms), to set beside the paced phases' timelines (BENCH_TIMELINE).
const gcDir = process.env.BENCH_GC_LOG;
if (gcDir) {
  const { PerformanceObserver, constants } = await import('node:perf_hooks');
  fs.mkdirSync(gcDir, { recursive: true });
  const file = path.join(gcDir, `${process.env.BENCH_PROC_NAME ?? 'proc'}-${process.pid}-gc.csv`);
  fs.writeFileSync(file, 'end_epoch_ms,kind,duration_ms\n');
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  new PerformanceObserver((list) => {
    const lines = list
      .getEntries()
      .filter((e) => e.duration >= 5)
      .map(
        (e) =>
          `${(performance.timeOrigin + e.startTime + e.duration).toFixed(0)},${kinds[e.detail?.kind] ?? 'other'},${e.duration.toFixed(1)}`,
      );
    if (lines.length > 0) fs.appendFileSync(file, lines.join('\n') + '\n');
  }).observe({ entryTypes: ['gc'] });
}

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  let running = false;
  let n = 0;
  process.on('SIGWINCH', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () => session.post('Profiler.start'));
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, res) => {
      if (err) return console.error(`[child-guard] profile failed: ${err.message}`);
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `${process.env.BENCH_PROC_NAME ?? 'proc'}-${process.pid}-${++n}.cpuprofile`);
      fs.writeFileSync(file, JSON.stringify(res.profile));
      console.error(`[child-guard] wrote ${file}`);
    });
  });
} else {
  process.on('SIGWINCH', () => process.exit(0));
}
