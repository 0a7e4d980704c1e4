// BENCH_PROFILE=1 (issue 40, item 1): where a measured window's time goes inside PostgreSQL and Redis, per operation.
// PostgreSQL starts with pg_stat_statements (every statement, nested ones too, with its planning time); each profiled
// window resets its counters and Redis's INFO commandstats, and at its end reads both back: per operation (a delivery
// acknowledged, a send answered), each statement's calls, execution and planning time, rows, blocks dirtied and WAL
// written; each Redis command's calls and time. The CPU per operation of each process (CpuMeter) stays beside it in
// the run's output. Off by default: pg_stat_statements costs the statements a little, so the regular figures do not
// carry it.
import { Redis } from 'ioredis';
import type pg from 'pg';
import { fmt } from './fmt.js';

export const PROFILING = process.env.BENCH_PROFILE === '1';

/** The PostgreSQL settings a profiled run starts with (LOCAL_PG_SETTINGS, added to the ones given). */
export const PROFILE_PG_SETTINGS = [
  'shared_preload_libraries=pg_stat_statements',
  'pg_stat_statements.track=all',
  'pg_stat_statements.track_planning=on',
  'pg_stat_statements.max=2000',
];

export interface StatementCost {
  query: string;
  callsPerOp: number;
  /** Execution + planning time, µs per operation. */
  usPerOp: number;
  execUsPerCall: number;
  planUsPerCall: number;
  rowsPerOp: number;
  dirtiedBlocksPerOp: number;
  walBytesPerOp: number;
  /** Full-page images among that WAL (a page's first change after a checkpoint), per operation. */
  walFpiPerOp: number;
}

/** The whole cluster's write-ahead log over the window (pg_stat_wal: every backend, autovacuum, the checkpointer). */
export interface WalCost {
  recordsPerOp: number;
  fpiPerOp: number;
  bytesPerOp: number;
}

export interface RedisCost {
  command: string;
  callsPerOp: number;
  usPerOp: number;
  usPerCall: number;
}

export interface DbProfile {
  label: string;
  ops: number;
  /** Every statement's execution + planning time, µs per operation (top-level and nested counted once: top level). */
  pgUsPerOp: number;
  statements: StatementCost[];
  redisUsPerOp: number;
  redisCallsPerOp: number;
  redis: RedisCost[];
  wal: WalCost | null;
}

/** Makes the extension exist in the bench's database (after the migrations); false when the server cannot load it. */
export async function enableProfiling(db: pg.Pool): Promise<boolean> {
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await db.query('SELECT pg_stat_statements_reset()');
    return true;
  } catch (e) {
    console.log(`  BENCH_PROFILE: pg_stat_statements unavailable (${(e as Error).message}); Redis only`);
    return false;
  }
}

export class DbProfiler {
  private readonly redis: Redis;
  private walBefore: { records: number; fpi: number; bytes: number } | null = null;

  constructor(
    private readonly db: pg.Pool,
    redisUrl: string,
    private readonly withStatements: boolean,
  ) {
    this.redis = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1 });
  }

  async begin(): Promise<void> {
    if (this.withStatements) await this.db.query('SELECT pg_stat_statements_reset()');
    await this.redis.config('RESETSTAT');
    this.walBefore = await this.walTotals();
  }

  private async walTotals(): Promise<{ records: number; fpi: number; bytes: number } | null> {
    try {
      const { rows } = await this.db.query<{ records: string; fpi: string; bytes: string }>(
        'SELECT wal_records AS records, wal_fpi AS fpi, wal_bytes AS bytes FROM pg_stat_wal',
      );
      const r = rows[0];
      return r ? { records: Number(r.records), fpi: Number(r.fpi), bytes: Number(r.bytes) } : null;
    } catch {
      return null;
    }
  }

  async end(label: string, ops: number): Promise<DbProfile> {
    const per = (x: number) => (ops > 0 ? x / ops : 0);
    let statements: StatementCost[] = [];
    let pgUs = 0;
    if (this.withStatements) {
      const { rows } = await this.db.query<{
        query: string;
        toplevel: boolean;
        calls: string;
        exec_ms: number;
        plan_ms: number;
        rows: string;
        dirtied: string;
        wal: string;
        fpi: string;
      }>(
        `SELECT query, toplevel, calls, total_exec_time AS exec_ms, total_plan_time AS plan_ms, rows,
                shared_blks_dirtied AS dirtied, wal_bytes AS wal, wal_fpi AS fpi
           FROM pg_stat_statements
          WHERE query NOT ILIKE '%pg_stat_statements%'`,
      );
      const costs = rows
        .map((r): StatementCost & { toplevel: boolean } => {
          const calls = Number(r.calls);
          return {
            query: r.query.replace(/\s+/g, ' ').trim(),
            toplevel: r.toplevel,
            callsPerOp: per(calls),
            usPerOp: per((r.exec_ms + r.plan_ms) * 1000),
            execUsPerCall: calls ? (r.exec_ms * 1000) / calls : 0,
            planUsPerCall: calls ? (r.plan_ms * 1000) / calls : 0,
            rowsPerOp: per(Number(r.rows)),
            dirtiedBlocksPerOp: per(Number(r.dirtied)),
            walBytesPerOp: per(Number(r.wal)),
            walFpiPerOp: per(Number(r.fpi)),
          };
        })
        .sort((a, b) => b.usPerOp - a.usPerOp);
      pgUs = costs.filter((s) => s.toplevel).reduce((sum, s) => sum + s.usPerOp, 0);
      statements = byShape(
        costs.map(({ toplevel, ...s }) => ({ ...s, query: toplevel ? s.query : `(nested) ${s.query}` })),
      );
    }
    const walAfter = await this.walTotals();
    const wal =
      walAfter && this.walBefore
        ? {
            recordsPerOp: per(walAfter.records - this.walBefore.records),
            fpiPerOp: per(walAfter.fpi - this.walBefore.fpi),
            bytesPerOp: per(walAfter.bytes - this.walBefore.bytes),
          }
        : null;
    const info = await this.redis.info('commandstats');
    const redis = info
      .split('\n')
      .flatMap((line) => {
        const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
        if (!m || m[1] === 'config' || m[1] === 'info') return [];
        const calls = Number(m[2]);
        return [
          { command: m[1]!, callsPerOp: per(calls), usPerOp: per(Number(m[3])), usPerCall: Number(m[3]) / calls },
        ];
      })
      .sort((a, b) => b.usPerOp - a.usPerOp);
    return {
      label,
      ops,
      pgUsPerOp: pgUs,
      statements,
      redisUsPerOp: redis.reduce((s, c) => s + c.usPerOp, 0),
      redisCallsPerOp: redis.reduce((s, c) => s + c.callsPerOp, 0),
      redis,
      wal,
    };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}

/**
 * One line per statement shape: a multi-row VALUES list is one pg_stat_statements entry per row count; summed here,
 * its count of shapes in the text (`VALUES (…) ×N shapes`), the per-call times weighted by calls.
 */
function byShape(costs: StatementCost[]): StatementCost[] {
  const shapes = new Map<
    string,
    { cost: StatementCost; shapes: number; execUs: number; planUs: number; calls: number }
  >();
  for (const c of costs) {
    const key = c.query.replace(
      /\b(values|VALUES) (\([^()]*(?:\([^()]*\)[^()]*)*\))(, \([^()]*(?:\([^()]*\)[^()]*)*\))+/g,
      '$1 $2, …',
    );
    const calls = c.callsPerOp;
    const s = shapes.get(key);
    if (!s) {
      shapes.set(key, {
        cost: { ...c, query: key },
        shapes: 1,
        execUs: c.execUsPerCall * calls,
        planUs: c.planUsPerCall * calls,
        calls,
      });
      continue;
    }
    s.shapes++;
    s.calls += calls;
    s.execUs += c.execUsPerCall * calls;
    s.planUs += c.planUsPerCall * calls;
    s.cost.callsPerOp += c.callsPerOp;
    s.cost.usPerOp += c.usPerOp;
    s.cost.rowsPerOp += c.rowsPerOp;
    s.cost.dirtiedBlocksPerOp += c.dirtiedBlocksPerOp;
    s.cost.walBytesPerOp += c.walBytesPerOp;
    s.cost.walFpiPerOp += c.walFpiPerOp;
  }
  return [...shapes.values()]
    .map((s) => ({
      ...s.cost,
      execUsPerCall: s.calls ? s.execUs / s.calls : 0,
      planUsPerCall: s.calls ? s.planUs / s.calls : 0,
      query: s.shapes > 1 ? `[${s.shapes} shapes] ${s.cost.query}` : s.cost.query,
    }))
    .sort((a, b) => b.usPerOp - a.usPerOp);
}

/** The profile as the run prints it: PostgreSQL's statements, then Redis's commands, each per operation. */
export function formatProfile(p: DbProfile, top = 12): string {
  const lines = [
    `  profile of ${p.label} (${p.ops} operations): PostgreSQL ${fmt(p.pgUsPerOp, 1)} µs/op in statements, Redis ${fmt(p.redisUsPerOp, 1)} µs/op in ${fmt(p.redisCallsPerOp, 2)} commands/op`,
  ];
  if (p.wal)
    lines.push(
      `    WAL, whole cluster: ${fmt(p.wal.bytesPerOp, 0)} B/op in ${fmt(p.wal.recordsPerOp, 1)} records/op, ${fmt(p.wal.fpiPerOp, 2)} full-page images/op`,
    );
  for (const s of p.statements.slice(0, top))
    lines.push(
      `    pg  ${fmt(s.usPerOp, 1).padStart(7)} µs/op  ${fmt(s.callsPerOp, 3).padStart(7)} calls/op  ${fmt(s.execUsPerCall, 0).padStart(6)}+${fmt(s.planUsPerCall, 0)} µs/call  ${fmt(s.rowsPerOp, 2)} rows/op  ${fmt(s.walBytesPerOp, 0)} WAL B/op (${fmt(s.walFpiPerOp, 2)} FPI)  ${s.query.slice(0, 150)}`,
    );
  for (const c of p.redis.slice(0, top))
    lines.push(
      `    redis ${fmt(c.usPerOp, 1).padStart(5)} µs/op  ${fmt(c.callsPerOp, 3).padStart(7)} calls/op  ${fmt(c.usPerCall, 1)} µs/call  ${c.command}`,
    );
  return lines.join('\n');
}
