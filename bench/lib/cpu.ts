// Who used the CPU during a measurement: each process group of the stack (API, worker, PostgreSQL, Redis,
// simulator, the load generator itself) and everything else on the machine ("other": other engineers' test
// runs). Read from /proc (Linux); elsewhere the meter reports nothing.
import fs from 'node:fs';
import os from 'node:os';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface ProcStat {
  pid: number;
  ppid: number;
  /** When the process started (clock ticks after boot): tells a reused pid from the same process. */
  startedAt: number;
  ticks: number;
}

function readProcs(): Map<number, ProcStat> {
  const out = new Map<number, ProcStat>();
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const text = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const close = text.lastIndexOf(')');
      const f = text.slice(close + 2).split(' ');
      // after "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
      // cutime cstime priority nice num_threads itrealvalue starttime
      out.set(Number(e), {
        pid: Number(e),
        ppid: Number(f[1]),
        startedAt: Number(f[19]),
        ticks: Number(f[11]) + Number(f[12]),
      });
    } catch {
      /* gone */
    }
  }
  return out;
}

export interface CpuUsage {
  seconds: number;
  /** CPU seconds per wall second, by group (1.0 = one core busy all the time). */
  cores: Record<string, number>;
  /** The machine's idle share over the window, in cores. */
  idleCores: number;
}

/** Names the groups: pid → label for the stack's own processes (children included). */
export type Labeller = () => Map<number, string>;

export class CpuMeter {
  private start?: { at: number; procs: Map<number, ProcStat>; idle: number };

  constructor(private readonly labels: Labeller) {}

  begin(): void {
    this.start = { at: Date.now(), procs: readProcs(), idle: idleTicks() };
  }

  end(): CpuUsage | null {
    if (!this.start) return null;
    const seconds = (Date.now() - this.start.at) / 1000;
    const procs = readProcs();
    if (procs.size === 0 || seconds <= 0) return null;
    const roots = this.labels();
    const labelOf = (pid: number): string => {
      for (let p: number | undefined = pid, depth = 0; p && depth < 50; depth++) {
        const own = roots.get(p);
        if (own) return own;
        p = procs.get(p)?.ppid ?? this.start!.procs.get(p)?.ppid;
      }
      return 'other';
    };
    const cores: Record<string, number> = {};
    for (const [pid, now] of procs) {
      const before = this.start.procs.get(pid);
      // The same process when it started at the same time. Not by name: kernel workers rename themselves with
      // the work they do (kworker/u8:1-events_unbound → kworker/u8:1-flush-8:0), and counting a renamed one
      // as new added its whole lifetime to "other" (up to 2.2 of 2 cores in one window).
      const delta = now.ticks - (before && before.startedAt === now.startedAt ? before.ticks : 0);
      if (delta <= 0) continue;
      const label = labelOf(pid);
      cores[label] = (cores[label] ?? 0) + delta / TICKS_PER_SECOND / seconds;
    }
    for (const k of Object.keys(cores)) cores[k] = Math.round(cores[k]! * 100) / 100;
    const idle = (idleTicks() - this.start.idle) / TICKS_PER_SECOND / seconds;
    return { seconds, cores, idleCores: Math.round(idle * 100) / 100 };
  }
}

function idleTicks(): number {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/);
    return Number(f[4]) + Number(f[5]); // idle + iowait
  } catch {
    return 0;
  }
}

export function formatCpu(u: CpuUsage | null): string {
  if (!u) return '  CPU: (not available)';
  const parts = Object.entries(u.cores)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(2)}`);
  return `  CPU (cores busy, of ${os.cpus().length}): ${parts.join(', ')}; idle ${u.idleCores.toFixed(2)}`;
}

/**
 * Waits until the machine is quiet: at least `minIdleCores` idle over a whole second (background work of the
 * previous phase, such as PostgreSQL writing out or vacuuming what it stored, has ended), at most `maxMs`.
 * Returns the idle cores of the last second and how long it waited.
 */
export async function waitUntilQuiet(
  minIdleCores: number,
  maxMs: number,
): Promise<{ idleCores: number; waitedMs: number }> {
  const t0 = Date.now();
  let idle = 0;
  while (Date.now() - t0 < maxMs) {
    const before = idleTicks();
    await new Promise((r) => setTimeout(r, 1000));
    idle = (idleTicks() - before) / TICKS_PER_SECOND;
    if (idle >= minIdleCores) break;
  }
  return { idleCores: Math.round(idle * 100) / 100, waitedMs: Date.now() - t0 };
}
