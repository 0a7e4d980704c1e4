// What the PostgreSQL-only benches (bench/storage.ts, bench/erasure.ts) share: their server (DATABASE_URL, or a
// private one started at nice 10), their databases, the weekly layout of a partitioned table, settling after a bulk
// load, latency statistics, the machine's conditions beside every figure, and the inserter that stores events as
// the live ingest does while something else runs.
import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Postgres, stopStalePostgres } from '../../scripts/stack/postgres.js';
import { Db } from '../../src/core/db/db.js';
import type { EventRow, EventsRepository } from '../../src/events/events.repository.js';
import { CpuMeter, type CpuUsage } from './cpu.js';

// ---------------------------------------------------------------------------------------------------------
// the server

function procStat(pid: number): string[] | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

export const niceOf = (pid: number) => (procStat(pid)?.[16] !== undefined ? Number(procStat(pid)![16]) : NaN);

function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((p) => Number(procStat(p)?.[1]) === pid);
}

/**
 * The bench's PostgreSQL: the one of DATABASE_URL (its databases are created next to the given one), or a private
 * one in `stateDir` started with `settings` (LOCAL_PG_SETTINGS replaces them) and lowered to nice 10 with its
 * backends, so that other people's work on a shared machine keeps the CPU it needs. Databases made by createDb are
 * dropped by dropDb and cleanup unless `keep`.
 */
export class BenchServer {
  url = '';
  /** The postmaster (the parent of our backends), when it runs on this machine; 0 when not known. */
  postmasterPid = 0;
  private postgres?: Postgres;
  private readonly created = new Set<string>();
  private cleaning?: Promise<void>;

  constructor(
    private readonly o: {
      stateDir: string;
      dbName: string;
      settings: string;
      keep: boolean;
      log: (m: string) => void;
      prefix: string;
    },
  ) {}

  async start(): Promise<void> {
    if (process.env.DATABASE_URL) {
      this.url = process.env.DATABASE_URL;
      this.o.log(
        `using the PostgreSQL of DATABASE_URL (databases ${this.o.prefix}* are created next to the given one)`,
      );
    } else {
      // PostgreSQL alone (the stack's startServices would start or ping a Redis these benches do not use).
      await stopStalePostgres(this.o.stateDir);
      this.postgres = new Postgres({
        dir: this.o.stateDir,
        settings: (process.env.LOCAL_PG_SETTINGS ?? this.o.settings).split(/\s+/).filter(Boolean),
        log: this.o.log,
      });
      // The stack's children are unref'd (they outlive nothing they should not): something of ours keeps the event
      // loop alive until initdb and the start are done, as startServices' Redis check does for it.
      const alive = setInterval(() => undefined, 1000);
      try {
        await this.postgres.start();
        await this.postgres.ensureDatabases([this.o.dbName]);
      } finally {
        clearInterval(alive);
      }
      this.url = this.postgres.url(this.o.dbName);
    }
    this.postmasterPid = await this.findPostmaster();
    if (this.postgres && this.postmasterPid) {
      // Backends forked later inherit the postmaster's priority; the figures say which it was.
      for (const pid of [this.postmasterPid, ...childrenOf(this.postmasterPid)]) {
        try {
          os.setPriority(pid, 10);
        } catch {
          /* gone */
        }
      }
    }
  }

  dbUrl(name: string): string {
    const u = new URL(this.url);
    u.pathname = `/${name}`;
    return u.toString();
  }

  async admin<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client({ connectionString: this.dbUrl('postgres') });
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end();
    }
  }

  async createDb(name: string): Promise<string> {
    await this.admin(async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${name}`);
    });
    this.created.add(name);
    return this.dbUrl(name);
  }

  async dropDb(name: string): Promise<void> {
    if (this.o.keep) return void this.o.log(`kept database ${name} (keep asked)`);
    await this.admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    this.created.delete(name);
  }

  /** Drops what is left of the bench's databases (unless `keep`) and stops a server it started; once. */
  cleanup(): Promise<void> {
    return (this.cleaning ??= this.cleanupOnce());
  }

  /** Ctrl-C or SIGTERM: the bench's databases dropped and the server stopped before the process exits. */
  cleanupOnSignals(): void {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        console.error(`[bench] ${sig}: dropping the bench's databases and stopping`);
        void this.cleanup().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
      });
    }
  }

  private async cleanupOnce(): Promise<void> {
    if (!this.o.keep)
      for (const name of this.created)
        await this.admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => undefined);
    await this.postgres?.stop();
  }

  get nice(): number {
    return niceOf(this.postmasterPid);
  }

  async settings(): Promise<Record<string, string>> {
    const c = new pg.Client({ connectionString: this.url });
    await c.connect();
    const { rows } = await c.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('server_version', 'shared_buffers', 'work_mem', 'maintenance_work_mem', 'max_wal_size',
         'checkpoint_timeout', 'synchronous_commit', 'fsync', 'effective_cache_size', 'random_page_cost', 'max_parallel_workers_per_gather', 'jit',
         'shared_preload_libraries')`,
    );
    await c.end();
    return Object.fromEntries(rows.map((r) => [r.name, r.unit ? `${r.setting} ${r.unit}` : r.setting]));
  }

  private async findPostmaster(): Promise<number> {
    const c = new pg.Client({ connectionString: this.url });
    await c.connect();
    const backend = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const f = procStat(backend); // while the backend is alive
    await c.end();
    return f ? Number(f[1]) : 0;
  }

  // ---- the conditions of a measurement ----

  cpuMeter(): CpuMeter {
    return new CpuMeter(
      () =>
        new Map<number, string>([
          [process.pid, 'bench'],
          ...(this.postmasterPid ? ([[this.postmasterPid, 'postgres']] as [number, string][]) : []),
        ]),
    );
  }

  /** Runs `work` and says how busy the machine was meanwhile (load average at the end, cores per process group). */
  async measured<T>(work: () => Promise<T>): Promise<{ value: T; conditions: Conditions }> {
    const meter = this.cpuMeter();
    meter.begin();
    const value = await work();
    return { value, conditions: { loadAvg: loadAvg(), cpu: meter.end() } };
  }
}

export interface Conditions {
  loadAvg: number[];
  cpu: CpuUsage | null;
}

export const loadAvg = () => os.loadavg().map((x) => Math.round(x * 100) / 100);

export const fmtConditions = (c: Conditions) =>
  `load average ${c.loadAvg.join(' / ')}; CPU cores busy: ${
    c.cpu
      ? Object.entries(c.cpu.cores)
          .map(([k, v]) => `${k} ${v.toFixed(2)}`)
          .join(', ')
      : 'n/a'
  }`;

// ---------------------------------------------------------------------------------------------------------
// latencies

export interface Stats {
  runs: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
  return {
    runs: s.length,
    p50: at(0.5),
    p99: at(0.99),
    max: s[s.length - 1] ?? NaN,
    mean: s.reduce((a, b) => a + b, 0) / (s.length || 1),
  };
}

// ---------------------------------------------------------------------------------------------------------
// schema helpers

/** Replaces the migration's partitions of `table` (empty on a fresh database) by `layout`, run in one transaction. */
export async function relayout(
  db: pg.Pool,
  layout: (c: pg.PoolClient) => Promise<void>,
  table = 'events',
): Promise<void> {
  const c = await db.connect();
  try {
    await c.query('BEGIN');
    const parts = (await c.query<{ name: string }>(`SELECT name FROM storage_partitions($1)`, [table])).rows;
    for (const p of parts) {
      await c.query(`ALTER TABLE "${table}" DETACH PARTITION "${p.name}"`);
      await c.query(`DROP TABLE "${p.name}"`);
    }
    await layout(c);
    await c.query('COMMIT');
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}

/** Weekly partitions (storage_ensure_partitions) of `table` from the week of `from` through `through`, and a history partition below. */
export async function weeklyLayout(c: pg.ClientBase, from: Date, through: Date, table = 'events'): Promise<void> {
  await c.query(`SELECT storage_ensure_partitions($1, $2, $3)`, [table, from, through]);
  if ((await c.query<{ r: string | null }>(`SELECT to_regclass($1) AS r`, [`${table}_history`])).rows[0]!.r !== null)
    return;
  const { rows } = await c.query<{ sql: string }>(
    `SELECT format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (MINVALUE) TO (%L)', $1::text, $2::text, storage_period_start($3)) AS sql`,
    [`${table}_history`, table, from],
  );
  await c.query(rows[0]!.sql);
}

/**
 * After a bulk load: vacuum and analyze what the reads touch (`events`, and `event_counts`, which the load's
 * statement triggers upserted once per chunk), checkpoint, then wait for autovacuum to finish whatever the load
 * started, so that the reads measure the steady state rather than the maintenance a bulk load leaves behind.
 */
export async function settle(db: pg.Pool, what = 'events, event_counts'): Promise<number> {
  const t = Date.now();
  await db.query(`VACUUM (ANALYZE) ${what}`);
  await db.query('CHECKPOINT');
  await autovacuumIdle(db, 120_000);
  return (Date.now() - t) / 1000;
}

/** Waits (at most maxMs) until no autovacuum worker runs in this database. */
async function autovacuumIdle(db: pg.Pool, maxMs: number): Promise<void> {
  const t0 = Date.now();
  while (Date.now() - t0 < maxMs) {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND datname = current_database()`,
    );
    if (Number(rows[0]!.n) === 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

// ---------------------------------------------------------------------------------------------------------
// the inserter: live ingest beside whatever is measured

/** The business account the inserter stores for (by default one no bench loads rows of). */
export interface InserterAccount {
  wabaId: string;
  phoneNumberId: string;
}

export const INSERTER_ACCOUNT: InserterAccount = { wabaId: '319999999999999', phoneNumberId: '402000000000999' };

/**
 * Stores `perTx` status events every `everyMs` through EventsRepository.insert (advisory locks + the NOT IN dedupe
 * probe, one transaction each), as the worker does, and keeps each transaction's latency: its worst before, during
 * and after what is measured says whom that held up.
 */
export class Inserter {
  private running = false;
  private done?: Promise<void>;
  readonly samples: { at: number; ms: number }[] = [];
  private k = 0;
  private readonly db: Db;

  constructor(
    pool: pg.Pool,
    private readonly repo: EventsRepository,
    private readonly everyMs: number,
    private readonly perTx: number,
    private readonly account: InserterAccount = INSERTER_ACCOUNT,
  ) {
    this.db = Db.over(pool);
  }

  start(): void {
    this.running = true;
    this.done = (async () => {
      let due = performance.now();
      while (this.running) {
        const rows = Array.from({ length: this.perTx }, () => inserterRow(this.k++, this.account));
        const t0 = performance.now();
        await this.db.transaction((tx) => this.repo.insert(tx, rows));
        this.samples.push({ at: t0, ms: performance.now() - t0 });
        due += this.everyMs;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        else due = performance.now();
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  between(from: number, to: number): Stats {
    return stats(this.samples.filter((s) => s.at + s.ms >= from && s.at <= to).map((s) => s.ms));
  }
}

/** One status event of the inserter's account, a new dedupe key each (k). */
export function inserterRow(k: number, account: InserterAccount = INSERTER_ACCOUNT): EventRow {
  const wamid = `wamid.HBgMNDQ3drop${process.pid}x${k}`;
  const ts = String(Math.floor(Date.now() / 1000));
  return {
    deliveryId: k,
    processed: true,
    attempts: 0,
    wabaId: account.wabaId,
    phoneNumberId: account.phoneNumberId,
    eventType: 'messages',
    kind: 'status_update',
    title: 'Message delivered',
    status: 'delivered',
    recipient: '447700900123',
    userId: null,
    messageId: wamid,
    upstreamTimestamp: new Date(),
    errorCode: null,
    errorTitle: null,
    errorDetail: null,
    raw: {
      id: wamid,
      status: 'delivered',
      timestamp: ts,
      recipient_id: '447700900123',
      metadata: { display_phone_number: '15550001111', phone_number_id: account.phoneNumberId },
    },
    pricing: { pricing_model: 'PMP', category: 'utility', type: 'regular', billable: true },
    dedupeKey: `status:${wamid}:delivered:${ts}`,
  };
}
