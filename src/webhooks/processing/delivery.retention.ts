import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { WebhookDeliveriesRepository } from '../deliveries/webhook-deliveries.repository.js';

const DAY_MS = 24 * 3600_000;
/** Hourly, as the `webhook-retention` scheduled task (worker.schedules.ts). */
export const RETENTION_INTERVAL_MS = 3600_000;
const BATCH = 1000;

/**
 * Raw payloads are the bulk of what webhooks store. Processed deliveries older than WEBHOOK_RETENTION_DAYS
 * are deleted hourly; the events they produced (each with its item's JSON) stay, so the events API and
 * message histories are unaffected. Dead-lettered and unprocessed deliveries are kept. (WEBHOOK_RETENTION_DAYS=0:
 * a pass deletes nothing.) Should two passes overlap, a row deleted by one is skipped by the other.
 */
@Injectable()
export class DeliveryRetention implements OnModuleDestroy {
  private stopped = false;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** Shutting down: a pass under way stops after its current batch. */
  onModuleDestroy(): void {
    this.stopped = true;
  }

  /** One pass; returns how many deliveries were deleted. */
  async prune(now = Date.now()): Promise<number> {
    if (this.config.webhookRetentionDays === 0) return 0;
    const before = new Date(now - this.config.webhookRetentionDays * DAY_MS);
    let total = 0;
    while (!this.stopped) {
      const deleted = await this.deliveries.pruneProcessed(before, BATCH);
      total += deleted;
      if (deleted < BATCH) break;
    }
    if (total > 0) this.logger.info({ deleted: total, receivedBefore: before.toISOString() }, 'deleted processed webhook deliveries past retention');
    return total;
  }
}
