// A state directory's bookkeeping: pid files (<dir>/pids/<name>.pid), the supervising CLI that owns the
// directory, and the clean-up of what an earlier run left running there.
import fs from 'node:fs';
import path from 'node:path';
import { isAlive, killAndWait, procCmdline, procReadlink, readText, realpathOr, writeFileAtomic } from './process.js';

const pidFile = (dir: string, name: string) => path.join(dir, 'pids', `${name}.pid`);

/** First line the pid (so `kill $(head -1 file)` works), then key=value lines. */
export function writePidFile(dir: string, name: string, pid: number, meta: Record<string, string | number> = {}): void {
  fs.mkdirSync(path.join(dir, 'pids'), { recursive: true });
  writeFileAtomic(
    pidFile(dir, name),
    [String(pid), ...Object.entries(meta).map(([k, v]) => `${k}=${v}`)].join('\n') + '\n',
  );
}

export function readPidFile(
  dir: string,
  name: string,
): { pid: number; meta: Record<string, string | undefined> } | null {
  const t = readText(pidFile(dir, name));
  if (!t) return null;
  const [first, ...rest] = t.split('\n');
  const pid = Number(first!.trim());
  if (!Number.isInteger(pid) || pid < 1) return null;
  const meta: Record<string, string> = {};
  for (const line of rest) {
    const i = line.indexOf('=');
    if (i > 0) meta[line.slice(0, i)] = line.slice(i + 1);
  }
  return { pid, meta };
}

export function removePidFile(dir: string, name: string): void {
  fs.rmSync(pidFile(dir, name), { force: true });
}

/** The state dir a running scripts/stack/cli.ts was given (null when `pid` is not one). */
function cliStateDir(pid: number): string | null {
  const argv = procCmdline(pid);
  if (!argv.some((a) => /(^|\/)stack\/cli\.[jt]s$/.test(a))) return null;
  let dir: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--state-dir') dir = argv[i + 1] ?? null;
    else if (argv[i]!.startsWith('--state-dir=')) dir = argv[i]!.slice('--state-dir='.length);
  }
  return dir && path.resolve(procReadlink(pid, 'cwd') ?? '/', dir);
}

/** The pid of another live CLI supervising `dir`, if any. */
export function liveSupervisor(dir: string): number | null {
  const rec = readPidFile(dir, 'supervisor');
  if (!rec || rec.pid === process.pid || !isAlive(rec.pid)) return null;
  const its = cliStateDir(rec.pid);
  return its && realpathOr(its) === realpathOr(dir) ? rec.pid : null;
}

/** Stops the supervising CLI of `dir` (it stops its services on the way out). */
export async function stopSupervisor(dir: string, log: (m: string) => void): Promise<string[]> {
  const pid = liveSupervisor(dir);
  if (!pid) return [];
  log(`stopping running supervisor pid ${pid}`);
  await killAndWait(pid, [
    ['SIGTERM', 30_000],
    ['SIGKILL', 3_000],
  ]);
  return [`supervisor ${pid}`];
}
