// The whole service, started for a benchmark and stopped afterwards: PostgreSQL + Redis (scripts/local-services.mjs,
// or the given DATABASE_URL / REDIS_URL), migrations, a build, the simulator, N API processes and M worker
// processes, each its own OS process with its output in .local/bench/logs/<bench>/. Everything started here is
// stopped by stop(), also on Ctrl-C, SIGTERM, an exception or the bench's time limit (see runBench()).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BENCH_LOCAL = path.join(ROOT, '.local', 'bench');
/**
 * A private build (not dist/), so that a bench never races another engineer's build or test run.
 * BENCH_BUILD_DIR + BENCH_SKIP_BUILD=1 run an existing build instead (e.g. a "before" build for comparisons).
 */
export const BUILD_DIR = process.env.BENCH_BUILD_DIR ? path.resolve(process.env.BENCH_BUILD_DIR) : path.join(BENCH_LOCAL, 'build');
const GUARD = pathToFileURL(path.join(ROOT, 'bench/lib/child-guard.mjs')).href;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const log = (msg: string) => console.log(`[bench] ${msg}`);

// ---------------------------------------------------------------------------------------------------------
// child processes

export class Proc {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  done = false;
  expectedExit = false;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly logFile: string,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.done = true;
        if (!this.expectedExit) console.error(`[bench] ${name} (pid ${child.pid}) exited unexpectedly: code ${code} signal ${signal}; log: ${path.relative(ROOT, logFile)}`);
        resolve({ code, signal });
      });
      child.once('error', (err) => {
        this.done = true;
        console.error(`[bench] ${name} could not start: ${err.message}`);
        resolve({ code: null, signal: null });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** SIGTERM (or `signal`), then SIGKILL after `graceMs`. Resolves when the process is gone. */
  async stop(graceMs = 15_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    this.expectedExit = true;
    if (this.done) return;
    this.child.kill(signal);
    const timer = setTimeout(() => {
      if (!this.done) {
        console.error(`[bench] ${this.name} did not stop within ${graceMs} ms; SIGKILL`);
        this.child.kill('SIGKILL');
      }
    }, graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  tail(lines = 30): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}

function spawnProc(name: string, logDir: string, cmd: string, args: string[], env: NodeJS.ProcessEnv, guard = true): Proc {
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `${name}.log`);
  const fd = fs.openSync(logFile, 'w');
  // Node children get the guard preloaded: they exit when the bench is gone, and on SIGWINCH (profiling).
  const argv = guard && cmd === process.execPath ? ['--import', GUARD, ...args] : args;
  const child = spawn(cmd, argv, { cwd: ROOT, env: guard ? { ...env, BENCH_PROC_NAME: name, ...(process.env.BENCH_PROFILE_DIR ? { BENCH_PROFILE_DIR: process.env.BENCH_PROFILE_DIR } : {}) } : env, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  return new Proc(name, child, logFile);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, label: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${label} failed (exit ${code}):\n${out.trim()}`))));
  });
}

/** Polls `probe` until it returns true; throws after `timeoutMs`. */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number, procs: Proc[] = []): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    const dead = procs.find((p) => p.done);
    if (dead) throw new Error(`${what}: ${dead.name} exited during start-up:\n${dead.tail()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not ready within ${timeoutMs} ms${procs[0] ? `\n${procs[0].tail()}` : ''}`);
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------------------
// build

let built = false;

/** tsc (incremental) into a private directory; fails on type errors unless BENCH_ALLOW_TYPE_ERRORS=1. */
export async function build(): Promise<void> {
  if (built) return;
  if (process.env.BENCH_SKIP_BUILD === '1') {
    if (!fs.existsSync(path.join(BUILD_DIR, 'src/main.js'))) throw new Error(`BENCH_SKIP_BUILD=1 but there is no build in ${BUILD_DIR}`);
    log(`using the existing build in ${BUILD_DIR}`);
    built = true;
    return;
  }
  const t = Date.now();
  fs.mkdirSync(BUILD_DIR, { recursive: true });
  try {
    await run(
      path.join(ROOT, 'node_modules/.bin/tsc'),
      ['-p', 'tsconfig.build.json', '--outDir', BUILD_DIR, '--tsBuildInfoFile', path.join(BUILD_DIR, '.tsbuildinfo')],
      process.env,
      'tsc',
    );
  } catch (err) {
    if (process.env.BENCH_ALLOW_TYPE_ERRORS !== '1' || !fs.existsSync(path.join(BUILD_DIR, 'src/main.js'))) throw err;
    console.error(`[bench] tsc reported errors; continuing (BENCH_ALLOW_TYPE_ERRORS=1):\n${(err as Error).message}`);
  }
  built = true;
  log(`built into ${path.relative(ROOT, BUILD_DIR)} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
}

// ---------------------------------------------------------------------------------------------------------
// the stack

export interface StackOptions {
  /** Names the log and state directories. */
  name: string;
  apis?: number;
  workers?: number;
  /** Automatic status webhooks of the simulator (off for load runs). */
  simulatorWebhooks?: boolean;
  /** Extra environment for the API and worker processes. */
  env?: Record<string, string>;
}

/** Configuration variables passed through from the bench's own environment when set (for experiments). */
const PASS_THROUGH = [
  'DATABASE_POOL_SIZE',
  'WORKER_CONCURRENCY',
  'API_KEY_CACHE_TTL_MS',
  'UPSTREAM_TIMEOUT_MS',
  'UPSTREAM_CONNECT_TIMEOUT_MS',
  'WEBHOOK_SWEEP_INTERVAL_MS',
  'LOG_LEVEL',
];

export interface Tenant {
  email: string;
  cookie: string;
  wabaId: string;
  businessAccountId: string;
  phoneNumberId: string;
  accessKey: string;
  secretKey: string;
}

export class Stack {
  readonly runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  readonly appSecret = randomBytes(16).toString('hex');
  readonly verifyToken = randomBytes(16).toString('hex');
  readonly encryptionKey = randomBytes(32).toString('hex');
  readonly logDir: string;
  readonly servicesDir: string;
  databaseUrl = '';
  redisUrl = '';
  simUrl = '';
  apiUrls: string[] = [];
  db!: pg.Pool;
  readonly apis: Proc[] = [];
  readonly workers: Proc[] = [];
  private services?: Proc;
  private simulator?: Proc;
  private readonly extra: Proc[] = [];
  private stopping?: Promise<void>;
  private ownServices = false;

  constructor(readonly opts: StackOptions) {
    this.logDir = path.join(BENCH_LOCAL, 'logs', opts.name);
    this.servicesDir = path.join(BENCH_LOCAL, `${opts.name}-services`);
  }

  get apiUrl(): string {
    return this.apiUrls[0]!;
  }

  async start(): Promise<void> {
    fs.rmSync(this.logDir, { recursive: true, force: true });
    fs.mkdirSync(this.logDir, { recursive: true });
    await Promise.all([this.startServices(), build()]);
    await this.migrate();
    this.db = new pg.Pool({ connectionString: this.databaseUrl, max: 4 });
    this.db.on('error', () => undefined);
    // For measuring a proposed schema change before it becomes a migration (e.g. an index): SQL run once here.
    if (process.env.BENCH_EXTRA_SQL) {
      log(`BENCH_EXTRA_SQL: ${process.env.BENCH_EXTRA_SQL}`);
      await this.db.query(process.env.BENCH_EXTRA_SQL);
    }
    await this.startSimulator();
    await this.startApis(this.opts.apis ?? 1);
    await this.startWorkers(this.opts.workers ?? 1);
  }

  private async startServices(): Promise<void> {
    if (process.env.DATABASE_URL && process.env.REDIS_URL) {
      this.databaseUrl = process.env.DATABASE_URL;
      this.redisUrl = process.env.REDIS_URL;
      log('using the given DATABASE_URL and REDIS_URL (rows from earlier runs stay; each run uses its own tenant and queue prefix)');
      return;
    }
    const script = path.join(ROOT, 'scripts/local-services.mjs');
    // A fresh PostgreSQL for every run: leftovers of an interrupted run are stopped and their data removed.
    await run(process.execPath, [script, '--state-dir', this.servicesDir, '--stop-stale'], process.env, 'local-services --stop-stale').catch(() => undefined);
    fs.rmSync(this.servicesDir, { recursive: true, force: true });
    fs.mkdirSync(this.servicesDir, { recursive: true });
    const t = Date.now();
    this.ownServices = true;
    // Not guarded: the supervisor watches --parent-pid itself and must stop PostgreSQL/Redis on its way out.
    this.services = spawnProc('services', this.logDir, process.execPath, [script, '--state-dir', this.servicesDir, '--db-name', 'bench', '--parent-pid', String(process.pid)], process.env, false);
    const envFile = path.join(this.servicesDir, 'services.env');
    await waitFor('PostgreSQL and Redis', async () => fs.existsSync(envFile), 180_000, [this.services]);
    const vars = Object.fromEntries(
      fs
        .readFileSync(envFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    this.databaseUrl = vars.DATABASE_URL!;
    this.redisUrl = vars.REDIS_URL!;
    log(`PostgreSQL and Redis ready (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  }

  private async migrate(): Promise<void> {
    await run(path.join(ROOT, 'node_modules/.bin/tsx'), ['prisma/migrate.ts', 'deploy'], { ...process.env, DATABASE_URL: this.databaseUrl }, 'migrate deploy');
  }

  private profileArgs(kind: 'api' | 'worker'): string[] {
    const want = process.env.BENCH_CPU_PROF ?? '';
    if (!(want === 'all' || want.split(',').includes(kind))) return [];
    const dir = path.join(this.logDir, 'profiles');
    fs.mkdirSync(dir, { recursive: true });
    // --cpu-prof writes its file on a normal exit only; the child guard turns SIGWINCH into process.exit(0).
    return ['--cpu-prof', '--cpu-prof-dir', dir];
  }

  private serviceEnv(port: number): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      ENV_FILE: 'none',
      WORKER_METRICS_PORT: '0',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      SWAGGER_ENABLED: 'false',
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: this.redisUrl,
      QUEUE_PREFIX: `bench${this.runId}`,
      UPSTREAM_BASE_URL: `${this.simUrl}/v23.0`,
      WHATSAPP_APP_SECRET: this.appSecret,
      WHATSAPP_VERIFY_TOKEN: this.verifyToken,
      ENCRYPTION_KEY: this.encryptionKey,
      // The per-key and console limiters are not what these benches measure.
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      // The bench signs its tenants up itself (production defaults to invite-only, 5 signups per address).
      SIGNUP_MODE: 'open',
      SIGNUP_MAX_PER_ADDRESS: '100000',
      CONSOLE_RATE_LIMIT_PER_SECOND: '1000000',
      CONSOLE_RATE_LIMIT_BURST: '1000000',
      CONSOLE_ADDRESS_RATE_LIMIT_PER_SECOND: '1000000',
      CONSOLE_ADDRESS_RATE_LIMIT_BURST: '1000000',
    };
    for (const k of PASS_THROUGH) if (process.env[k]) env[k] = process.env[k];
    return { ...env, ...this.opts.env };
  }

  private async startSimulator(): Promise<void> {
    const port = await freePort();
    this.simUrl = `http://127.0.0.1:${port}`;
    this.simulator = spawnProc('simulator', this.logDir, process.execPath, [path.join(BUILD_DIR, 'simulator/main.js')], {
      PATH: process.env.PATH,
      SIMULATOR_PORT: String(port),
      SIMULATOR_WEBHOOKS: this.opts.simulatorWebhooks ? 'on' : 'off',
      WHATSAPP_APP_SECRET: this.appSecret,
    });
    await waitFor('simulator', async () => (await fetch(`${this.simUrl}/_sim/health`)).ok, 30_000, [this.simulator]);
  }

  async startApis(n: number): Promise<void> {
    if (n <= 0) return;
    const started: Proc[] = [];
    for (let i = 0; i < n; i++) {
      const port = await freePort();
      const name = `api${this.apis.length + 1}`;
      const proc = spawnProc(name, this.logDir, process.execPath, [...this.profileArgs('api'), path.join(BUILD_DIR, 'src/main.js')], this.serviceEnv(port));
      this.apis.push(proc);
      started.push(proc);
      this.apiUrls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(
      started.map((p, i) => waitFor(p.name, async () => (await fetch(`${this.apiUrls[this.apiUrls.length - n + i]}/health/ready`)).ok, 90_000, [p])),
    );
    log(`${n} API process(es) ready: ${this.apiUrls.join(', ')}`);
  }

  async startWorkers(n: number): Promise<void> {
    if (n <= 0) return;
    for (let i = 0; i < n; i++) {
      const name = `worker${this.workers.length + 1}`;
      this.workers.push(spawnProc(name, this.logDir, process.execPath, [...this.profileArgs('worker'), path.join(BUILD_DIR, 'src/worker.js')], this.serviceEnv(0)));
    }
    // The worker has no HTTP; give it a moment and make sure it did not die on start-up.
    await sleep(1500);
    const dead = this.workers.find((w) => w.done);
    if (dead) throw new Error(`${dead.name} exited on start-up:\n${dead.tail()}`);
    if (n > 0) log(`${n} worker process(es) started`);
  }

  /** Spawns an extra process that stop() also stops (e.g. the node:http ceiling server). */
  spawnExtra(name: string, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
    const proc = spawnProc(name, this.logDir, process.execPath, args, { PATH: process.env.PATH, ...env });
    this.extra.push(proc);
    return proc;
  }

  /** pid → group label, for the CPU meter. */
  cpuLabels(): Map<number, string> {
    const m = new Map<number, string>([[process.pid, 'loadgen']]);
    const add = (p: Proc | undefined, label: string) => p?.pid && m.set(p.pid, label);
    add(this.services, 'services');
    add(this.simulator, 'simulator');
    this.apis.forEach((p) => add(p, 'api'));
    this.workers.forEach((p) => add(p, 'worker'));
    this.extra.forEach((p) => add(p, p.name));
    return m;
  }

  /** Throws when a service process died during the run. */
  assertAlive(): void {
    const dead = [this.services, this.simulator, ...this.apis, ...this.workers, ...this.extra].find((p) => p && p.done && !p.expectedExit);
    if (dead) throw new Error(`${dead.name} died during the run:\n${dead.tail()}`);
  }

  /** Stops everything this stack started (idempotent, safe to call from signal handlers). */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    const profiling = Boolean(process.env.BENCH_CPU_PROF);
    const app = [...this.apis, ...this.workers];
    if (profiling) await Promise.all(app.map((p) => p.stop(20_000, 'SIGWINCH')));
    await Promise.all([...app, ...this.extra, ...(this.simulator ? [this.simulator] : [])].map((p) => p.stop()));
    await this.db?.end().catch(() => undefined);
    if (this.services) {
      await this.services.stop(60_000);
      if (this.ownServices) fs.rmSync(this.servicesDir, { recursive: true, force: true });
    }
    if (profiling) log(`CPU profiles in ${path.relative(ROOT, path.join(this.logDir, 'profiles'))}`);
  }

  // -------------------------------------------------------------------------------------------------------
  // tenant set-up through the console API, as an operator would do it

  async onboard(): Promise<Tenant> {
    const api = this.apiUrl;
    const sim = (await postJson(`${this.simUrl}/_sim/accounts`, { name: `Bench ${this.runId}` })) as {
      wabaId: string;
      accessToken: string;
      phoneNumbers: { id: string; status: string }[];
    };
    const email = `bench-${this.runId}@example.test`;
    const password = `bench-password-${this.runId}`;
    await postJson(`${api}/auth/signup`, { email, password, organizationName: `Bench ${this.runId}` }, 201);
    const login = await fetch(`${api}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    await postJson(`${api}/business-accounts`, { wabaId: sim.wabaId, accessToken: sim.accessToken }, 201, cookie);
    await postJson(`${api}/business-accounts/${sim.wabaId}/phone-numbers/sync`, {}, 200, cookie);
    await postJson(`${api}/business-accounts/${sim.wabaId}/templates/sync`, {}, 200, cookie);
    const key = (await postJson(`${api}/api-keys`, { wabaId: sim.wabaId, name: 'bench' }, 201, cookie)) as { data: { accessKey: string; secretKey: string } };
    const row = await this.db.query<{ id: string }>('SELECT id FROM business_accounts WHERE waba_id = $1', [sim.wabaId]);
    const phone = sim.phoneNumbers.find((p) => p.status === 'CONNECTED');
    if (!phone || !row.rows[0]) throw new Error('onboarding: no CONNECTED number or no stored business account');
    return {
      email,
      cookie,
      wabaId: sim.wabaId,
      businessAccountId: row.rows[0].id,
      phoneNumberId: phone.id,
      accessKey: key.data.accessKey,
      secretKey: key.data.secretKey,
    };
  }

  /** One more business account for the onboarded operator (a new simulator account, numbers and templates synced). */
  async addAccount(tenant: Tenant): Promise<Omit<Tenant, 'accessKey' | 'secretKey'>> {
    const api = this.apiUrl;
    const sim = (await postJson(`${this.simUrl}/_sim/accounts`, { name: `Bench ${this.runId} extra` })) as { wabaId: string; accessToken: string; phoneNumbers: { id: string; status: string }[] };
    await postJson(`${api}/business-accounts`, { wabaId: sim.wabaId, accessToken: sim.accessToken }, 201, tenant.cookie);
    await postJson(`${api}/business-accounts/${sim.wabaId}/phone-numbers/sync`, {}, 200, tenant.cookie);
    await postJson(`${api}/business-accounts/${sim.wabaId}/templates/sync`, {}, 200, tenant.cookie);
    const row = await this.db.query<{ id: string }>('SELECT id FROM business_accounts WHERE waba_id = $1', [sim.wabaId]);
    const phone = sim.phoneNumbers.find((p) => p.status === 'CONNECTED');
    if (!phone || !row.rows[0]) throw new Error('onboarding: no CONNECTED number or no stored business account');
    return { email: tenant.email, cookie: tenant.cookie, wabaId: sim.wabaId, businessAccountId: row.rows[0].id, phoneNumberId: phone.id };
  }

  /** A new key pair for a business account of the onboarded operator. */
  async createApiKey(cookie: string, wabaId: string, name: string): Promise<{ accessKey: string; secretKey: string }> {
    const key = (await postJson(`${this.apiUrl}/api-keys`, { wabaId, name }, 201, cookie)) as { data: { accessKey: string; secretKey: string } };
    return { accessKey: key.data.accessKey, secretKey: key.data.secretKey };
  }
}

async function postJson(url: string, body: unknown, expect?: number, cookie?: string): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if ((expect !== undefined && res.status !== expect) || res.status >= 400) throw new Error(`POST ${url} → ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

// ---------------------------------------------------------------------------------------------------------
// a bench's life cycle

/**
 * Runs `body` with a started stack and always stops it: on success, failure, Ctrl-C, SIGTERM or when
 * `limitMs` has passed. Exits the process with 0 (targets met or not: the figures are the result), 1 on
 * failure, 130/143 on a signal.
 */
export async function runBench(opts: StackOptions & { limitMs: number }, body: (stack: Stack) => Promise<void>): Promise<never> {
  const stack = new Stack(opts);
  let exiting: Promise<never> | undefined;
  // The first caller decides the exit code; later callers wait for the same stop.
  const finish = (code: number, reason?: string): Promise<never> =>
    (exiting ??= (async () => {
      if (reason) console.error(`[bench] ${reason}; stopping everything`);
      await stack.stop().catch((e: unknown) => console.error('[bench] stop failed:', e));
      process.exit(code);
    })());
  process.once('SIGINT', () => void finish(130, 'interrupted'));
  process.once('SIGTERM', () => void finish(143, 'terminated'));
  const limit = setTimeout(() => void finish(1, `time limit of ${opts.limitMs / 1000} s reached`), opts.limitMs);
  limit.unref();
  try {
    await stack.start();
    await body(stack);
    stack.assertAlive();
    await finish(0);
  } catch (err) {
    // After a time limit or a signal the stack is being stopped under the body's feet: that error is no news.
    if (!exiting) console.error('[bench] failed:', err instanceof Error ? (err.stack ?? err.message) : err);
    await finish(1);
  }
  return process.exit(1);
}
