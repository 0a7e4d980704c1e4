// Preloaded (node --import) into the node processes that a script starts in the background (dev.sh: the
// simulator, the API and the worker; the benches' children through bench/lib/child-guard.mjs): the process
// exits when the one that started it is gone, so a SIGKILLed script leaves nothing running. PARENT_GUARD_PID
// names that process (default: the parent at start-up). Under `node --watch` the watcher is stopped too.
const given = Number(process.env.PARENT_GUARD_PID) || 0;
const initialPpid = process.ppid;

function gone() {
  if (!given) return process.ppid !== initialPpid;
  try {
    process.kill(given, 0);
    return false;
  } catch (e) {
    return e.code !== 'EPERM';
  }
}

setInterval(() => {
  if (!gone()) return;
  // node --watch runs the script in a child and marks its environment so.
  if (process.env.WATCH_REPORT_DEPENDENCIES) {
    try {
      process.kill(process.ppid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
  process.exit(1);
}, 1000).unref();
