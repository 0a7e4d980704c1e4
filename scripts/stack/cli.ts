// PostgreSQL + Redis for the shell scripts (scripts/lib/common.sh start_services, used by dev.sh and test.sh):
//
//   node --import tsx scripts/stack/cli.ts --state-dir <dir> [--db-name bmapi] [--extra-db <name>]... [--parent-pid <pid>] [--scaled]
//   node --import tsx scripts/stack/cli.ts --state-dir <dir> --stop-stale
//
// Runs in the foreground. Uses $DATABASE_URL / $REDIS_URL when they are set; otherwise starts a private
// PostgreSQL and a private redis-server (scripts/stack/postgres.ts, redis.ts) on free ports bound to
// 127.0.0.1, data kept in the state dir across runs. When everything accepts connections it writes
// <state-dir>/services.env (DATABASE_URL, DATABASE_URL_<NAME>..., REDIS_URL, LOCAL_SERVICES_PID) atomically,
// (with --scaled: a primary, a streaming replica, PgBouncer and a Redis Cluster, scripts/stack/scaled.ts, and
// DATABASE_DIRECT_URL, DATABASE_READ_URL, DATABASE_PREPARED_STATEMENTS, REDIS_CLUSTER_NODES instead of REDIS_URL)
// then stays alive until SIGTERM/SIGHUP (and SIGINT, unless --parent-pid names the process that decides when)
// or until its parent process dies, and stops what it started.
// If this process itself is killed (even SIGKILL), the watchdogs of scripts/stack/process.ts stop the services.
//
// Exit codes: 0 stopped normally, 1 failure / a service died, 2 redis-server missing (not root),
// 3 another supervisor is using this state dir, 64 usage error.
import fs from 'node:fs';
import path from 'node:path';
import { Aborted, StackError, isAlive, secs, stopAll, tail, writeFileAtomic } from './process.js';
import { startServices, stopStale, type Services } from './services.js';
import { liveSupervisor, readPidFile, removePidFile, writePidFile } from './state.js';

const T0 = Date.now();
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);
const log = (msg: string) => console.log(`[services] ${msg}`);
const warn = (msg: string) => console.error(`[services] ${msg}`);

const USAGE = `usage: node --import tsx scripts/stack/cli.ts --state-dir <dir> [--db-name <name>] [--extra-db <name>]...
                                                [--parent-pid <pid>] [--scaled] [--stop-stale]

  --state-dir <dir>   state directory (data, logs, pids, services.env); required
  --db-name <name>    database to create in the private PostgreSQL (default: bmapi)
  --extra-db <name>   additional database to create (repeatable); exported as DATABASE_URL_<NAME>
  --parent-pid <pid>  stop when this pid dies (default: stop when the parent process changes)
  --scaled            a PostgreSQL primary + streaming replica, PgBouncer, a Redis Cluster (3 + 3)
  --stop-stale        stop leftovers of a previous run for this state dir (incl. a live supervisor), then exit

env: DATABASE_URL / REDIS_URL, when non-empty, are used instead of starting PostgreSQL / Redis.`;

interface Options {
  stateDir: string;
  dbName: string;
  extraDbs: string[];
  parentPid: number | null;
  stopStale: boolean;
  scaled: boolean;
}

class UsageError extends Error {}

function parseArgs(argv: string[]): Options {
  const o = {
    stateDir: '',
    dbName: 'bmapi',
    extraDbs: [] as string[],
    parentPid: null as number | null,
    stopStale: false,
    scaled: false,
  };
  for (let i = 0; i < argv.length; i++) {
    let flag = argv[i]!;
    let inline: string | undefined;
    if (flag.startsWith('--') && flag.includes('=')) {
      inline = flag.slice(flag.indexOf('=') + 1);
      flag = flag.slice(0, flag.indexOf('='));
    }
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--state-dir') o.stateDir = value();
    else if (flag === '--db-name') o.dbName = value();
    else if (flag === '--extra-db') o.extraDbs.push(value());
    else if (flag === '--stop-stale') o.stopStale = true;
    else if (flag === '--scaled') o.scaled = true;
    else if (flag === '--parent-pid') {
      const v = value();
      if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`--parent-pid: not a pid: ${v}`);
      o.parentPid = Number(v);
    } else if (flag === '-h' || flag === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else throw new UsageError(`unknown argument: ${argv[i]}`);
  }
  if (!o.stateDir) throw new UsageError('--state-dir is required');
  for (const name of [o.dbName, ...o.extraDbs]) {
    if (!/^[A-Za-z_][A-Za-z0-9_-]{0,62}$/.test(name)) throw new UsageError(`invalid database name: ${name}`);
  }
  return { ...o, stateDir: path.resolve(o.stateDir) };
}

/** Relative to the working directory when inside it, else absolute. */
function rel(p: string): string {
  const r = path.relative(process.cwd(), p);
  return r && !r.startsWith('..') && !path.isAbsolute(r) ? r : p;
}

let opts: Options;
let envFile = '';
let ownsStateDir = false;
let parentTimer: NodeJS.Timeout | undefined;
let shuttingDown: Promise<never> | undefined;

function report(e: unknown): void {
  if (e instanceof Aborted) return;
  warn(`error: ${e instanceof Error ? e.message : String(e)}`);
  if (e instanceof Error && !(e instanceof StackError) && e.stack) console.error(e.stack);
}

function shutdown(code: number, reason?: string): Promise<never> {
  if (shuttingDown) {
    if (reason) log(`already stopping (${reason})`);
    return shuttingDown;
  }
  shuttingDown = (async () => {
    clearInterval(parentTimer);
    if (reason) log(`stopping (${reason})`);
    setTimeout(() => {
      warn('shutdown took too long; exiting');
      process.exit(code || 1);
    }, 45_000).unref();
    if (ownsStateDir) fs.rmSync(envFile, { force: true });
    // Redis first, PostgreSQL last (anything still starting, e.g. initdb, with Redis).
    const stopped = await stopAll((c) => (c.name === 'postgres' ? 1 : 0));
    if (ownsStateDir) {
      removePidFile(opts.stateDir, 'postgres');
      removePidFile(opts.stateDir, 'redis');
      if (readPidFile(opts.stateDir, 'supervisor')?.pid === process.pid) removePidFile(opts.stateDir, 'supervisor');
    }
    if (stopped.length) log(`stopped ${stopped.join(' and ')}`);
    process.exit(code);
  })();
  return shuttingDown;
}

/** From now on a service that exits is fatal. */
function watch(services: Services): void {
  // A Redis Cluster node may die (its replica takes over): not fatal.
  const scaled = services.scaled;
  for (const s of [services.postgres, services.redis, scaled?.replica?.server, scaled?.pooler]) {
    void s?.proc?.exited.then(({ code, signal }) => {
      if (shuttingDown) return;
      const label = s.proc!.name === 'redis' ? 'redis-server' : s.proc!.name;
      warn(`${label} exited unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`})`);
      warn(`--- last lines of ${s.logFile} ---\n${tail(s.logFile, 30)}`);
      void shutdown(1, `${label} died`);
    });
  }
}

async function main(): Promise<void> {
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`stack/cli: ${e.message}\n\n${USAGE}`);
    process.exit(64);
  }
  const dir = opts.stateDir;
  envFile = path.join(dir, 'services.env');

  if (opts.stopStale) {
    const stopped = await stopStale(dir, { supervisor: true, log });
    fs.rmSync(envFile, { force: true });
    removePidFile(dir, 'supervisor');
    log(stopped.length ? `stale cleanup: stopped ${stopped.join(', ')}` : 'stale cleanup: nothing was running');
    process.exit(0);
  }

  const other = liveSupervisor(dir);
  if (other) {
    warn(`another stack supervisor (pid ${other}) is using ${dir}`);
    warn(`stop it first (kill ${other}, or --stop-stale) or use a different --state-dir`);
    process.exit(3);
  }
  ownsStateDir = true;
  writePidFile(dir, 'supervisor', process.pid, { stateDir: dir, started: new Date().toISOString() });
  fs.rmSync(envFile, { force: true });

  // Ctrl-C in a terminal reaches the whole foreground process group: the script that started this supervisor
  // and, at the same moment, its API and worker. With --parent-pid the script decides the order (its cleanup
  // stops the processes that use the database first, then sends SIGTERM here), so that an API flushing its
  // last writes on the way out does not meet a database already going down; should the script die instead,
  // the parent check below stops everything within a second.
  const stopSignals = opts.parentPid ? (['SIGTERM', 'SIGHUP'] as const) : (['SIGINT', 'SIGTERM', 'SIGHUP'] as const);
  if (opts.parentPid)
    process.on('SIGINT', () => log('SIGINT: left to the parent process, which stops the services last'));
  for (const sig of stopSignals) process.on(sig, () => void shutdown(0, `received ${sig}`));
  for (const ev of ['uncaughtException', 'unhandledRejection'] as const) {
    process.on(ev, (e) => {
      report(e);
      void shutdown(1, 'internal error');
    });
  }
  const initialPpid = process.ppid;
  const parentGone = () =>
    opts.parentPid ? !isAlive(opts.parentPid) : initialPpid > 1 && process.ppid !== initialPpid;
  parentTimer = setInterval(() => {
    if (parentGone()) void shutdown(0, `parent process ${opts.parentPid ?? initialPpid} exited`);
  }, 1_000);
  if (parentGone()) return void shutdown(0, `parent process ${opts.parentPid} is not running`);

  let services: Services;
  try {
    services = await startServices({ dir, dbName: opts.dbName, extraDbs: opts.extraDbs, scaled: opts.scaled, log });
  } catch (e) {
    if (shuttingDown) return;
    report(e);
    return void shutdown(e instanceof StackError ? e.exitCode : 1, 'startup failed');
  }
  if (shuttingDown) return;
  watch(services);
  writeFileAtomic(envFile, [...services.envLines(), `LOCAL_SERVICES_PID=${process.pid}`].join('\n') + '\n', 0o600);
  for (const line of services.readyLines) log(line);
  log(
    `ready in ${secs(Date.now() - T0)}; wrote ${rel(envFile)} (supervisor pid ${process.pid}; stop with kill ${process.pid})`,
  );
}

main().catch((e: unknown) => {
  report(e);
  if (ownsStateDir) void shutdown(e instanceof StackError ? e.exitCode : 1, 'startup failed');
  else process.exit(e instanceof StackError ? e.exitCode : 1);
});
