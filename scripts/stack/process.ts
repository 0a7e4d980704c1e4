// One child-process class for everything the stack starts (PostgreSQL, Redis, the simulator, the API, the
// worker): output appended to a log file, its own process group, exit tracking, a stop that escalates
// (SIGTERM → SIGKILL after a grace), and a parent-death guard: a tiny watchdog shell holding the read end of
// a pipe from this process signals the child's group when that pipe closes, i.e. when this process dies for
// any reason, SIGKILL included. Also the small helpers shared by the other files of scripts/stack/.
import { spawn, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

/** [signal, how long to wait for the exit]; SIGKILL goes to the whole process group, other signals to the process. */
export type StopStep = [NodeJS.Signals, number];
export const DEFAULT_STOP: StopStep[] = [
  ['SIGTERM', 10_000],
  ['SIGKILL', 3_000],
];

/** Thrown by start() once stopAll() has begun: nothing new is started while the stack goes down. */
export class Aborted extends Error {
  constructor() {
    super('aborted: the stack is stopping');
  }
}

/** A failure to report as it is (no stack trace), with the exit code for the CLI and the service log's last lines. */
export class StackError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    logText?: string,
  ) {
    const lines = logText === undefined ? [] : tailLines(logText, 40);
    super(
      lines.length
        ? `${message}\n--- last ${lines.length} lines of the log ---\n${lines.map((l) => `    ${l}`).join('\n')}\n--- end of log ---`
        : message,
    );
  }
}

export interface ChildOptions {
  /** Names the process in messages and its watchdog. */
  name: string;
  cmd: string;
  args: string[];
  /** stdout and stderr go here (appended; truncated first with truncate: true). Without it they are ignored. */
  logFile?: string;
  truncate?: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  /** What the watchdog sends when this process dies (default SIGTERM); SIGKILL to the group 10 s later. */
  orphanSignal?: NodeJS.Signals;
  /** How stop() stops it (default SIGTERM, SIGKILL after 10 s). */
  stopSteps?: StopStep[];
}

const running = new Set<Child>();
let closing = false;
/** True once stopAll() has begun. */
export const stopping = (): boolean => closing;

// Last resort on a normal exit of this process (the watchdogs cover abnormal ones).
process.once('exit', () => {
  for (const c of running) signalGroup(c.pid, 'SIGKILL');
});

export class Child {
  readonly exited: Promise<Exit>;
  /** True once the process has exited. */
  done = false;
  /** Set by stop() and kill(): an exit after it is expected (callers report the others). */
  expectedExit = false;

  private constructor(
    readonly name: string,
    readonly pid: number,
    readonly logFile: string | undefined,
    private readonly steps: StopStep[],
    exited: Promise<Exit>,
  ) {
    this.exited = exited.then((e) => {
      this.done = true;
      running.delete(this);
      return e;
    });
  }

  /** Spawns the process (resolves once it runs; rejects when it cannot be spawned). */
  static async start(o: ChildOptions): Promise<Child> {
    if (closing) throw new Aborted();
    let fd: number | 'ignore' = 'ignore';
    if (o.logFile) {
      fs.mkdirSync(path.dirname(o.logFile), { recursive: true });
      fd = fs.openSync(o.logFile, o.truncate ? 'w' : 'a');
    }
    const opts: SpawnOptions = { cwd: o.cwd, env: o.env, stdio: ['ignore', fd, fd], detached: true };
    if (o.uid !== undefined) Object.assign(opts, { uid: o.uid, gid: o.gid });
    const child = spawn(o.cmd, o.args, opts);
    if (typeof fd === 'number') fs.closeSync(fd);
    const exited = new Promise<Exit>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (e) => reject(new Error(`${o.name}: cannot start ${o.cmd}: ${e.message}`)));
    });
    child.unref();
    const c = new Child(o.name, child.pid!, o.logFile, o.stopSteps ?? DEFAULT_STOP, exited);
    running.add(c);
    const watchdog = startWatchdog(o.name, c.pid, o.orphanSignal ?? 'SIGTERM');
    // The process is gone: its watchdog has nothing left to guard.
    void c.exited.then(() => watchdog.kill('SIGKILL'));
    return c;
  }

  alive(): boolean {
    return !this.done;
  }

  /** Stops it with `steps` (default: the ones it was started with); resolves once it has exited (or all steps are used). */
  async stop(steps: StopStep[] = this.steps): Promise<Exit | null> {
    this.expectedExit = true;
    for (const [sig, ms] of steps) {
      if (this.done) break;
      if (sig === 'SIGKILL') signalGroup(this.pid, sig);
      else signal(this.pid, sig);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.exited, new Promise((r) => (timer = setTimeout(r, ms)))]);
      clearTimeout(timer);
    }
    return this.done ? this.exited : null;
  }

  /** SIGKILL to the whole process group, as a crash would. */
  kill(): Promise<Exit | null> {
    return this.stop([['SIGKILL', 5_000]]);
  }

  /** The last lines of its log (for failure messages). */
  tail(lines = 30): string {
    return this.logFile ? tail(this.logFile, lines) : '';
  }
}

// `read` returns when this process's end of the pipe closes (it died, or stopped the child and killed us).
const WATCHDOG = `read _x; kill -"$2" "$1" 2>/dev/null; i=0
while kill -0 "$1" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL -- -"$1" 2>/dev/null; exit 0`;

function startWatchdog(name: string, pid: number, sig: NodeJS.Signals) {
  const w = spawn('/bin/sh', ['-c', WATCHDOG, `stack-watchdog-${name}`, String(pid), sig.replace(/^SIG/, '')], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  w.on('error', () => undefined);
  w.stdin?.on('error', () => undefined);
  w.unref();
  (w.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return w;
}

function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  if (!signal(-pid, sig)) signal(pid, sig);
}

/**
 * Stops every process still running, in `order` (lowest first; equal ranks together), and refuses to start
 * new ones from then on (start() throws Aborted). For the end of a run only.
 */
export async function stopAll(order: (c: Child) => number = () => 0): Promise<string[]> {
  closing = true;
  const all = [...running];
  const ranks = [...new Set(all.map(order))].sort((a, b) => a - b);
  for (const r of ranks) await Promise.all(all.filter((c) => order(c) === r).map((c) => c.stop()));
  return all.map((c) => c.name);
}

// ---------------------------------------------------------------------------------------------------------
// processes that are not our children (leftovers of an earlier run), via /proc

export function isAlive(pid: number): boolean {
  if (!pid || pid < 1) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return !fs.existsSync('/proc/self'); // no procfs: trust kill(0)
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

export function procReadlink(pid: number, what: 'cwd' | 'exe'): string | null {
  try {
    return fs.readlinkSync(`/proc/${pid}/${what}`).replace(/ \(deleted\)$/, '');
  } catch {
    return null;
  }
}

export function procCmdline(pid: number): string[] {
  const t = readText(`/proc/${pid}/cmdline`);
  return t ? t.split('\0').filter((s, i, a) => s !== '' || i < a.length - 1) : [];
}

export function allPids(): number[] {
  try {
    return fs
      .readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .filter((p) => p !== process.pid);
  } catch {
    return [];
  }
}

/** Escalating kill of a process that is not our child. */
export async function killAndWait(pid: number, steps: StopStep[]): Promise<boolean> {
  for (const [sig, ms] of steps) {
    if (!isAlive(pid)) return true;
    signal(pid, sig);
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (!isAlive(pid)) return true;
      await sleep(25);
    }
  }
  return !isAlive(pid);
}

// ---------------------------------------------------------------------------------------------------------
// ports, files, waiting

/** A loopback port that was free a moment ago: for a server to start on, or as an address nothing listens on. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export class PortInUseError extends Error {
  constructor(
    readonly what: string,
    readonly port: number,
  ) {
    super(`${what}: port ${port} on 127.0.0.1 is already in use (choose another port, or none for a free one)`);
  }
}

/** Throws PortInUseError when something listens on 127.0.0.1:`port` (a requested port is never silently replaced). */
export async function assertPortFree(what: string, port: number): Promise<void> {
  const free = await new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
  if (!free) throw new PortInUseError(what, port);
}

export function readText(p: string): string | null {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return null;
  }
}

export function fileSize(p: string): number {
  try {
    return fs.statSync(p).size;
  } catch {
    return 0;
  }
}

/** The file's text from byte `offset` on ('' when it cannot be read). */
export function readFrom(p: string, offset: number): string {
  try {
    return fs.readFileSync(p).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

export function tailLines(text: string, n = 40): string[] {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.slice(-n);
}

/** The last `n` lines of a log file (for failure messages). */
export function tail(file: string, n = 30): string {
  const t = readText(file);
  return t === null ? `(no log at ${file})` : tailLines(t, n).join('\n');
}

/** Polls `probe` until it returns true; throws after `timeoutMs` or when one of `procs` exits first. */
export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  procs: Child[] = [],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    const dead = procs.find((p) => p.done);
    if (dead) throw new Error(`${what}: ${dead.name} exited during start-up:\n${dead.tail()}`);
    if (Date.now() > deadline)
      throw new Error(`${what}: not ready within ${secs(timeoutMs)}${procs[0] ? `\n${procs[0].tail()}` : ''}`);
    await sleep(50);
  }
}

export function maskUrl(u: string): string {
  try {
    const url = new URL(u);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '<unparseable url>';
  }
}

/** Writes via a temporary file and rename: readers see the old or the new content, never a part. */
export function writeFileAtomic(file: string, content: string, mode = 0o644): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, content, { mode });
  fs.renameSync(tmp, file);
}

export function realpathOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
