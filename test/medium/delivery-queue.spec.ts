import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { AppConfig } from '../../src/core/config/app-config.js';
import { QUEUES } from '../../src/core/queue/queue.constants.js';
import { QueueService } from '../../src/core/queue/queue.service.js';
import { DeliveryQueue, RERUN_PRIORITY, deliveryJobIds } from '../../src/webhooks/delivery-queue.js';
import { testEnv } from '../utils/test-env.js';

/**
 * The webhook-deliveries queue on the run's Redis (a prefix of its own): a delivery Meta has just sent runs before
 * every re-run of statuses still waiting for their message, however many are queued (a slow-host run of 2026-12-02
 * had 6,674 re-runs queued ahead of fresh deliveries, which then waited minutes).
 */
describe('DeliveryQueue (Redis)', () => {
  const prefix = `dq${Date.now().toString(36)}`;
  const config = AppConfig.fromEnv(testEnv({ QUEUE_PREFIX: prefix }));
  const queues = new QueueService(config);
  const queue = new DeliveryQueue(queues, config);
  let worker: Worker | undefined;
  afterAll(async () => {
    await worker?.close();
    await queues.queue(QUEUES.webhookDeliveries).obliterate({ force: true });
    await queues.onModuleDestroy();
  });

  it("a fresh delivery's job runs before every queued re-run; the re-runs run after it, delayed ones before sweeps", async () => {
    const sweeps = Array.from({ length: 40 }, (_, i) => {
      const deliveryIds = [1000 + 2 * i, 1001 + 2 * i];
      return { deliveryIds, jobId: deliveryJobIds.pendingSweep(deliveryIds, 1), priority: RERUN_PRIORITY.sweep };
    });
    await queue.enqueueMany(sweeps);
    await queue.enqueue({ deliveryIds: [7], rerun: 3 }, deliveryJobIds.pending([7], 3), {
      priority: RERUN_PRIORITY.delayed,
    });
    await queue.enqueue({ deliveryIds: [42] }, deliveryJobIds.batch('fresh'));

    const order: number[][] = [];
    const done = new Promise<void>((resolve) => {
      worker = new Worker(
        QUEUES.webhookDeliveries,
        async (job) => {
          order.push((job.data as { deliveryIds: number[] }).deliveryIds);
          if (order.length === sweeps.length + 2) resolve();
        },
        { connection: new Redis(config.redisUrl, { maxRetriesPerRequest: null }), prefix, concurrency: 1 },
      );
    });
    await done;

    expect(order[0]).toEqual([42]);
    expect(order[1]).toEqual([7]);
    // Every waiting delivery's sweep ran once, 2 deliveries a job here (50 in the sweeper).
    expect(
      order
        .slice(2)
        .flat()
        .sort((a, b) => a - b),
    ).toEqual(sweeps.flatMap((s) => s.deliveryIds));
  }, 60_000);

  it('names a sweep job by its set of deliveries and minute, so a second sweeper in the same minute adds nothing', async () => {
    expect(deliveryJobIds.pendingSweep([3, 1, 2], 17)).toBe(deliveryJobIds.pendingSweep([1, 2, 3], 17));
    expect(deliveryJobIds.pendingSweep([1, 2, 3], 17)).not.toBe(deliveryJobIds.pendingSweep([1, 2, 3], 18));
    expect(deliveryJobIds.pendingSweep([1, 2, 3], 17)).not.toBe(deliveryJobIds.pendingSweep([1, 2], 17));
  });
});
