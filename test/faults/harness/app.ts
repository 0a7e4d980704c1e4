// The real API and worker as separate node processes (dist/src/main.js, dist/src/worker.js), built first
// when dist is older than the sources.
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { freePort } from './services.js';
import { startProcess, tail, type Managed } from './proc.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Newest modification time of the .ts files under `dir` (recursively). */
function newestTs(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestTs(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts')) newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

function mtime(p: string): number {
  try {
    return fs.statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * `tsc -p tsconfig.build.json` when dist/src/{main,worker}.js are missing or the last build (dist/.tsbuildinfo,
 * rewritten by every incremental build that changed anything) is older than a file of src/ or simulator/.
 */
export function ensureBuilt(root: string): { built: boolean; ms: number } {
  const t = Date.now();
  const outputs = ['dist/src/main.js', 'dist/src/worker.js'].map((p) => mtime(path.join(root, p)));
  const lastBuild = mtime(path.join(root, 'dist/.tsbuildinfo'));
  const sources = Math.max(newestTs(path.join(root, 'src')), newestTs(path.join(root, 'simulator')));
  if (Math.min(...outputs) > 0 && lastBuild > sources) return { built: false, ms: 0 };
  const r = spawnSync(path.join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed (tsc -p tsconfig.build.json):\n${r.stdout}${r.stderr}`);
  return { built: true, ms: Date.now() - t };
}

/** Applies the migrations with the project's own offline command. */
export function migrate(root: string, databaseUrl: string): void {
  const r = spawnSync(path.join(root, 'node_modules/.bin/tsx'), ['prisma/migrate.ts', 'deploy'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  if (r.status !== 0) throw new Error(`migrations failed:\n${r.stdout}${r.stderr}`);
}

export interface AppEnv {
  databaseUrl: string;
  redisUrl: string;
  appSecret: string;
  extra?: Record<string, string>;
}

function baseEnv(e: AppEnv): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    ENV_FILE: 'none',
    WORKER_METRICS_PORT: '0',
    DATABASE_URL: e.databaseUrl,
    REDIS_URL: e.redisUrl,
    QUEUE_PREFIX: 'faults',
    // Nothing upstream is called by the webhook path; a closed loopback port makes any accidental call fail fast.
    UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v23.0',
    WHATSAPP_APP_SECRET: e.appSecret,
    WHATSAPP_VERIFY_TOKEN: 'fault-suite-verify-token',
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    SWAGGER_ENABLED: 'false',
    ...e.extra,
  };
}

export class ApiProcess {
  proc!: Managed;
  port = 0;
  constructor(
    private readonly root: string,
    private readonly logFile: string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(env: AppEnv): Promise<void> {
    this.port = await freePort();
    fs.appendFileSync(this.logFile, `\n===== api start ${new Date().toISOString()} =====\n`);
    this.proc = startProcess('api', process.execPath, ['dist/src/main.js'], this.logFile, {
      cwd: this.root,
      env: { ...baseEnv(env), PORT: String(this.port), LOG_LEVEL: process.env.FAULTS_API_LOG_LEVEL ?? 'warn' },
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!this.proc.alive()) throw new Error(`API exited at start:\n${tail(this.logFile)}`);
      if ((await httpStatus(`${this.url}/health/ready`)) === 200) return;
      if (Date.now() > deadline) throw new Error(`API not ready after 30 s:\n${tail(this.logFile)}`);
      await sleep(100);
    }
  }
}

export class WorkerProcess {
  proc!: Managed;
  /** Every process started, for "recovered without restart" checks. */
  readonly pids: number[] = [];
  constructor(
    private readonly root: string,
    private readonly logFile: string,
  ) {}

  async start(env: AppEnv): Promise<void> {
    const offset = fs.existsSync(this.logFile) ? fs.statSync(this.logFile).size : 0;
    this.proc = startProcess('worker', process.execPath, ['dist/src/worker.js'], this.logFile, {
      cwd: this.root,
      env: { ...baseEnv(env), LOG_LEVEL: 'info' },
    });
    this.pids.push(this.proc.pid);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!this.proc.alive()) throw new Error(`worker exited at start:\n${tail(this.logFile)}`);
      if (readFrom(this.logFile, offset).includes('"worker started"')) return;
      if (Date.now() > deadline) throw new Error(`worker not ready after 30 s:\n${tail(this.logFile)}`);
      await sleep(100);
    }
  }
}

function readFrom(file: string, offset: number): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const buf = Buffer.alloc(Math.max(0, size - offset));
      fs.readSync(fd, buf, 0, buf.length, offset);
      return buf.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/** Status of a GET (0 when there is no answer within the timeout). */
export function httpStatus(url: string, timeoutMs = 2000): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}
