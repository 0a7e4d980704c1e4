import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { AppConfig } from '../../src/core/config/app-config.js';
import { createLogger } from '../../src/core/logging/logger.js';
import { Metrics } from '../../src/core/metrics/metrics.js';
import { TaskScheduler } from '../../src/core/scheduling/task-scheduler.js';
import { WorkerSchedules } from '../../src/worker/worker-schedules.js';
import { startDisposableRedis, type DisposableRedis } from '../utils/disposable-redis.js';
import { LogCapture } from '../utils/log-capture.js';
import { testEnv } from '../utils/test-env.js';
import { startTestWorker, waitFor, type TestWorker } from '../utils/webhooks.js';

jest.setTimeout(180_000);

const EVERY_MS = 250;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Instance {
  worker: TestWorker;
  logs: LogCapture;
}

/** The interval slot of each sweep this worker ran, from its log ("scheduled task ran", job id repeat:webhook-sweep:<slot>). */
function sweepSlots(instance: Instance): number[] {
  return instance.logs.lines
    .filter((l) => l.msg === 'scheduled task ran' && l.task === 'webhook-sweep')
    .map((l) => {
      const match = /^repeat:webhook-sweep:(\d+)$/.exec(String(l.jobId));
      if (!match) throw new Error(`unexpected job id ${String(l.jobId)}`);
      return Number(match[1]);
    });
}

/** A count of this worker's /metrics: the sample whose name and labels start the line. */
async function counted(instance: Instance, sample: string): Promise<number> {
  const text = (await instance.worker.context.get(Metrics).exposition()).body;
  const line = text.split('\n').find((l) => l.startsWith(sample));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** bmapi_scheduled_task_duration_seconds_count of the sweep on this worker's /metrics. */
const sweepsCounted = (instance: Instance) =>
  counted(instance, 'bmapi_scheduled_task_duration_seconds_count{task="webhook-sweep",outcome="ok"}');
/** Jobs of the scheduled-tasks queue its consumer ran (the managed worker's count, every task together). */
const scheduledJobsCounted = (instance: Instance) =>
  counted(instance, 'bmapi_queue_job_duration_seconds_count{queue="scheduled-tasks",outcome="ok"}');

describe('Periodic work as BullMQ job schedulers: one run per interval across all workers', () => {
  let redis: DisposableRedis;
  let config: AppConfig;
  let a: Instance;
  let b: Instance;

  const start = async (): Promise<Instance> => {
    const logs = new LogCapture();
    return { worker: await startTestWorker(config, { logDestination: logs.destination }), logs };
  };

  beforeAll(async () => {
    // A Redis of this file's own: the last test restarts it empty.
    redis = await startDisposableRedis();
    config = AppConfig.fromEnv(
      testEnv({
        REDIS_URL: redis.url,
        WEBHOOK_SWEEP_INTERVAL_MS: String(EVERY_MS),
        PURGE_INTERVAL_SECONDS: '600',
        LOG_LEVEL: 'debug',
      }),
    );
    [a, b] = await Promise.all([start(), start()]);
  });
  afterAll(async () => {
    await a?.worker.close();
    await b?.worker.close();
    redis?.kill();
  });

  it('two workers run the sweep once per interval between them, counted in their metrics', async () => {
    const allSlots = () => [...sweepSlots(a), ...sweepSlots(b)].sort((x, y) => x - y);
    // Ten runs to judge by (a ceiling, not a budget: a slow host gets there later).
    await waitFor(() => (allSlots().length >= 10 ? true : undefined), 'ten sweeps', 60_000);
    const slots = allSlots();
    // No interval ran twice (a timer in each worker would run each one twice), and the runs follow the interval's
    // slots; most intervals had their run (a busy host misses some: a run due while the last one goes is skipped).
    expect(new Set(slots).size).toBe(slots.length);
    for (let i = 1; i < slots.length; i++) expect((slots[i]! - slots[i - 1]!) % EVERY_MS).toBe(0);
    const intervals = (slots[slots.length - 1]! - slots[0]!) / EVERY_MS + 1;
    expect(slots.length).toBeGreaterThanOrEqual(intervals / 4);
    // What an operator scrapes: the two workers' counts add up to the runs, not to twice as many. Runs go on while
    // it is read; a run is counted just before it is logged, so the count lies between the runs logged before and after.
    const counted = (await sweepsCounted(a)) + (await sweepsCounted(b));
    expect(counted).toBeGreaterThanOrEqual(slots.length);
    expect(counted).toBeLessThanOrEqual(allSlots().length);
    // Each run is a job of the scheduled-tasks queue, counted by the consumer too (the purges have not run yet).
    expect((await scheduledJobsCounted(a)) + (await scheduledJobsCounted(b))).toBeGreaterThanOrEqual(slots.length);
  });

  it('keeps running the sweep on the other worker when one stops', async () => {
    await a.worker.close();
    const stoppedAt = Date.now();
    const ranOnA = sweepSlots(a).length;
    const afterStop = () => sweepSlots(b).filter((slot) => slot > stoppedAt);
    await waitFor(() => (afterStop().length >= 4 ? true : undefined), 'four sweeps on the other worker', 60_000);
    const after = afterStop();
    expect(new Set(after).size).toBe(after.length);
    // The stopped worker takes no more runs.
    expect(sweepSlots(a)).toHaveLength(ranOnA);
  });

  it('recreates the schedules when Redis comes back empty, with the intervals of the configuration', async () => {
    await redis.stop();
    await sleep(500);
    await redis.start();
    const restartedAt = Date.now();
    // The surviving worker upserts its schedules once reconnected; the sweep's first run is immediate.
    await waitFor(
      () => (sweepSlots(b).filter((slot) => slot > restartedAt).length >= 3 ? true : undefined),
      'sweeps after the restart',
      15_000,
    );
    const schedules = await b.worker.context.get(WorkerSchedules).scheduler.schedules();
    expect(Object.fromEntries(schedules.map((s) => [s.id, s.every]))).toEqual({
      'webhook-sweep': EVERY_MS,
      'storage-partitions': 3_600_000,
      'storage-compaction': 3_600_000,
      'purge-console-sessions': 600_000,
      'purge-idempotency-keys': 600_000,
      'content-retention': 600_000,
      'credential-check': 21_600_000,
    });
    // Housekeeping waits a minute after its schedule is created, so that a restarting fleet gets to its jobs first.
    for (const s of schedules.filter((x) => x.id !== 'webhook-sweep'))
      expect(s.next).toBeGreaterThan(restartedAt + 50_000);
  });

  it('runs tasks side by side, never one task twice at once on a worker: its run due while the previous one goes is skipped', async () => {
    let active = 0;
    let mostAtOnce = 0;
    let runs = 0;
    let quickRuns = 0;
    /** Quick runs that happened while the slow task was running. */
    let quickBeside = 0;
    const metrics = new Metrics();
    // A task that takes fifteen of its intervals.
    const slow = async () => {
      mostAtOnce = Math.max(mostAtOnce, ++active);
      await sleep(1500);
      active--;
      return ++runs;
    };
    const quick = () => {
      if (active > 0) quickBeside++;
      return Promise.resolve(++quickRuns);
    };
    const scheduler = new TaskScheduler(
      [
        { id: 'slow', everyMs: 100, firstAfterMs: 0, run: slow },
        { id: 'quick', everyMs: 100, firstAfterMs: 0, run: quick },
      ],
      {
        redisUrl: redis.url,
        prefix: `slow${randomBytes(4).toString('hex')}`,
        logger: createLogger('silent', 'test'),
        metrics,
      },
    );
    scheduler.start();
    // Two slow runs: three seconds of it running (a ceiling, a slow host takes longer).
    await waitFor(() => (runs >= 2 ? true : undefined), 'two runs of the slow task', 60_000);
    await scheduler.stop();
    expect(mostAtOnce).toBe(1);
    // The slow task holds up nothing else: the quick one ran while it was running (behind it, never).
    expect(quickBeside).toBeGreaterThanOrEqual(2);
    const text = (await metrics.exposition()).body;
    const skipped = Number(
      text
        .split('\n')
        .find((l) => l.startsWith('bmapi_scheduled_task_duration_seconds_count{task="slow",outcome="skipped"}'))
        ?.split(' ')
        .pop() ?? 0,
    );
    expect(skipped).toBeGreaterThanOrEqual(1);
  });
});
