// Preloaded (node --import) into every process a bench starts:
// - the process exits when the bench that started it is gone (no orphans after a SIGKILLed bench;
//   scripts/stack/parent-guard.mjs);
// - (SIGWINCH, because NestJS shutdown hooks listen to SIGUSR2) with BENCH_PROFILE_DIR set, SIGWINCH starts a CPU profile and the next SIGWINCH writes it to that directory
//   (a profile of the steady state only, without start-up);
// - otherwise SIGWINCH means "exit normally now", so that --cpu-prof writes its profile (it does not on a
//   signal death).
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';
import '../../scripts/stack/parent-guard.mjs';

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
