// A bench's whole service, started through the stack module (scripts/stack/) and stopped afterwards:
// PostgreSQL + Redis (private ones in .local/bench/<bench>-services, fresh data each run; or the given
// DATABASE_URL / REDIS_URL), migrations, a private build, the simulator, N API processes and M worker
// processes, each its own OS process with its output in .local/bench/logs/<bench>/. Everything started here is
// stopped by stop(), also on Ctrl-C, SIGTERM, an exception or the bench's time limit (see runBench()); if the
// bench itself is killed, the stack's watchdogs stop its processes (and child-guard.mjs makes node children exit).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import {
  ROOT,
  appEnv,
  build as buildInto,
  migrate,
  startApi,
  startSimulator,
  startWorker,
  type NodeProcessOptions,
} from '../../scripts/stack/app.js';
import { Child, freePort, sleep, waitFor } from '../../scripts/stack/process.js';
import { startServices, stopStale, type Services } from '../../scripts/stack/services.js';
import { DbProfiler, PROFILE_PG_SETTINGS, PROFILING, enableProfiling } from './db-profile.js';
import {
  apiAt,
  connectOver,
  onboardOver,
  type Api,
  type ConnectedAccount,
  type OnboardedTenant,
  type Operator,
} from '../../test/utils/factories.js';

export { ROOT, freePort, sleep, waitFor };
/** A bench's tenant: the tests' (test/utils/factories.ts), onboarded against the bench's simulator process. */
export type Tenant = OnboardedTenant;
export const BENCH_LOCAL = path.join(ROOT, '.local', 'bench');
/**
 * A private build (not dist/), so that a bench never races another engineer's build or test run.
 * BENCH_BUILD_DIR + BENCH_SKIP_BUILD=1 run an existing build instead (e.g. a "before" build for comparisons).
 */
export const BUILD_DIR = process.env.BENCH_BUILD_DIR
  ? path.resolve(process.env.BENCH_BUILD_DIR)
  : path.join(BENCH_LOCAL, 'build');
const GUARD = pathToFileURL(path.join(ROOT, 'bench/lib/child-guard.mjs')).href;

export const log = (msg: string) => console.log(`[bench] ${msg}`);
/**
 * BENCH_TOPOLOGY=scaled: the API and the worker on the hosted topology (scripts/stack/scaled.ts: PgBouncer before a
 * primary with a streaming replica, a Redis Cluster of 3 + 3) instead of one PostgreSQL and one Redis.
 */
export const TOPOLOGY = process.env.BENCH_TOPOLOGY === 'scaled' ? 'scaled' : 'single';

// ---------------------------------------------------------------------------------------------------------
// build

let built = false;

/** tsc (incremental) into a private directory; fails on type errors unless BENCH_ALLOW_TYPE_ERRORS=1. */
export async function build(): Promise<void> {
  if (built) return;
  if (process.env.BENCH_SKIP_BUILD === '1') {
    if (!fs.existsSync(path.join(BUILD_DIR, 'src/main.js')))
      throw new Error(`BENCH_SKIP_BUILD=1 but there is no build in ${BUILD_DIR}`);
    log(`using the existing build in ${BUILD_DIR}`);
    built = true;
    return;
  }
  const t = Date.now();
  try {
    await buildInto(BUILD_DIR, { force: true });
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

/** A variant of the service's processes, started beside the stack's own (Stack.startApis, Stack.startWorkers). */
export interface ProcessSide {
  env: NodeJS.ProcessEnv;
  cpuLabel: (kind: 'api' | 'worker') => string;
}

/** Configuration variables passed through from the bench's own environment when set (for experiments). */
const PASS_THROUGH = [
  'DATABASE_POOL_SIZE',
  'WORKER_CONCURRENCY',
  'API_KEY_CACHE_TTL_MS',
  'UPSTREAM_TIMEOUT_MS',
  'UPSTREAM_CONNECT_TIMEOUT_MS',
  'WEBHOOK_SWEEP_INTERVAL_MS',
  'WEBHOOK_BATCH_WINDOW_MS',
  'WEBHOOK_JOB_WINDOW_MS',
  'WEBHOOK_HOLD_PROCESSING_IN_FLIGHT',
  'WEBHOOK_HOLD_PROCESSING_MAX_MS',
  'WEBHOOK_EVENT_CHUNK',
  'LOG_LEVEL',
];

/**
 * BENCH_TRACING=1: the API and worker processes trace every request and job (docs/operations-and-scaling.md,
 * "Traces") and export OTLP/HTTP protobuf to a sink process of the bench (bench/lib/otlp-sink.mjs; its CPU counted as
 * `otlp-sink`), unless OTEL_EXPORTER_OTLP_ENDPOINT points at a collector of your own. Every OTEL_* variable set is
 * passed through as well (a sampler: OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.1).
 */
const BENCH_TRACING = process.env.BENCH_TRACING === '1';

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
  /** BENCH_PROFILE=1: PostgreSQL's statements and Redis's commands per operation of a window (db-profile.ts). */
  profiler?: DbProfiler;
  readonly apis: Child[] = [];
  /** The CPU group of the API and worker processes started for a side (startApis, startWorkers); 'api', 'worker' else. */
  private readonly cpuLabel = new Map<Child, string>();
  readonly workers: Child[] = [];
  /** Each worker's own small port (GET /metrics, GET /health), in the order of `workers`. */
  readonly workerUrls: string[] = [];
  private services?: Services;
  private simulator?: Child;
  /** BENCH_TRACING=1: where the processes export their spans. */
  traceEndpoint?: string;
  private readonly extra: Child[] = [];
  private stopping?: Promise<void>;
  private apiClient?: Api;

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
    await migrate(this.databaseUrl);
    this.db = new pg.Pool({ connectionString: this.databaseUrl, max: 4 });
    this.db.on('error', () => undefined);
    if (PROFILING) this.profiler = new DbProfiler(this.db, this.redisUrl, await enableProfiling(this.db));
    // For measuring a proposed schema change before it becomes a migration (e.g. an index): SQL run once here.
    if (process.env.BENCH_EXTRA_SQL) {
      log(`BENCH_EXTRA_SQL: ${process.env.BENCH_EXTRA_SQL}`);
      await this.db.query(process.env.BENCH_EXTRA_SQL);
    }
    await this.startSimulator();
    if (BENCH_TRACING) await this.startTraceSink();
    await this.startApis(this.opts.apis ?? 1);
    await this.startWorkers(this.opts.workers ?? 1);
  }

  private async startServices(): Promise<void> {
    if (process.env.DATABASE_URL && process.env.REDIS_URL) {
      log(
        'using the given DATABASE_URL and REDIS_URL (rows from earlier runs stay; each run uses its own tenant and queue prefix)',
      );
    } else {
      // A fresh PostgreSQL for every run: leftovers of an interrupted run are stopped and their data removed.
      await stopStale(this.servicesDir, { supervisor: true });
      fs.rmSync(this.servicesDir, { recursive: true, force: true });
    }
    const t = Date.now();
    if (PROFILING)
      process.env.LOCAL_PG_SETTINGS = [process.env.LOCAL_PG_SETTINGS ?? '', ...PROFILE_PG_SETTINGS].join(' ').trim();
    this.services = await startServices({ dir: this.servicesDir, dbName: 'bench', scaled: TOPOLOGY === 'scaled' });
    const scaled = this.services.scaled;
    // The bench's own statements (migrations, set-up, counts) go to PostgreSQL itself, as the scripts' do.
    this.databaseUrl = scaled?.directUrl ?? this.services.databaseUrl;
    this.redisUrl = this.services.redisUrl;
    if (scaled) for (const line of scaled.readyLines) log(line);
    else if (this.services.postgres || this.services.redis)
      log(`PostgreSQL and Redis ready (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  }

  /** The topology's own settings for the API and the worker (the pooler, the replica, the cluster's nodes). */
  private topologyEnv(): NodeJS.ProcessEnv {
    const scaled = this.services?.scaled;
    if (!scaled) return {};
    // BENCH_SCALED_POOLER=0: the same topology with the statements sent to the primary itself (named), to tell the
    // pooler's share of the cost from the replica's and the cluster's.
    const direct =
      process.env.BENCH_SCALED_POOLER === '0'
        ? {
            DATABASE_URL: scaled.directUrl,
            DATABASE_PREPARED_STATEMENTS: process.env.DATABASE_PREPARED_STATEMENTS ?? 'named',
          }
        : {};
    return { ...scaled.env, ...direct, ...(scaled.redisClusterNodes ? { REDIS_URL: undefined } : {}) };
  }

  /** node's --cpu-prof arguments when BENCH_CPU_PROF names `kind` (or is `all`), else none. */
  profileArgs(kind: 'api' | 'worker' | 'reference'): string[] {
    const want = process.env.BENCH_CPU_PROF ?? '';
    if (!(want === 'all' || want.split(',').includes(kind))) return [];
    const dir = path.join(this.logDir, 'profiles');
    fs.mkdirSync(dir, { recursive: true });
    // --cpu-prof writes its file on a normal exit only; the child guard turns SIGWINCH into process.exit(0).
    return ['--cpu-prof', '--cpu-prof-dir', dir];
  }

  /** How the bench starts a node process of the stack: its log in the log dir, the child guard preloaded. */
  private node(name: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): NodeProcessOptions {
    const guardEnv = {
      BENCH_PROC_NAME: name,
      ...(process.env.BENCH_PROFILE_DIR ? { BENCH_PROFILE_DIR: process.env.BENCH_PROFILE_DIR } : {}),
      ...(process.env.BENCH_GC_LOG ? { BENCH_GC_LOG: process.env.BENCH_GC_LOG } : {}),
    };
    return {
      name,
      buildDir: BUILD_DIR,
      logDir: this.logDir,
      truncate: true,
      env: { ...env, ...guardEnv },
      nodeArgs: ['--import', GUARD, ...nodeArgs],
      readyMs: 90_000,
    };
  }

  private serviceEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...appEnv({
        databaseUrl: this.databaseUrl,
        redisUrl: this.redisUrl,
        queuePrefix: `bench${this.runId}`,
        upstreamBaseUrl: `${this.simUrl}/v25.0`,
        appSecret: this.appSecret,
        verifyToken: this.verifyToken,
        encryptionKey: this.encryptionKey,
      }),
      LOG_LEVEL: 'warn',
      // The per-key and console limiters are not what these benches measure.
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      // The per-account bucket (security audit 2, finding 6): 200/s by default, which capped the send benches.
      ACCOUNT_RATE_LIMIT_PER_SECOND: '1000000',
      ACCOUNT_RATE_LIMIT_BURST: '1000000',
      // The bench signs its tenants up itself (production defaults to invite-only, 5 signups per address).
      SIGNUP_MODE: 'open',
      SIGNUP_MAX_PER_ADDRESS: '100000',
      CONSOLE_RATE_LIMIT_PER_SECOND: '1000000',
      CONSOLE_RATE_LIMIT_BURST: '1000000',
      CONSOLE_ADDRESS_RATE_LIMIT_PER_SECOND: '1000000',
      CONSOLE_ADDRESS_RATE_LIMIT_BURST: '1000000',
      UNAUTHENTICATED_RATE_LIMIT_PER_SECOND: '1000000',
      UNAUTHENTICATED_RATE_LIMIT_BURST: '1000000',
    };
    Object.assign(env, this.topologyEnv());
    for (const k of PASS_THROUGH) if (process.env[k]) env[k] = process.env[k];
    // The pacer's and the campaign runner's knobs, for experiments (issue 27): every PACING_* and CAMPAIGN_* set.
    for (const [k, v] of Object.entries(process.env)) if (v && /^(PACING|CAMPAIGN)_/.test(k)) env[k] = v;
    if (BENCH_TRACING) {
      env.OTEL_TRACES_EXPORTER = 'otlp';
      env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/protobuf';
      if (this.traceEndpoint) env.OTEL_EXPORTER_OTLP_ENDPOINT = this.traceEndpoint;
    }
    for (const [k, v] of Object.entries(process.env)) if (v && k.startsWith('OTEL_')) env[k] = v;
    return { ...env, ...this.opts.env };
  }

  private async startSimulator(): Promise<void> {
    const env = { SIMULATOR_WEBHOOKS: this.opts.simulatorWebhooks ? 'on' : 'off', WHATSAPP_APP_SECRET: this.appSecret };
    const sim = await startSimulator({ ...this.node('simulator', env), readyMs: 30_000 });
    this.simulator = watch(sim.proc);
    this.simUrl = sim.url;
  }

  /**
   * BENCH_TRACING=1 without a collector of your own: the OTLP sink process the API and workers export to (also started
   * by bench/tracing.ts, whose traced side exports to it).
   */
  async startTraceSink(): Promise<void> {
    if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
      log(`BENCH_TRACING=1: tracing on, exporting to ${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}`);
      return;
    }
    const port = await freePort();
    const sink = await this.spawnExtra('otlp-sink', [path.join(ROOT, 'bench/lib/otlp-sink.mjs')], {
      OTLP_SINK_PORT: String(port),
    });
    const answers = async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '' })).ok;
    await waitFor('otlp sink', answers, 10_000, [sink]);
    this.traceEndpoint = `http://127.0.0.1:${port}`;
    log(`BENCH_TRACING=1: tracing on, exporting to the OTLP sink ${this.traceEndpoint} (its log: otlp-sink.log)`);
  }

  /**
   * `side`: processes of a variant the bench compares with the stack's own (bench/tracing.ts): their environment on top
   * of the service's (an undefined value removes a variable) and the name their CPU is counted under.
   */
  async startApis(n: number, side?: ProcessSide): Promise<void> {
    if (n <= 0) return;
    const first = this.apis.length;
    const env = { ...this.serviceEnv(), ...side?.env };
    const started = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        startApi(this.node(`api${first + i + 1}`, env, [...apiNodeArgs(), ...this.profileArgs('api')])),
      ),
    );
    for (const s of started) {
      const proc = watch(s.proc);
      this.apis.push(proc);
      this.apiUrls.push(s.url);
      if (side) this.cpuLabel.set(proc, side.cpuLabel('api'));
    }
    log(`${n} API process(es) ready: ${this.apiUrls.join(', ')}`);
  }

  /** When the last workers were started (0: none yet): their scheduled housekeeping runs a minute later. */
  workersStartedAt = 0;

  async startWorkers(n: number, side?: ProcessSide): Promise<void> {
    if (n <= 0) return;
    const first = this.workers.length;
    const env = { ...this.serviceEnv(), ...side?.env };
    const started = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        startWorker(this.node(`worker${first + i + 1}`, env, this.profileArgs('worker'))),
      ),
    );
    for (const s of started) {
      const proc = watch(s.proc);
      this.workers.push(proc);
      if (side) this.cpuLabel.set(proc, side.cpuLabel('worker'));
    }
    this.workerUrls.push(...started.map((s) => s.url));
    this.workersStartedAt = Date.now();
    log(`${n} worker process(es) ready`);
  }

  /** Starts an extra node process that stop() also stops (e.g. the node:http ceiling server). */
  async spawnExtra(name: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Child> {
    const o = this.node(name, { PATH: process.env.PATH, ...env });
    const proc = await Child.start({
      name,
      cmd: process.execPath,
      args: [...o.nodeArgs!, ...args],
      logFile: path.join(this.logDir, `${name}.log`),
      truncate: true,
      cwd: ROOT,
      env: o.env,
    });
    this.extra.push(watch(proc));
    return proc;
  }

  /** pid → group label, for the CPU meter. */
  cpuLabels(): Map<number, string> {
    const m = new Map<number, string>([[process.pid, 'loadgen']]);
    const add = (p: Child | undefined, label: string) => p && m.set(p.pid, label);
    add(this.services?.postgres?.proc, 'postgres');
    add(this.services?.redis?.proc, 'redis');
    // BENCH_TOPOLOGY=scaled: the replica, the pooler and the cluster's nodes, each counted under its own name.
    const scaled = this.services?.scaled;
    add(scaled?.replica?.server.proc, 'postgres-replica');
    add(scaled?.pooler?.proc, 'pgbouncer');
    scaled?.cluster?.nodes.forEach((n) => add(n.proc, 'redis'));
    add(this.simulator, 'simulator');
    this.apis.forEach((p) => add(p, this.cpuLabel.get(p) ?? 'api'));
    this.workers.forEach((p) => add(p, this.cpuLabel.get(p) ?? 'worker'));
    this.extra.forEach((p) => add(p, p.name));
    return m;
  }

  /** Throws when a service process died during the run. */
  assertAlive(): void {
    const own = [
      this.services?.postgres?.proc,
      this.services?.redis?.proc,
      this.services?.scaled?.replica?.server.proc,
      this.services?.scaled?.pooler?.proc,
      this.simulator,
      ...this.apis,
      ...this.workers,
      ...this.extra,
    ];
    const dead = own.find((p) => p && p.done && !p.expectedExit);
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
    if (profiling) await Promise.all(app.map((p) => p.stop([['SIGWINCH', 20_000]])));
    await Promise.all(
      [...app, ...this.extra, ...(this.simulator ? [this.simulator] : [])].map((p) =>
        p.stop([
          ['SIGTERM', 15_000],
          ['SIGKILL', 5_000],
        ]),
      ),
    );
    await this.profiler?.close();
    await this.db?.end().catch(() => undefined);
    if (this.services) {
      await this.services.stop();
      if (this.services.postgres) fs.rmSync(this.servicesDir, { recursive: true, force: true });
    }
    if (profiling) log(`CPU profiles in ${path.relative(ROOT, path.join(this.logDir, 'profiles'))}`);
  }

  // -------------------------------------------------------------------------------------------------------
  // tenant set-up through the console API, as an operator would do it

  /**
   * A fresh organization with one connected account and a key pair (the tests' onboarding: test/utils/factories.ts);
   * `suffix` tells several of one run apart. Its number is HIGH (1,000 sends/s) unless `level` says otherwise: since
   * issue 27 every send is paced to its number's tier, and a STANDARD number (80/s) would cap a send bench.
   */
  onboard(suffix = '', level: 'HIGH' | 'STANDARD' = 'HIGH'): Promise<OnboardedTenant> {
    return onboardOver(this.api, this.simUrl, {
      organizationName: `Bench ${this.runId}${suffix}`,
      email: `bench-${this.runId}${suffix}@example.test`,
      level,
      keyName: 'bench',
    });
  }

  /** One more business account for `operator` (a new simulator account at HIGH, numbers and templates synced). */
  addAccount(operator: Operator): Promise<ConnectedAccount> {
    return connectOver(this.api, this.simUrl, operator, { name: `Bench ${this.runId} extra`, level: 'HIGH' });
  }

  /** The first API process, for the factories of test/utils. */
  get api(): Api {
    return (this.apiClient ??= apiAt(this.apiUrl));
  }
}

/** Reports an exit nobody asked for as it happens (assertAlive() fails the run at its end). */
function watch(proc: Child): Child {
  void proc.exited.then(({ code, signal }) => {
    if (!proc.expectedExit)
      console.error(
        `[bench] ${proc.name} (pid ${proc.pid}) exited unexpectedly: code ${code} signal ${signal}; log: ${path.relative(ROOT, proc.logFile ?? '')}`,
      );
  });
  return proc;
}

// ---------------------------------------------------------------------------------------------------------
// a bench's life cycle

/**
 * Runs `body` with a started stack and always stops it: on success, failure, Ctrl-C, SIGTERM or when
 * `limitMs` has passed. Exits the process with 0 (targets met or not: the figures are the result), 1 on
 * failure, 130/143 on a signal.
 */
export async function runBench(
  opts: StackOptions & { limitMs: number },
  body: (stack: Stack) => Promise<void>,
): Promise<never> {
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
  setTimeout(() => void finish(1, `time limit of ${opts.limitMs / 1000} s reached`), opts.limitMs);
  // Not unref'd (every way out calls process.exit): the stack's children and waits are unref'd, so without a build to
  // wait for nothing else kept the loop alive while they started (BENCH_SKIP_BUILD=1 ended in exit code 13).
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

/** BENCH_API_NODE_ARGS: node options for the API processes only (space-separated), e.g. a V8 heap setting to compare. */
function apiNodeArgs(): string[] {
  return (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
}
