import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import type { AppLogger } from '../logging/app-logger.js';

/** The first pass waits a little after start, so that a restarting worker gets to its jobs first. */
const FIRST_PASS_AFTER_MS = 60_000;
const BATCH = 1000;

/**
 * A table's rows that have outlived their use, deleted by the worker every PURGE_INTERVAL_SECONDS (hourly)
 * in batches of 1000 (short transactions, no long lock). The subclass names what it purges and deletes one
 * batch through the table's repository. Several workers may purge at once: a row deleted by one is simply
 * not found by the other.
 */
export abstract class PeriodicPurge implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  protected abstract readonly what: string;

  constructor(
    protected readonly config: AppConfig,
    protected readonly logger: AppLogger,
  ) {}

  /** Deletes up to `limit` rows that ended before `now`; returns how many. */
  protected abstract deleteBatch(now: Date, limit: number): Promise<number>;

  onModuleInit(): void {
    this.schedule(FIRST_PASS_AFTER_MS);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass; returns how many rows were deleted. */
  async purge(now = new Date()): Promise<number> {
    let total = 0;
    while (!this.stopped) {
      const deleted = await this.deleteBatch(now, BATCH);
      total += deleted;
      if (deleted < BATCH) break;
    }
    if (total > 0) this.logger.info({ deleted: total }, `deleted ${this.what}`);
    return total;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.purge()
        .catch((err: unknown) => this.logger.warn({ err }, `purge of ${this.what} failed; trying again at the next pass`))
        .finally(() => this.schedule(this.config.purgeIntervalSeconds * 1000));
    }, delayMs);
    this.timer.unref();
  }
}
