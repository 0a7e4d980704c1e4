import { randomBytes } from 'node:crypto';
// The service's own processes from a build (dist/, or a private build directory): the simulator, the API and
// the worker, each a Child (scripts/stack/process.ts) with its log file; plus the build and the migrations.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, freePort, waitFor } from './process.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs a command in the repository; rejects with its output when it fails. */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, label: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${label} failed (exit ${code}):\n${out.trim()}`)),
    );
  });
}

/** Newest modification time of the .ts files under `dir` (recursively, specs excluded). */
function newestTs(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestTs(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts')) newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

const mtime = (p: string) => (fs.existsSync(p) ? fs.statSync(p).mtimeMs : 0);

/**
 * `tsc -p tsconfig.build.json` into `outDir` (default dist/) when its src/{main,worker}.js are missing or its
 * last build (<outDir>/.tsbuildinfo, rewritten by every incremental build that changed anything) is older
 * than a file of src/ or simulator/ (always with force).
 */
export async function build(
  outDir = path.join(ROOT, 'dist'),
  o: { force?: boolean } = {},
): Promise<{ built: boolean; ms: number }> {
  const t = Date.now();
  const info = path.join(outDir, '.tsbuildinfo');
  const outputs = ['src/main.js', 'src/worker/main.js', 'simulator/main.js'].map((p) => mtime(path.join(outDir, p)));
  const sources = Math.max(newestTs(path.join(ROOT, 'src')), newestTs(path.join(ROOT, 'simulator')));
  if (!o.force && Math.min(...outputs) > 0 && mtime(info) > sources) return { built: false, ms: 0 };
  fs.mkdirSync(outDir, { recursive: true });
  await run(
    path.join(ROOT, 'node_modules/.bin/tsc'),
    ['-p', 'tsconfig.build.json', '--outDir', outDir, '--tsBuildInfoFile', info],
    process.env,
    'tsc -p tsconfig.build.json',
  );
  return { built: true, ms: Date.now() - t };
}

/** Applies the migrations with the project's own offline command. */
export async function migrate(databaseUrl: string): Promise<void> {
  await run(
    path.join(ROOT, 'node_modules/.bin/tsx'),
    ['prisma/migrate.ts', 'deploy'],
    { ...process.env, DATABASE_URL: databaseUrl },
    'migrate deploy',
  );
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

export interface AppEnvOptions {
  databaseUrl: string;
  redisUrl: string;
  appSecret: string;
  encryptionKey: string;
  queuePrefix: string;
  upstreamBaseUrl: string;
  verifyToken?: string;
}

/** A production-like environment for the API and the worker, independent of the caller's own (no .env file). */
export function appEnv(o: AppEnvOptions): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    ENV_FILE: 'none',
    SWAGGER_ENABLED: 'false',
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    QUEUE_PREFIX: o.queuePrefix,
    UPSTREAM_BASE_URL: o.upstreamBaseUrl,
    WHATSAPP_APP_SECRET: o.appSecret,
    // Production wants random-looking shared secrets of 32+ characters, and a metrics token.
    WHATSAPP_VERIFY_TOKEN: o.verifyToken ?? randomBytes(24).toString('base64url'),
    METRICS_TOKEN: randomBytes(24).toString('base64url'),
    ENCRYPTION_KEY: o.encryptionKey,
  };
}

export interface NodeProcessOptions {
  /** Names the process and its log file (<logDir>/<name>.log unless logFile is given). */
  name: string;
  /** The build to run (default dist/). */
  buildDir?: string;
  logDir: string;
  logFile?: string;
  /** Truncate the log first (default: append, e.g. a restarted worker continues its log). */
  truncate?: boolean;
  env: NodeJS.ProcessEnv;
  /** node options before the script (--cpu-prof, --import ...). */
  nodeArgs?: string[];
  /** Readiness timeout (default 60 s). */
  readyMs?: number;
}

export interface Served {
  proc: Child;
  port: number;
  url: string;
}

/** Starts `script` of the build with `env`; ready when GET http://127.0.0.1:<port><readyPath> answers 200. */
async function startNode(
  o: NodeProcessOptions,
  script: string,
  env: NodeJS.ProcessEnv,
  port: number,
  readyPath: string,
): Promise<Served> {
  const url = `http://127.0.0.1:${port}`;
  const logFile = o.logFile ?? path.join(o.logDir, `${o.name}.log`);
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  if (!o.truncate) fs.appendFileSync(logFile, `\n===== ${o.name} start ${new Date().toISOString()} =====\n`);
  const proc = await Child.start({
    name: o.name,
    cmd: process.execPath,
    args: [...(o.nodeArgs ?? []), path.join(o.buildDir ?? path.join(ROOT, 'dist'), script)],
    logFile,
    truncate: o.truncate,
    cwd: ROOT,
    env,
  });
  await waitFor(o.name, async () => (await httpStatus(`${url}${readyPath}`)) === 200, o.readyMs ?? 60_000, [proc]);
  return { proc, port, url };
}

/** The WhatsApp Cloud API simulator (Meta's stand-in); `env` adds SIMULATOR_* settings. */
export async function startSimulator(o: NodeProcessOptions & { port?: number }): Promise<Served> {
  const port = o.port ?? (await freePort());
  return startNode(
    o,
    'simulator/main.js',
    { PATH: process.env.PATH, ...o.env, SIMULATOR_PORT: String(port) },
    port,
    '/_sim/health',
  );
}

/**
 * The API and the worker start as `npm start` does: with the tracing bootstrap preloaded (it does nothing unless the
 * OTEL_* variables of `env` turn tracing on). A build from before it existed (a bench of an older commit) runs without.
 */
function withTracing(o: NodeProcessOptions): NodeProcessOptions {
  const register = path.join(o.buildDir ?? path.join(ROOT, 'dist'), 'src/core/tracing/register.js');
  return fs.existsSync(register) ? { ...o, nodeArgs: [...(o.nodeArgs ?? []), '--import', register] } : o;
}

/** An API process; ready when GET /health/ready answers 200. */
export async function startApi(o: NodeProcessOptions & { port?: number }): Promise<Served> {
  const port = o.port ?? (await freePort());
  return startNode(withTracing(o), 'src/main.js', { ...o.env, PORT: String(port) }, port, '/health/ready');
}

/** A worker process; ready when its own small port (WORKER_METRICS_PORT, a free one unless given) answers GET /health. */
export async function startWorker(o: NodeProcessOptions): Promise<Served> {
  const given = Number(o.env.WORKER_METRICS_PORT);
  const port = given > 0 ? given : await freePort();
  return startNode(
    withTracing(o),
    'src/worker/main.js',
    { ...o.env, WORKER_METRICS_PORT: String(port) },
    port,
    '/health',
  );
}
