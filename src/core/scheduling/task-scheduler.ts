import { Queue, UnrecoverableError, type Job } from 'bullmq';
import { ManagedWorker, type JobLocks, type WorkerRuntime } from '../queue/managed-worker.js';
import { QUEUES } from '../queue/queue.constants.js';
import { createRedisConnection, type RedisClient } from '../redis/redis-connection.js';

/** Periodic work of the worker processes (see worker/worker-schedules.ts). */
export interface ScheduledTask {
  /** The BullMQ job scheduler's id and its jobs' name: `webhook-sweep`. */
  readonly id: string;
  readonly everyMs: number;
  /**
   * When a scheduler is created (the first worker ever, or Redis came back empty), its first run waits this long:
   * a restarting fleet gets to its queued jobs first. 0: at once. An existing scheduler keeps its rhythm.
   */
  readonly firstAfterMs: number;
  /** One run; resolves with what it did, for the log (rows deleted, deliveries handed to the queue). */
  run(): Promise<number>;
}

/** A run whose worker died is taken over by another worker once its lock expires (renewed while it runs). */
const LOCKS: JobLocks = { lockDurationMs: 30_000, stalledIntervalMs: 15_000, maxStalledCount: 1, graceMs: 10_000 };
/** Kept for Bull Board and for a look at the last runs; no run waits for another. */
const KEEP = { count: 100 };

/**
 * Runs ScheduledTasks as BullMQ job schedulers (`queue.upsertJobScheduler(id, { every })`) on the
 * `scheduled-tasks` queue: Redis holds one schedule per task, whose jobs have one id per interval
 * (`repeat:<id>:<slot>`), so however many workers there are, each interval's run happens once, on whichever
 * worker takes the job; a worker that stops leaves the schedule to the others. Every worker upserts every task
 * when its connection to Redis becomes ready: at start (same id and interval: the schedule is kept; another
 * interval: replaced, so the last worker started decides), and after Redis comes back, which matters when it
 * came back empty (its schedules lost with its data). Each run is counted in bmapi_scheduled_task_duration_seconds
 * and logs with its task and job id. A run that outlasts its interval may overlap the next interval's run on
 * another worker (harmless for these tasks), never on the same one (that run is skipped).
 */
export class TaskScheduler {
  private readonly tasks: Map<string, ScheduledTask>;
  private connection?: RedisClient;
  private queue?: Queue;
  private worker?: ManagedWorker<unknown, number>;
  private upserting?: Promise<void>;
  /** Tasks running in this process: a run that outlasts its interval is not joined by the next one here. */
  private readonly running = new Set<string>();

  constructor(
    tasks: ScheduledTask[],
    private readonly opts: WorkerRuntime,
  ) {
    this.tasks = new Map(tasks.map((t) => [t.id, t]));
  }

  start(): void {
    const { prefix } = this.opts;
    this.connection = createRedisConnection(this.opts, { failFast: false });
    this.queue = new Queue(QUEUES.scheduledTasks, { connection: this.connection, prefix });
    this.queue.on('error', () => undefined);
    this.connection.on('ready', () => void this.upsertAll());
    // Every task at once: a long retention pass never holds up the sweeper.
    const spec = {
      queue: QUEUES.scheduledTasks,
      name: 'scheduled tasks',
      concurrency: Math.max(1, this.tasks.size),
      ...LOCKS,
      connection: this.connection,
      logContextOf: (job: Job) => ({ task: job.name }),
    };
    this.worker = new ManagedWorker<unknown, number>(spec, this.opts, (job) => this.runJob(job));
    this.worker.start();
  }

  /** Stops taking runs; a running one finishes first (up to a grace period), or is taken over by another worker. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.close();
    await this.upserting?.catch(() => undefined);
    await this.queue?.close().catch(() => undefined);
    this.connection?.disconnect();
  }

  /** The schedules as Redis holds them (for tests and operators' scripts). */
  async schedules(): Promise<{ id: string; every?: number | null; next?: number }[]> {
    const all = await this.queue!.getJobSchedulers();
    return all.map((s) => ({ id: s.key, every: s.every, next: s.next }));
  }

  private upsertAll(): Promise<void> {
    // One pass at a time; a 'ready' during a pass is covered by that pass (both upsert the same schedules).
    if (!this.upserting) this.upserting = this.upsertEach().finally(() => (this.upserting = undefined));
    return this.upserting;
  }

  private async upsertEach(): Promise<void> {
    try {
      for (const task of this.tasks.values()) {
        await this.queue!.upsertJobScheduler(
          task.id,
          { every: task.everyMs, ...(task.firstAfterMs > 0 ? { startDate: Date.now() + task.firstAfterMs } : {}) },
          { name: task.id, opts: { attempts: 1, removeOnComplete: KEEP, removeOnFail: KEEP } },
        );
      }
      this.opts.logger.debug({ tasks: [...this.tasks.keys()] }, 'scheduled tasks: schedules upserted');
    } catch (err) {
      // Redis went away again: its next 'ready' upserts again.
      this.opts.logger.warn({ err }, 'scheduled tasks: could not upsert the schedules; retrying when Redis is back');
    }
  }

  private async runJob(job: Job): Promise<number> {
    const task = this.tasks.get(job.name);
    if (!task) {
      // A schedule of another build (a task renamed or removed); it stays until removed from Redis.
      this.opts.logger.warn({ jobId: job.id, task: job.name }, 'scheduled tasks: no such task in this build');
      throw new UnrecoverableError(`no scheduled task ${job.name}`);
    }
    const timer = this.opts.metrics.scheduledTasks.startTimer({ task: task.id });
    if (this.running.has(task.id)) {
      // The previous run (on this worker) outlasted its interval; the next interval's job runs as usual.
      this.opts.logger.debug('scheduled task skipped: its previous run is still going');
      timer({ outcome: 'skipped' });
      return 0;
    }
    this.running.add(task.id);
    try {
      const done = await task.run();
      this.opts.logger.debug({ done, ms: Math.round(timer({ outcome: 'ok' }) * 1000) }, 'scheduled task ran');
      return done;
    } catch (err) {
      timer({ outcome: 'failed' });
      this.opts.logger.warn({ err }, 'scheduled task failed; it runs again at its next interval');
      throw err;
    } finally {
      this.running.delete(task.id);
    }
  }
}
