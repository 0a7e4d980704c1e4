import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { Metrics } from '../../core/metrics/metrics.js';
import {
  COMPACT_AFTER_MS,
  PARTITION_WEEKS_AHEAD,
  WEEK_MS,
  type Compaction,
  type Partition,
  type PartitionedTable,
} from '../../core/db/partitions.js';
import { WebhookDeliveriesRepository } from '../deliveries/webhook-deliveries.repository.js';
import { EventsRepository } from '../../events/events.repository.js';

const DAY_MS = 24 * 3600_000;
/** Hourly, as the `storage-partitions` scheduled task (worker/worker-schedules.ts). */
export const PARTITION_MAINTENANCE_INTERVAL_MS = 3600_000;
/** Hourly, as the `storage-compaction` scheduled task: at most one ended week's partition per table per run. */
export const PARTITION_COMPACTION_INTERVAL_MS = 3600_000;

export interface MaintenancePass {
  /** Until when partitions exist, per table (the upper bound of the newest one). */
  until: Record<PartitionedTable, Date>;
  created: Record<PartitionedTable, number>;
  dropped: Record<PartitionedTable, Partition[]>;
}

/**
 * The weekly partitions of `events` and `webhook_deliveries` (docs/storage.md): created PARTITION_WEEKS_AHEAD weeks
 * ahead, at every process's start and by the hourly scheduled task (one run per interval across all workers), and
 * dropped whole once every row in them is past its retention (EVENTS_RETENTION_DAYS, WEBHOOK_RETENTION_DAYS; 0 keeps
 * everything). A row that finds no partition fails loudly (the worker's chunk, or its move of processed deliveries,
 * rolls back), and the worker calls `ensureAhead` on that failure, so the retry finds its partition. The receiver
 * writes into `webhook_inbox`, which is not partitioned.
 * Each pass logs, and the gauge bmapi_storage_partitions_until_timestamp_seconds tells, how far ahead partitions
 * exist; a failed pass (PostgreSQL down) changes nothing and the next one runs again.
 */
@Injectable()
export class PartitionMaintenance implements OnApplicationBootstrap {
  /** As last seen: what the failure log line reports. */
  private lastUntil: Record<PartitionedTable, Date> | undefined;

  constructor(
    private readonly events: EventsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** Every process makes sure of the weeks ahead when it starts; a failure here never stops the start (readiness tells). */
  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.ensureAhead();
    } catch (err) {
      this.logger.warn(
        { err },
        'could not check the storage partitions at start; the scheduled task and the write paths will',
      );
    }
  }

  /** Creates the partitions missing from now through PARTITION_WEEKS_AHEAD weeks ahead; returns until when they exist. */
  async ensureAhead(
    now = new Date(),
  ): Promise<{ until: Record<PartitionedTable, Date>; created: Record<PartitionedTable, number> }> {
    const through = new Date(now.getTime() + PARTITION_WEEKS_AHEAD * WEEK_MS);
    const created = {
      events: await this.events.ensurePartitions(now, through),
      webhook_deliveries: await this.deliveries.ensurePartitions(now, through),
    };
    const until = {
      events: newestBound(await this.events.partitions()),
      webhook_deliveries: newestBound(await this.deliveries.partitions()),
    };
    for (const table of ['events', 'webhook_deliveries'] as const)
      this.metrics.partitionsUntil.set({ table }, until[table].getTime() / 1000);
    this.lastUntil = until;
    return { until, created };
  }

  /** The scheduled pass: partitions ahead, then the retention drops. */
  async pass(now = new Date()): Promise<MaintenancePass> {
    try {
      const { until, created } = await this.ensureAhead(now);
      const events =
        this.config.eventsRetentionDays > 0
          ? await this.events.dropPartitionsBefore(daysBefore(now, this.config.eventsRetentionDays))
          : [];
      const deliveries =
        this.config.webhookRetentionDays > 0
          ? await this.deliveries.dropPartitionsBefore(daysBefore(now, this.config.webhookRetentionDays))
          : [];
      this.metrics.partitionsDropped.inc({ table: 'events' }, events.length);
      this.metrics.partitionsDropped.inc({ table: 'webhook_deliveries' }, deliveries.length);
      const result: MaintenancePass = {
        until,
        created,
        dropped: { events, webhook_deliveries: deliveries },
      };
      this.logger.info(
        {
          eventsPartitionsUntil: until.events.toISOString(),
          deliveriesPartitionsUntil: until.webhook_deliveries.toISOString(),
          created,
          droppedEvents: events.map((p) => p.name),
          droppedDeliveries: deliveries.map((p) => p.name),
        },
        'storage partitions maintained',
      );
      return result;
    } catch (err) {
      this.metrics.partitionMaintenanceFailures.inc();
      this.logger.error(
        {
          err,
          eventsPartitionsUntil: this.lastUntil?.events.toISOString(),
          deliveriesPartitionsUntil: this.lastUntil?.webhook_deliveries.toISOString(),
        },
        'storage partition maintenance failed; nothing was changed by the failed step, the next pass runs again',
      );
      throw err;
    }
  }

  /**
   * The `storage-compaction` scheduled task: one ended week's partition of each table compacted, the most recent week
   * first (docs/storage.md, "A week that has ended"). Nothing is added to a week's partitions once it has ended: their
   * indexes, grown by appends within each account's range, are about half empty, and a week of deliveries keeps the
   * space its processing updates left; rebuilt (and the deliveries' heap rewritten) they are full. One partition per
   * table per run keeps a run to minutes; weeks stored before this existed are done one an hour. Each is logged with
   * its bytes before and after.
   */
  async compact(now = new Date()): Promise<Compaction[]> {
    const endedBefore = new Date(now.getTime() - COMPACT_AFTER_MS);
    const done: Compaction[] = [];
    for (const [table, owner] of [
      ['events', this.events],
      ['webhook_deliveries', this.deliveries],
    ] as const) {
      const compaction = await owner.compactEndedPartition(endedBefore);
      if (!compaction) continue;
      done.push(compaction);
      this.logger.info(
        { table, ...compaction },
        `storage partition ${compaction.partition}: compacted, ${mib(compaction.bytesBefore)} → ${mib(compaction.bytesAfter)} MiB`,
      );
    }
    return done;
  }
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}

function newestBound(partitions: Partition[]): Date {
  return partitions.reduce((max, p) => (p.upperBound > max ? p.upperBound : max), new Date(0));
}

function daysBefore(now: Date, days: number): Date {
  return new Date(now.getTime() - days * DAY_MS);
}
