// What a private PostgreSQL and a private Redis share: a port that is free (or requested, and then never
// silently replaced) and kept across restarts, a Child with a pid file in the state dir, start attempts that
// retry a lost race for a free port, a readiness probe with a time limit, stop and restart.
import fs from 'node:fs';
import { removePidFile, writePidFile } from './state.js';
import {
  Aborted,
  Child,
  PortInUseError,
  StackError,
  assertPortFree,
  fileSize,
  freePort,
  readFrom,
  secs,
  sleep,
  stopping,
  type ChildOptions,
} from './process.js';

export type Launch = { ok: true } | { ok: false; text: string; exit?: string };

const BIND_FAILURE = /Address already in use|could not bind|could not create any TCP\/IP sockets/i;

export abstract class PrivateService {
  port: number;
  proc?: Child;
  /** How often it was (re)started. */
  starts = 0;
  abstract readonly logFile: string;

  constructor(
    /** The state directory (pid files in <dir>/pids). */
    protected readonly dir: string,
    /** Names it in messages ('PostgreSQL', 'redis-server'). */
    protected readonly label: string,
    port: number | undefined,
  ) {
    this.port = port ?? 0;
  }

  alive(): boolean {
    return this.proc?.alive() ?? false;
  }

  abstract start(): Promise<void>;

  async stop(): Promise<void> {
    await this.proc?.stop();
    if (this.proc) removePidFile(this.dir, this.proc.name);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Before the first start: a requested port that is taken is an error (before any other work). */
  protected async checkRequestedPort(): Promise<void> {
    if (this.alive()) throw new Error(`${this.label} is already running`);
    if (this.port !== 0 && this.starts === 0) await assertPortFree(this.label, this.port);
  }

  /**
   * Up to 6 attempts, on the kept (or requested) port or a free one each time; a lost race for a free port is
   * retried, on a fixed port it is PortInUseError. `recover` says whether another failure is worth another
   * attempt (it has fixed something); otherwise the failure is thrown with the log's last lines.
   */
  protected async attempts(
    attempt: (port: number) => Promise<Launch>,
    recover: (text: string) => Promise<boolean> = () => Promise.resolve(false),
  ): Promise<void> {
    for (let i = 1; i <= 6; i++) {
      if (stopping()) throw new Aborted();
      const fixed = this.port !== 0;
      const res = await attempt(fixed ? this.port : await freePort());
      if (res.ok) return;
      if (BIND_FAILURE.test(res.text)) {
        if (fixed) throw new PortInUseError(this.label, this.port);
        continue;
      }
      if (await recover(res.text)) continue;
      throw new StackError(`${this.label} failed to start${res.exit ? ` (exit ${res.exit})` : ''}`, 1, res.text);
    }
    throw new StackError(`${this.label} failed to start (no free port after several attempts)`);
  }

  /**
   * Starts the process on `port` and polls `probe` until it returns true (ready); a string from the probe is
   * a refusal (the process is stopped, the attempt failed with that text). Throws after `readyMs`.
   */
  protected async launch(
    o: ChildOptions,
    port: number,
    meta: Record<string, string>,
    probe: () => Promise<boolean | string>,
    readyMs: number,
  ): Promise<Launch> {
    const offset = fileSize(o.logFile!);
    fs.appendFileSync(o.logFile!, `\n===== ${o.name} start ${new Date().toISOString()} port ${port} =====\n`);
    const proc = await Child.start(o);
    writePidFile(this.dir, o.name, proc.pid, { ...meta, port });
    const deadline = Date.now() + readyMs;
    for (;;) {
      if (stopping()) throw new Aborted();
      if (proc.done) {
        removePidFile(this.dir, o.name);
        const r = await proc.exited;
        return { ok: false, text: readFrom(o.logFile!, offset), exit: String(r.code ?? r.signal) };
      }
      const ready = await probe();
      if (ready === true) {
        this.proc = proc;
        this.port = port;
        this.starts++;
        return { ok: true };
      }
      if (typeof ready === 'string' || Date.now() > deadline) {
        await proc.stop();
        removePidFile(this.dir, o.name);
        if (typeof ready === 'string') return { ok: false, text: ready };
        throw new StackError(`${this.label} was not ready within ${secs(readyMs)}`, 1, readFrom(o.logFile!, offset));
      }
      await sleep(25);
    }
  }
}
