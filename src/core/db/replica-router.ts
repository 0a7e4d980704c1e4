import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from 'pino';
import { withTimeout } from '../async/with-timeout.js';
import { AppConfig } from '../config/app-config.js';
import { TemporarilyUnavailable } from '../errors/domain-errors.js';
import { APP_LOGGER } from '../logging/app-logger.js';
import { Metrics } from '../metrics/metrics.js';
import { Db, type LagTolerantReads } from './db.js';
import { createPool } from './pg-pool.js';
import { parseLsn, ReplicaLag } from './replica-lag.js';

/** How often the replica's lag is measured. */
export const REPLICA_CHECK_INTERVAL_MS = 1000;
/** A check the replica has not answered within this long counts as the replica out of reach. */
const CHECK_TIMEOUT_MS = 2000;

/** Where the reads that tolerate lag go now, and why not to the replica when they do not. */
type State = 'serving' | 'lag' | 'unavailable';

/**
 * The read replica (DATABASE_READ_URL), API processes only: the reads that tolerate lag (Db.lagTolerant: the lists and
 * analytics) run on its Db while it answers its checks and is within DATABASE_READ_MAX_LAG_MS, on the primary
 * otherwise. Every second it reads the primary's WAL position and the replica's replayed position (ReplicaLag:
 * `bmapi_db_replica_lag_seconds`). A read that fails on the replica for a reason of the replica (no connection, the
 * server going away, a recovery conflict) is run once more on the primary, not answered with an error, and the replica
 * is left out until its next good check; it comes back by itself once it answers within the bound again.
 */
@Injectable()
export class ReplicaRouter implements LagTolerantReads, OnModuleInit, OnApplicationShutdown {
  /** The replica's Db: the primary's settings (pool size, prepared statements) on DATABASE_READ_URL. */
  private readonly replica: Db;
  /** One connection of its own for the checks: a replica busy with reads is not a replica out of reach. */
  private readonly probe: pg.Pool;
  private readonly lag = new ReplicaLag();
  private readonly maxLagMs: number;
  private state: State = 'unavailable';
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    config: AppConfig,
    private readonly primary: Db,
    private readonly metrics: Metrics,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    const replicaConfig = Object.assign(Object.create(AppConfig.prototype) as AppConfig, config, {
      databaseUrl: config.databaseReadUrl,
    });
    this.replica = new Db(replicaConfig);
    this.probe = createPool(replicaConfig, { max: 1 });
    this.maxLagMs = config.databaseReadMaxLagMs;
    metrics.registerReplica();
    metrics.replicaServing.set(0);
    primary.routeLagTolerantReads(this);
  }

  onModuleInit(): void {
    const tick = async () => {
      await this.check();
      if (!this.stopped) this.timer = setTimeout(() => void tick(), REPLICA_CHECK_INTERVAL_MS).unref();
    };
    void tick();
  }

  async read<T>(work: (db: Db) => Promise<T>): Promise<T> {
    if (this.state !== 'serving') {
      this.metrics.replicaFallbacks.inc({ reason: this.state });
      return work(this.primary);
    }
    try {
      return await work(this.replica);
    } catch (error) {
      if (!replicaFault(error)) throw error;
      this.become('unavailable', error);
      this.metrics.replicaFallbacks.inc({ reason: 'error' });
      return work(this.primary);
    }
  }

  /** One measurement: the primary's position first, then how far the replica has replayed. */
  private async check(): Promise<void> {
    let primaryLsn: bigint;
    try {
      const { rows } = await this.primary.pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      primaryLsn = parseLsn(rows[0]!.lsn);
    } catch {
      return; // The primary out of reach: every read fails anyway; nothing to learn about the replica.
    }
    const at = Date.now();
    try {
      const { rows } = await withTimeout(
        this.probe.query<{ standby: boolean; replayed: string | null }>(
          'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed',
        ),
        CHECK_TIMEOUT_MS,
        `the read replica did not answer within ${CHECK_TIMEOUT_MS} ms`,
      );
      const { standby, replayed } = rows[0]!;
      if (!standby || replayed === null)
        throw new Error('DATABASE_READ_URL is not a standby (pg_is_in_recovery() is false)');
      this.lag.primaryAt(primaryLsn, at);
      const lagMs = this.lag.replayedTo(parseLsn(replayed), Date.now());
      this.metrics.replicaLag.set(lagMs / 1000);
      this.become(lagMs <= this.maxLagMs ? 'serving' : 'lag', `${lagMs} ms behind`);
    } catch (error) {
      this.lag.reset();
      this.metrics.replicaLag.set(NaN);
      this.become('unavailable', error);
    }
  }

  private become(state: State, why: unknown): void {
    if (state === this.state) return;
    const message = (why as { message?: unknown } | null)?.message;
    const reason = typeof message === 'string' ? message : String(why);
    // Out of reach, its lag is unknown: NaN rather than the last one measured.
    if (state === 'unavailable') this.metrics.replicaLag.set(NaN);
    if (state === 'serving') this.logger.info({ reason }, 'read replica: serving the lists and analytics again');
    else
      this.logger.warn(
        { reason, maxLagMs: this.maxLagMs },
        `read replica: ${state === 'lag' ? 'lagging past DATABASE_READ_MAX_LAG_MS' : 'out of reach'}; its reads go to the primary`,
      );
    this.state = state;
    this.metrics.replicaServing.set(state === 'serving' ? 1 : 0);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all([this.replica.close(), this.probe.end()]);
  }
}

/**
 * A failure of the replica rather than of the read: no connection in time, the connection refused or lost, the server
 * shutting down or out of connections, or a recovery conflict (40001 on a standby: replay needed what the query held).
 * The same read on the primary is then worth one try; anything else would fail there too.
 */
export function replicaFault(error: unknown): boolean {
  if (error instanceof TemporarilyUnavailable) return true;
  if (typeof error !== 'object' || error === null) return false;
  // Read by shape, not by class: Node's socket errors come from another realm under some runners (jest's VM).
  const { code, errno, message, severity } = error as Partial<Record<'code' | 'message' | 'severity', unknown>> & {
    errno?: unknown;
  };
  if (typeof severity === 'string') return typeof code === 'string' && /^(08|53|57P|40001)/.test(code);
  return errno !== undefined || (typeof message === 'string' && /^Connection terminated|not queryable/.test(message));
}
