// A private redis-server (installed with apt-get when missing and we are root), started, stopped and
// restarted on the same port, without persistence (a restart comes back empty); or a given REDIS_URL.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import {
  Aborted,
  StackError,
  allPids,
  isAlive,
  killAndWait,
  maskUrl,
  procCmdline,
  procReadlink,
  realpathOr,
  secs,
  sleep,
  stopping,
  type StopStep,
} from './process.js';
import { PrivateService } from './service.js';
import { readPidFile, removePidFile } from './state.js';

const READY_TIMEOUT_MS = 30_000;
const GIVEN_URL_TIMEOUT_MS = 30_000;
const REDIS_STOP_STEPS: StopStep[] = [
  ['SIGTERM', 5_000],
  ['SIGKILL', 3_000],
];
type Log = (msg: string) => void;

export interface RedisOptions {
  /** State directory: redis/ (its working directory), redis.log, pids/. */
  dir: string;
  /** A fixed port; when it is taken start() throws PortInUseError. Default: a free port, kept across restarts. */
  port?: number;
  /** The redis-server binary (default: found on PATH, see findRedisServer). */
  bin?: string;
  log?: Log;
}

export class Redis extends PrivateService {
  version = '';
  readonly logFile: string;
  private readonly dataDir: string;
  private readonly log: Log;

  constructor(private readonly o: RedisOptions) {
    super(o.dir, 'redis-server', o.port);
    this.logFile = path.join(o.dir, 'redis.log');
    this.dataDir = path.join(o.dir, 'redis');
    this.log = o.log ?? (() => undefined);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    await this.checkRequestedPort();
    const bin = this.o.bin ?? (await findRedisServer(this.log));
    this.version ||=
      /v=(\d+(?:\.\d+)*)/.exec(spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout ?? '')?.[1] ?? '?';
    fs.mkdirSync(this.dataDir, { recursive: true });
    await this.attempts((port) =>
      this.launch(
        {
          name: 'redis',
          cmd: bin,
          args: [
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--save',
            '',
            '--appendonly',
            'no',
            '--daemonize',
            'no',
            '--dir',
            this.dataDir,
            '--logfile',
            '',
          ],
          logFile: this.logFile,
          cwd: this.dataDir,
          stopSteps: REDIS_STOP_STEPS,
        },
        port,
        { dir: this.dataDir },
        () => redisPing({ host: '127.0.0.1', port }),
        READY_TIMEOUT_MS,
      ),
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// the binary

export function findExecutable(name: string): string | null {
  for (const d of [
    ...(process.env.PATH ?? '').split(':').filter(Boolean),
    '/usr/local/bin',
    '/usr/bin',
    '/usr/sbin',
    '/bin',
  ]) {
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

/** redis-server from PATH, or null when it is missing but we are root (then start() installs it); exit code 2 otherwise. */
export function redisServerOrInstallable(): string | null {
  const bin = findExecutable('redis-server');
  if (bin || process.getuid?.() === 0) return bin;
  throw new StackError(
    'redis-server is not installed. Install it with:\n    sudo apt-get install -y redis-server\nor set REDIS_URL to an existing Redis.',
    2,
  );
}

/** redis-server from PATH; installed with apt-get when missing and we are root. */
export async function findRedisServer(log: Log): Promise<string> {
  return redisServerOrInstallable() ?? installRedis(log);
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number | null> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
    c.once('error', () => resolve(null));
    c.once('exit', (code) => resolve(code));
  });
}

let installing: Promise<string> | undefined;

function installRedis(log: Log): Promise<string> {
  installing ??= (async () => {
    const t = Date.now();
    log('redis-server is not installed; installing it with apt-get (one-time, usually 10-30 s)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const aptOpts = ['-o', 'DPkg::Lock::Timeout=120'];
    const policy = spawnSync('apt-cache', ['policy', 'redis-server'], { encoding: 'utf8', env });
    const candidate = /Candidate:\s*(\S+)/.exec(policy.stdout ?? '')?.[1];
    let updated = false;
    const update = async () => {
      log('[apt] apt-get update -qq');
      updated = true;
      const code = await run('apt-get', ['update', '-qq', ...aptOpts], env);
      if (code !== 0) log(`[apt] apt-get update failed (exit ${code})`);
    };
    if (!candidate || candidate === '(none)') await update();
    for (;;) {
      if (stopping()) throw new Aborted();
      log('[apt] apt-get install -y -qq redis-server');
      const ticker = setInterval(() => log(`[apt] still installing redis-server (${secs(Date.now() - t)})`), 10_000);
      const code = await run('apt-get', ['install', '-y', '-qq', ...aptOpts, 'redis-server'], env);
      clearInterval(ticker);
      const bin = findExecutable('redis-server');
      if (code === 0 && bin) {
        log(`[apt] installed redis-server (${secs(Date.now() - t)})`);
        return bin;
      }
      if (!updated) {
        await update();
        continue;
      }
      throw new StackError(`apt-get install redis-server failed (exit ${code})`);
    }
  })();
  return installing;
}

// ---------------------------------------------------------------------------------------------------------
// PING, a given REDIS_URL

export interface RedisTarget {
  host: string;
  port: number;
  username?: string;
  password?: string;
  useTls?: boolean;
}

/** Pipelines optional AUTH + PING over a raw socket (TLS for rediss://); resolves true on +PONG. */
export function redisPing(
  { host, port, username, password, useTls }: RedisTarget,
  timeoutMs = 1_000,
): Promise<boolean> {
  return new Promise((resolve) => {
    const resp = (args: string[]) =>
      `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
    const cmds = [
      ...(password ? [resp(username ? ['AUTH', username, password] : ['AUTH', password])] : []),
      resp(['PING']),
    ];
    const sock = useTls
      ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, rejectUnauthorized: false })
      : net.connect({ host, port });
    let buf = '';
    let finished = false;
    const done = (ok: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.once(useTls ? 'secureConnect' : 'connect', () => sock.write(cmds.join('')));
    sock.on('data', (d: Buffer) => {
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

/** Waits (up to 30 s) until a given REDIS_URL answers PING. */
export async function useGivenRedis(url: string, log: Log): Promise<void> {
  let target: RedisTarget;
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
    throw new StackError(`REDIS_URL is not a valid redis:// URL: ${(e as Error).message}`);
  }
  const masked = maskUrl(url);
  const deadline = Date.now() + GIVEN_URL_TIMEOUT_MS;
  let warned = false;
  while (!(await redisPing(target, 2_000))) {
    if (stopping()) throw new Aborted();
    if (Date.now() > deadline) throw new StackError(`REDIS_URL (${masked}) does not answer PING`);
    if (!warned) log(`waiting for REDIS_URL (${masked}) to answer PING`);
    warned = true;
    await sleep(500);
  }
}

// ---------------------------------------------------------------------------------------------------------
// leftovers of an earlier run

function isRedisOf(pid: number, realRedisDir: string): boolean {
  if (procReadlink(pid, 'cwd') !== realRedisDir) return false;
  const exe = path.basename(procReadlink(pid, 'exe') ?? '');
  return /^redis-(server|check-rdb)$/.test(exe) || (procCmdline(pid)[0] ?? '').startsWith('redis-server');
}

/** Stops a redis-server still running in this state dir (pid file, then any redis-server whose cwd is its redis dir). */
export async function stopStaleRedis(dir: string): Promise<string[]> {
  const stopped: string[] = [];
  const redisDir = path.join(dir, 'redis');
  if (fs.existsSync(redisDir)) {
    const real = realpathOr(redisDir);
    const pids = new Set<number>();
    const rec = readPidFile(dir, 'redis');
    if (rec) pids.add(rec.pid);
    for (const pid of allPids()) if (isRedisOf(pid, real)) pids.add(pid);
    for (const pid of pids) {
      if (isAlive(pid) && isRedisOf(pid, real)) {
        await killAndWait(pid, REDIS_STOP_STEPS);
        stopped.push(`redis ${pid}`);
      }
    }
  }
  removePidFile(dir, 'redis');
  return stopped;
}
