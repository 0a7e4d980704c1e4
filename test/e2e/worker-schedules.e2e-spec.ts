import { jest } from '@jest/globals';
import { AppConfig } from '../../src/core/config/app-config.js';
import { Metrics } from '../../src/core/metrics/metrics.js';
import { WorkerSchedules } from '../../src/worker.schedules.js';
import { startDisposableRedis, type DisposableRedis } from '../utils/disposable-redis.js';
import { LogCapture } from '../utils/log-capture.js';
import { testEnv } from '../utils/test-env.js';
import { startTestWorker, waitFor, type TestWorker } from '../utils/webhooks.js';

jest.setTimeout(60_000);

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

/** bmapi_scheduled_task_duration_seconds_count of the sweep on this worker's /metrics. */
async function sweepsCounted(instance: Instance): Promise<number> {
  const text = (await instance.worker.context.get(Metrics).exposition()).body;
  const line = text.split('\n').find((l) => l.startsWith('bmapi_scheduled_task_duration_seconds_count{task="webhook-sweep",outcome="ok"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

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
    config = AppConfig.fromEnv(testEnv({ REDIS_URL: redis.url, WEBHOOK_SWEEP_INTERVAL_MS: String(EVERY_MS), PURGE_INTERVAL_SECONDS: '600', LOG_LEVEL: 'debug' }));
    [a, b] = await Promise.all([start(), start()]);
  });
  afterAll(async () => {
    await a?.worker.close();
    await b?.worker.close();
    redis?.kill();
  });

  it('two workers run the sweep once per interval between them, counted in their metrics', async () => {
    await sleep(12 * EVERY_MS);
    const slots = [...sweepSlots(a), ...sweepSlots(b)].sort((x, y) => x - y);
    // Twelve intervals: about twelve runs in all (a timer in each worker would make about twenty-four).
    expect(slots.length).toBeGreaterThanOrEqual(7);
    expect(slots.length).toBeLessThanOrEqual(14);
    // No interval ran twice, and the runs follow the interval's slots.
    expect(new Set(slots).size).toBe(slots.length);
    for (let i = 1; i < slots.length; i++) expect((slots[i]! - slots[i - 1]!) % EVERY_MS).toBe(0);
    // What an operator scrapes: the two workers' counts add up to the runs, not to twice as many.
    expect((await sweepsCounted(a)) + (await sweepsCounted(b))).toBe(slots.length);
  });

  it('keeps running the sweep on the other worker when one stops', async () => {
    await a.worker.close();
    const before = sweepSlots(b).length;
    const stoppedAt = Date.now();
    await sleep(8 * EVERY_MS);
    const after = sweepSlots(b).filter((slot) => slot > stoppedAt);
    expect(after.length).toBeGreaterThanOrEqual(4);
    expect(after.length).toBeLessThanOrEqual(10);
    expect(sweepSlots(b).length - before).toBe(after.length);
  });

  it('recreates the schedules when Redis comes back empty, with the intervals of the configuration', async () => {
    await redis.stop();
    await sleep(500);
    await redis.start();
    const restartedAt = Date.now();
    // The surviving worker upserts its schedules once reconnected; the sweep's first run is immediate.
    await waitFor(() => (sweepSlots(b).filter((slot) => slot > restartedAt).length >= 3 ? true : undefined), 'sweeps after the restart', 15_000);
    const schedules = await b.worker.context.get(WorkerSchedules).scheduler.schedules();
    expect(Object.fromEntries(schedules.map((s) => [s.id, s.every]))).toEqual({
      'webhook-sweep': EVERY_MS,
      'webhook-retention': 3_600_000,
      'purge-console-sessions': 600_000,
      'purge-idempotency-keys': 600_000,
    });
    // Housekeeping waits a minute after its schedule is created, so that a restarting fleet gets to its jobs first.
    for (const s of schedules.filter((x) => x.id !== 'webhook-sweep')) expect(s.next).toBeGreaterThan(restartedAt + 50_000);
  });
});
