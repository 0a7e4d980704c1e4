import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';

/** The process a Metrics serves: each exports only the series it counts (issue 43: not the other's as 0). */
export type MetricsProcess = 'api' | 'worker';

/**
 * The process's Prometheus metrics (prom-client), one registry per process: the API serves them at
 * GET /metrics on its port, the worker on its own small port (WORKER_METRICS_PORT). Names start with `bmapi_`.
 * Gauges whose value lives elsewhere (queue depth, the oldest unprocessed delivery) are read when scraped.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Histogram({
    name: 'bmapi_http_request_duration_seconds',
    help: 'HTTP requests by method, route (the matched route pattern) and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [],
  });

  readonly sends = new Counter({
    name: 'bmapi_sends_total',
    help: 'POST /messages answers by outcome: accepted, rejected (by the upstream platform), upstream_unavailable, rate_limited, replayed (Idempotency-Key)',
    labelNames: ['outcome'] as const,
    registers: [],
  });

  readonly upstreamRequests = new Histogram({
    name: 'bmapi_upstream_request_duration_seconds',
    help: "Calls to Meta's Cloud API by operation and outcome (ok, error, unavailable)",
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [],
  });

  readonly pacedSends = new Histogram({
    name: 'bmapi_pacing_send_lateness_seconds',
    help: 'How long after its pacer slot a paced send was ready to leave, by outcome: sent (within PACING_LATE_MS), forfeited (later: it took a new slot, as it would have bunched with the next sends at Meta)',
    labelNames: ['outcome'] as const,
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1],
    registers: [],
  });

  readonly scheduledTasks = new Histogram({
    name: 'bmapi_scheduled_task_duration_seconds',
    help: "Runs of the workers' periodic tasks (webhook-sweep, storage-partitions, storage-compaction, purge-*, credential-check) by task and outcome (ok, failed, skipped: the previous run on that worker still going); one run per interval across all workers",
    labelNames: ['task', 'outcome'] as const,
    buckets: [0.005, 0.025, 0.1, 0.5, 2.5, 10, 60],
    registers: [],
  });

  readonly queueJobs = new Histogram({
    name: 'bmapi_queue_job_duration_seconds',
    help: "Jobs run by the worker's BullMQ consumers by queue (webhook-deliveries, campaigns, scheduled-tasks) and outcome (ok, failed: retried or failed for good as the queue says)",
    labelNames: ['queue', 'outcome'] as const,
    buckets: [0.005, 0.025, 0.1, 0.5, 2.5, 10, 60, 300],
    registers: [],
  });

  readonly deliveriesReceived = this.counter(
    'bmapi_webhook_deliveries_received_total',
    'Webhook deliveries stored and acknowledged by the receiver (one per business account of a POST)',
  );
  readonly deliveriesProcessed = this.counter(
    'bmapi_webhook_deliveries_processed_total',
    'Webhook deliveries processed by the worker (a delivery re-run for waiting statuses counts again)',
  );
  readonly deliveriesDeadLettered = this.counter(
    'bmapi_webhook_deliveries_dead_lettered_total',
    'Webhook deliveries that failed for good (dead letters, replayable from the console)',
  );
  readonly eventsStored = this.counter(
    'bmapi_webhook_events_stored_total',
    'Events stored by the worker (each item of a delivery once)',
  );
  readonly processingHeld = this.counter(
    'bmapi_webhook_processing_held_seconds_total',
    'Seconds the worker held the processing of webhook deliveries while a receiver was saturated (acknowledgements first)',
  );

  /** Set by each partition-maintenance pass (and kept when a pass fails, so an alert on `- time()` still works). */
  readonly partitionsUntil = new Gauge({
    name: 'bmapi_storage_partitions_until_timestamp_seconds',
    help: 'Until when partitions exist for new rows, by table (events, webhook_deliveries), as last seen by the partition-maintenance task; alert when it comes within a week of now',
    labelNames: ['table'] as const,
    registers: [],
  });

  readonly partitionsDropped = new Counter({
    name: 'bmapi_storage_partitions_dropped_total',
    help: 'Weekly partitions dropped by the retention, by table (events: EVENTS_RETENTION_DAYS, webhook_deliveries: WEBHOOK_RETENTION_DAYS)',
    labelNames: ['table'] as const,
    registers: [],
  });

  readonly contentScrubbed = new Counter({
    name: 'bmapi_content_scrubbed_total',
    help: "Rows whose content the content-retention task removed, by table (messages: content; events: the message item's words; webhook_deliveries: the raw body)",
    labelNames: ['table'] as const,
    registers: [],
  });

  readonly partitionMaintenanceFailures = new Counter({
    name: 'bmapi_storage_partition_maintenance_failures_total',
    help: 'Partition-maintenance passes that failed (PostgreSQL unreachable, a lock not had); the next pass runs again',
    registers: [],
  });

  /** Set at start from UPSTREAM_BASE_URL (upstream/graph-api-version.check.ts). */
  readonly upstreamVersionExpiring = new Gauge({
    name: 'bmapi_upstream_api_version_expiring',
    help: "1 when the Graph API version of UPSTREAM_BASE_URL is within 180 days of Meta's published expiry (or past it), else 0; by version",
    labelNames: ['version'] as const,
    registers: [],
  });

  readonly upstreamVersionExpiry = new Gauge({
    name: 'bmapi_upstream_api_version_expiry_timestamp_seconds',
    help: 'When Meta retires the Graph API version of UPSTREAM_BASE_URL (absent when no date is published); by version',
    labelNames: ['version'] as const,
    registers: [],
  });

  /** The read replica's lag (NaN while it does not answer); registered by ReplicaRouter, when there is one. */
  readonly replicaLag = new Gauge({
    name: 'bmapi_db_replica_lag_seconds',
    help: 'How far the read replica (DATABASE_READ_URL) is behind the primary, measured every second; NaN while it does not answer',
    registers: [],
  });

  readonly replicaServing = new Gauge({
    name: 'bmapi_db_replica_serving',
    help: '1 while the reads that tolerate lag go to the read replica, 0 while they go to the primary (lagging past DATABASE_READ_MAX_LAG_MS, out of reach, not a standby)',
    registers: [],
  });

  readonly replicaFallbacks = new Counter({
    name: 'bmapi_db_replica_fallbacks_total',
    help: 'Reads meant for the read replica that the primary served instead, by reason: lag (past DATABASE_READ_MAX_LAG_MS), unavailable (not answering its checks), error (the read failed on the replica and was run again on the primary)',
    labelNames: ['reason'] as const,
    registers: [],
  });

  /** The read replica's series, for a process that has one (ReplicaRouter). */
  registerReplica(): void {
    if (this.registry.getSingleMetric('bmapi_db_replica_lag_seconds')) return;
    for (const metric of [this.replicaLag, this.replicaServing, this.replicaFallbacks])
      this.registry.registerMetric(metric);
  }

  /**
   * `process`: the API or the worker (CoreModule makes one per process), whose own series only are registered
   * (docs/operations-and-scaling.md, the table's Process column); the upstream calls and the pacer are counted by
   * both (sends and syncs in the API, campaigns and checks in the worker). Without it (tests of one component,
   * tools): every series.
   */
  constructor(process?: MetricsProcess) {
    // Partitions are checked at every process's start too (PartitionMaintenance), and the gauge says what was seen.
    // The Graph API version's standing is checked at every process's start (upstream/graph-api-version.check.ts).
    const both: Metric[] = [
      this.upstreamRequests,
      this.pacedSends,
      this.partitionsUntil,
      this.upstreamVersionExpiring,
      this.upstreamVersionExpiry,
    ];
    const api: Metric[] = [this.httpRequests, this.sends, this.deliveriesReceived];
    const worker: Metric[] = [
      this.scheduledTasks,
      this.queueJobs,
      this.deliveriesProcessed,
      this.deliveriesDeadLettered,
      this.eventsStored,
      this.processingHeld,
      this.partitionsDropped,
      this.partitionMaintenanceFailures,
      this.contentScrubbed,
    ];
    const own = process === 'api' ? api : process === 'worker' ? worker : [...api, ...worker];
    for (const metric of [...own, ...both]) this.registry.registerMetric(metric);
    collectDefaultMetrics({ register: this.registry, prefix: 'bmapi_' });
  }

  private counter(name: string, help: string): Counter {
    return new Counter({ name, help, registers: [] });
  }

  /** A gauge read when scraped; a failing read leaves the gauge without a value for that scrape. */
  gauge(name: string, help: string, read: () => Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        try {
          this.set(await read());
        } catch {
          this.reset();
        }
      },
    });
  }

  /** The text exposition format (and its content type). */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
