import type { AppLogger } from '../logging/app-logger.js';

const BATCH = 1000;

/**
 * One table's rows that have outlived their use, deleted every `intervalMs` in batches of 1000 (short
 * statements, no long lock) through the table's repository (`deleteBatch`). Several workers may purge at
 * once: a row deleted by one is simply not found by the other.
 */
export class PeriodicPurge {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    /** What is deleted, for the log ("ended console sessions"). */
    private readonly what: string,
    /** Deletes up to `limit` rows that ended before `now`; returns how many. */
    private readonly deleteBatch: (now: Date, limit: number) => Promise<number>,
    private readonly logger: AppLogger,
  ) {}

  start(firstAfterMs: number, intervalMs: number): void {
    this.schedule(firstAfterMs, intervalMs);
  }

  async stop(): Promise<void> {
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

  private schedule(delayMs: number, intervalMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.purge()
        .catch((err: unknown) => this.logger.warn({ err }, `purge of ${this.what} failed; trying again at the next pass`))
        .finally(() => this.schedule(intervalMs, intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
