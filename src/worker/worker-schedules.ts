import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { Metrics } from '../core/metrics/metrics.js';
import { queueKeyPrefix } from '../core/redis/redis-keys.js';
import { TaskScheduler, type ScheduledTask } from '../core/scheduling/task-scheduler.js';
import { DeliverySweeper } from '../webhooks/processing/delivery.sweeper.js';
import {
  PARTITION_COMPACTION_INTERVAL_MS,
  PARTITION_MAINTENANCE_INTERVAL_MS,
  PartitionMaintenance,
} from '../webhooks/storage/partition-maintenance.js';
import { CREDENTIAL_CHECK_FIRST_AFTER_MS, WorkerCredentialChecks } from './worker-credential-checks.js';
import { ContentRetention } from '../retention/content-retention.js';
import { WorkerPurges } from './worker-purges.js';

/** Retention and purges wait this long after their schedule is created: a restarting fleet gets to its jobs first. */
export const HOUSEKEEPING_FIRST_AFTER_MS = 60_000;

/**
 * Everything the workers do periodically, each as a BullMQ job scheduler (TaskScheduler): one run per interval
 * across all worker processes, on whichever takes it.
 */
export function workerTasks(
  config: AppConfig,
  sweeper: DeliverySweeper,
  partitions: PartitionMaintenance,
  purges: WorkerPurges,
  credentials: WorkerCredentialChecks,
  retention: ContentRetention,
): ScheduledTask[] {
  const purgeEveryMs = config.purgeIntervalSeconds * 1000;
  const credentialEveryMs = config.credentialCheckIntervalSeconds * 1000;
  return [
    // Deliveries acknowledged while Redis was down (or whose jobs Redis lost) are queued from here; at once when the
    // schedule is (re)created, which is also what happens when Redis comes back empty.
    { id: 'webhook-sweep', everyMs: config.webhookSweepIntervalMs, firstAfterMs: 0, run: () => sweeper.sweep() },
    // Weekly partitions of events and deliveries kept ahead, and dropped past EVENTS_RETENTION_DAYS / WEBHOOK_RETENTION_DAYS.
    // (Every process also makes sure of the weeks ahead when it starts.)
    {
      id: 'storage-partitions',
      everyMs: PARTITION_MAINTENANCE_INTERVAL_MS,
      firstAfterMs: HOUSEKEEPING_FIRST_AFTER_MS,
      run: () => partitions.pass().then((p) => p.dropped.events.length + p.dropped.webhook_deliveries.length),
    },
    // An ended week's partitions compacted once (the deliveries' heap rewritten, both tables' indexes rebuilt): a task
    // of its own, as a big week takes minutes.
    {
      id: 'storage-compaction',
      everyMs: PARTITION_COMPACTION_INTERVAL_MS,
      firstAfterMs: HOUSEKEEPING_FIRST_AFTER_MS,
      run: () => partitions.compact().then((done) => done.length),
    },
    {
      id: 'purge-console-sessions',
      everyMs: purgeEveryMs,
      firstAfterMs: HOUSEKEEPING_FIRST_AFTER_MS,
      run: () => purges.sessions.purge(),
    },
    {
      id: 'purge-idempotency-keys',
      everyMs: purgeEveryMs,
      firstAfterMs: HOUSEKEEPING_FIRST_AFTER_MS,
      run: () => purges.idempotencyKeys.purge(),
    },
    // Message content past each organization's retention (CONTENT_RETENTION_DAYS or its own setting), in batches.
    {
      id: 'content-retention',
      everyMs: purgeEveryMs,
      firstAfterMs: HOUSEKEEPING_FIRST_AFTER_MS,
      run: () => retention.pass(),
    },
    // One Graph call per connected account and interval, whatever the number of workers.
    {
      id: 'credential-check',
      everyMs: credentialEveryMs,
      firstAfterMs: Math.min(CREDENTIAL_CHECK_FIRST_AFTER_MS, credentialEveryMs),
      run: () => credentials.pass(),
    },
  ];
}

/** The worker's scheduled tasks, started once every provider is ready (onApplicationBootstrap). */
@Injectable()
export class WorkerSchedules implements OnApplicationBootstrap, OnModuleDestroy {
  readonly scheduler: TaskScheduler;

  constructor(
    config: AppConfig,
    sweeper: DeliverySweeper,
    partitions: PartitionMaintenance,
    purges: WorkerPurges,
    credentials: WorkerCredentialChecks,
    retention: ContentRetention,
    metrics: Metrics,
    @Inject(APP_LOGGER) logger: AppLogger,
  ) {
    this.scheduler = new TaskScheduler(workerTasks(config, sweeper, partitions, purges, credentials, retention), {
      redisUrl: config.redisUrl,
      redisCluster: config.redisCluster,
      prefix: queueKeyPrefix(config),
      logger,
      metrics,
    });
  }

  onApplicationBootstrap(): void {
    this.scheduler.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.scheduler.stop();
  }
}
