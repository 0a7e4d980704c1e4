// A private PgBouncer in transaction pooling in front of one PostgreSQL, as managed PostgreSQL is fronted: for
// `./scripts/dev.sh --scaled`, the scaled suite and the pooler test. With `preparedStatements`, a 1.21+ one keeping
// named statements across transactions (`max_prepared_statements`: built once from Debian's newer source when the
// system has none, pgbouncer-build.ts); otherwise, or when that cannot be had, Debian's (installed with apt-get when
// missing and we are root), which needs DATABASE_PREPARED_STATEMENTS=unnamed.
// PgBouncer refuses to run as root, so as root it runs as the `postgres` user (the package creates it) or `nobody`;
// its config goes to the state directory (readable by that user), its output to pgbouncer.log.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { StackError, allPids, isAlive, killAndWait, procCmdline } from './process.js';
import { keepsPreparedStatements, pgBouncerVersion, pgBouncerWithPreparedStatements } from './pgbouncer-build.js';
import { findExecutable } from './redis.js';
import { PrivateService } from './service.js';
import { readPidFile, removePidFile } from './state.js';

const READY_TIMEOUT_MS = 30_000;
type Log = (msg: string) => void;

export interface PgBouncerOptions {
  /** State directory: pgbouncer/ (its config), pgbouncer.log, pids/. */
  dir: string;
  /** The PostgreSQL it pools (postgresql://user:password@host:port/db); every database of that server is served. */
  upstreamUrl: string;
  /** Server connections per database and user (default 20). */
  poolSize?: number;
  /** Wants a PgBouncer 1.21+ with prepared statements in transaction pooling (see `keepsPrepared` after start). */
  preparedStatements?: boolean;
  port?: number;
  log?: Log;
}

export class PgBouncer extends PrivateService {
  version = '';
  /** This PgBouncer keeps named statements across transactions (1.21+, max_prepared_statements set). */
  keepsPrepared = false;
  readonly logFile: string;
  private readonly confDir: string;
  private readonly log: Log;

  constructor(private readonly o: PgBouncerOptions) {
    super(o.dir, 'PgBouncer', o.port);
    this.logFile = path.join(o.dir, 'pgbouncer.log');
    this.confDir = path.join(o.dir, 'pgbouncer');
    this.log = o.log ?? (() => undefined);
  }

  /** The same URL as the upstream's, on the pooler's port. */
  url(database?: string): string {
    const u = new URL(this.o.upstreamUrl);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    if (database) u.pathname = `/${database}`;
    return u.href;
  }

  async start(): Promise<void> {
    await this.checkRequestedPort();
    const bin =
      (this.o.preparedStatements ? await pgBouncerWithPreparedStatements(this.log) : undefined) ??
      findExecutable('pgbouncer') ??
      installPgBouncer(this.log);
    this.version = pgBouncerVersion(bin);
    this.keepsPrepared = Boolean(this.o.preparedStatements) && keepsPreparedStatements(this.version);
    fs.mkdirSync(this.confDir, { recursive: true, mode: 0o755 });
    const asUser = process.getuid?.() === 0 ? ['-u', userExists('postgres') ? 'postgres' : 'nobody'] : [];
    await this.attempts((port) => {
      const ini = path.join(this.confDir, 'pgbouncer.ini');
      fs.writeFileSync(ini, this.config(port), { mode: 0o644 });
      return this.launch(
        { name: 'pgbouncer', cmd: bin, args: [...asUser, ini], logFile: this.logFile },
        port,
        { ini },
        () => accepts(port),
        READY_TIMEOUT_MS,
      );
    });
  }

  private config(port: number): string {
    const u = new URL(this.o.upstreamUrl);
    const user = decodeURIComponent(u.username);
    const password = decodeURIComponent(u.password);
    return [
      '[databases]',
      // Every database of the upstream server, under its own name. With named statements, their plans as the
      // service asks for them on its direct connections (`-c plan_cache_mode=force_generic_plan`, which a pooler
      // accepts in the startup options but cannot pass on: not a parameter PostgreSQL reports).
      `* = host=${u.hostname} port=${u.port || 5432} user=${user} password=${password}${this.keepsPrepared ? " connect_query='SET plan_cache_mode = force_generic_plan'" : ''}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      'pool_mode = transaction',
      `default_pool_size = ${this.o.poolSize ?? 20}`,
      'max_client_conn = 1000',
      // node-postgres sends it; PgBouncer would refuse the connection otherwise.
      'ignore_startup_parameters = extra_float_digits',
      // Named statements of the clients, prepared again on whichever server connection runs them (1.21+).
      // The service's named mode sends `-c plan_cache_mode=…` in the startup options; a 1.20+ pooler accepts a parameter
      // there only when it tracks it (applied by connect_query above).
      ...(this.keepsPrepared
        ? ['max_prepared_statements = 500', 'track_extra_parameters = IntervalStyle, plan_cache_mode']
        : []),
      'server_reset_query =',
      // One line per client login: the proof, in pgbouncer.log, that a client went through the pooler.
      'log_connections = 1',
      'log_disconnections = 0',
      '',
    ].join('\n');
  }
}

function userExists(name: string): boolean {
  return spawnSync('id', ['-u', name], { stdio: 'ignore' }).status === 0;
}

/** A TCP connection is accepted (PgBouncer answers the startup packet itself; that is enough to call it ready). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.setTimeout(1_000, () => done(false));
  });
}

/** apt-get install pgbouncer (root only), as scripts/lib/common.sh's ensure_pgbouncer does. */
function installPgBouncer(log: Log): string {
  if (process.getuid?.() !== 0)
    throw new StackError('PgBouncer is not installed. Install it with:\n    sudo apt-get install -y pgbouncer', 2);
  log('PgBouncer is not installed; installing it with apt-get (one-time)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const opts = ['-o', 'DPkg::Lock::Timeout=120'];
  let r = spawnSync('apt-get', ['install', '-y', '-qq', ...opts, 'pgbouncer'], { stdio: 'inherit', env });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update', '-qq', ...opts], { stdio: 'inherit', env });
    r = spawnSync('apt-get', ['install', '-y', '-qq', ...opts, 'pgbouncer'], { stdio: 'inherit', env });
  }
  // The package starts its own system-wide instance; ours is private.
  spawnSync('service', ['pgbouncer', 'stop'], { stdio: 'ignore' });
  const bin = findExecutable('pgbouncer');
  if (!bin) throw new StackError(`apt-get install pgbouncer failed (exit ${r.status})`);
  return bin;
}

/** Stops a PgBouncer an earlier run left in this state dir (any pgbouncer whose command line names its config). */
export async function stopStalePgBouncer(dir: string): Promise<string[]> {
  const ini = path.join(dir, 'pgbouncer', 'pgbouncer.ini');
  const ours = (pid: number) => procCmdline(pid).some((a) => a === ini) && /pgbouncer/.test(procCmdline(pid)[0] ?? '');
  const pids = new Set(allPids().filter(ours));
  const rec = readPidFile(dir, 'pgbouncer');
  if (rec && ours(rec.pid)) pids.add(rec.pid);
  const stopped: string[] = [];
  for (const pid of pids) {
    if (!isAlive(pid)) continue;
    await killAndWait(pid, [
      ['SIGTERM', 3_000],
      ['SIGKILL', 3_000],
    ]);
    stopped.push(`pgbouncer ${pid}`);
  }
  removePidFile(dir, 'pgbouncer');
  return stopped;
}
