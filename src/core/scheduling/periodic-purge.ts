import type { AppLogger } from '../logging/app-logger.js';

const BATCH = 1000;

/**
 * One table's rows that have outlived their use, deleted in batches of 1000 (short statements, no long lock)
 * through the table's repository (`deleteBatch`); run periodically as a scheduled task (worker/worker-schedules.ts).
 * Should two passes overlap, a row deleted by one is simply not found by the other.
 */
export class PeriodicPurge {
  private stopped = false;

  constructor(
    /** What is deleted, for the log ("ended console sessions"). */
    private readonly what: string,
    /** Deletes up to `limit` rows that ended before `now`; returns how many. */
    private readonly deleteBatch: (now: Date, limit: number) => Promise<number>,
    private readonly logger: AppLogger,
  ) {}

  /** Shutting down: a pass under way stops after its current batch. */
  stop(): void {
    this.stopped = true;
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
}
