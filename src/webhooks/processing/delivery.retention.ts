import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { WebhookDeliveriesRepository } from '../deliveries/webhook-deliveries.repository.js';

const DAY_MS = 24 * 3600_000;
const INTERVAL_MS = 3600_000;
/** The first pass waits a little after start, so that a restarting worker gets to its jobs first. */
const FIRST_PASS_AFTER_MS = 60_000;
const BATCH = 1000;

/**
 * Raw payloads are the bulk of what webhooks store. Processed deliveries older than WEBHOOK_RETENTION_DAYS
 * are deleted hourly; the events they produced (each with its item's JSON) stay, so the events API and
 * message histories are unaffected. Dead-lettered and unprocessed deliveries are kept. Several workers may
 * prune at once: a row deleted by one is skipped by the other.
 */
@Injectable()
export class DeliveryRetention implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onModuleInit(): void {
    if (this.config.webhookRetentionDays > 0) this.schedule(FIRST_PASS_AFTER_MS);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
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

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.prune()
        .catch((err: unknown) => this.logger.warn({ err }, 'webhook retention pass failed; next pass in an hour'))
        .finally(() => this.schedule(INTERVAL_MS));
    }, delayMs);
    this.timer.unref();
  }
}
