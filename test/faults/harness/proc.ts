// Child processes of the fault suite (PostgreSQL, Redis, API, worker). Every one is started in its own
// process group with a watchdog: a tiny shell that holds the read end of a pipe from this process and kills
// the group when that pipe closes, i.e. when the test process dies for any reason (even SIGKILL). Normal
// stops go through stop()/kill(), and stopAll() in afterAll; a process 'exit' hook is the last resort.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Managed {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly exited: Promise<Exit>;
  alive(): boolean;
  /** `signal` to the process, then SIGKILL to its group after `graceMs`; resolves once it has exited. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<Exit>;
  /** SIGKILL to the whole process group, as a crash would. */
  kill(): Promise<Exit>;
}

const running = new Set<Managed>();

process.once('exit', () => {
  for (const m of running) {
    try {
      process.kill(-m.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** The signal the watchdog sends when the test process dies (default SIGKILL). */
  orphanSignal?: NodeJS.Signals;
}

export function startProcess(name: string, cmd: string, args: string[], logFile: string, opts: StartOptions = {}): Managed {
  const fd = fs.openSync(logFile, 'a');
  const spawnOpts: SpawnOptions = {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', fd, fd],
    detached: true,
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid } : {}),
  };
  const child: ChildProcess = spawn(cmd, args, spawnOpts);
  fs.closeSync(fd);
  if (!child.pid) throw new Error(`${name}: spawn ${cmd} failed`);
  const pid = child.pid;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  child.unref();

  const sig = (opts.orphanSignal ?? 'SIGKILL').replace(/^SIG/, '');
  const watchdog = spawn('/bin/sh', ['-c', `read _x; kill -${sig} -- -"$1" 2>/dev/null; kill -${sig} "$1" 2>/dev/null; exit 0`, `fault-watchdog-${name}`, String(pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();

  let done = false;
  const m: Managed = {
    name,
    pid,
    logFile,
    exited,
    alive: () => !done,
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (!done) {
        // Only the main process: PostgreSQL's postmaster, say, shuts its backends down itself.
        try {
          process.kill(pid, signal);
        } catch {
          /* gone */
        }
        let timer: NodeJS.Timeout | undefined;
        const graceOver = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
        const r = await Promise.race([exited.then(() => true), graceOver]);
        clearTimeout(timer);
        if (!r) signalGroup(pid, 'SIGKILL');
      }
      return exited;
    },
    async kill() {
      if (!done) signalGroup(pid, 'SIGKILL');
      return exited;
    },
  };
  running.add(m);
  void exited.then(() => {
    done = true;
    running.delete(m);
    // The process is gone: the watchdog has nothing left to guard.
    try {
      watchdog.kill('SIGKILL');
    } catch {
      /* gone */
    }
  });
  return m;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
  }
}

/** Stops everything still running (PostgreSQL last, so the others close their connections first). */
export async function stopAll(order: (m: Managed) => number = () => 0): Promise<void> {
  const all = [...running].sort((a, b) => order(a) - order(b));
  for (const m of all) await m.stop('SIGTERM', 5_000);
}

export function runningProcesses(): Managed[] {
  return [...running];
}

/** The last `n` lines of a log file (for failure messages). */
export function tail(file: string, n = 30): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.split('\n').slice(-n - 1).join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}
