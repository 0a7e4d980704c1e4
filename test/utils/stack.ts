import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { startSimulator, type SimulatorHandle, type SimulatorOptions } from '../../simulator/simulator.js';
import type { CoreOptions } from '../../src/core/core.module.js';
import { WorkerModule } from '../../src/worker/worker.module.js';
import { startTestApp, type TestApp } from './test-app.js';

export interface Stack extends TestApp {
  sim: SimulatorHandle;
  worker?: INestApplicationContext;
  /** `core`: the worker's own (e.g. a log destination of its own). */
  startWorker(core?: CoreOptions): Promise<INestApplicationContext>;
  stopWorker(): Promise<void>;
}

/**
 * The whole loop on loopback: the simulator (Meta's stand-in), the real API pointed at it, and, when asked,
 * the real worker on the same PostgreSQL, Redis and queue namespace. The simulator's webhooks go to the API.
 */
export async function startStack(
  opts: { worker?: boolean; env?: Record<string, string>; sim?: Partial<SimulatorOptions>; core?: CoreOptions } = {},
): Promise<Stack> {
  const appSecret = 'test-app-secret';
  const sim = await startSimulator({
    appSecret,
    statusDelaysMs: { sent: 20, delivered: 40, read: 60 },
    webhookRetry: { maxAttempts: 3, baseDelayMs: 50 },
    ...opts.sim,
  });
  const app = await startTestApp(
    { UPSTREAM_BASE_URL: sim.baseUrl, WHATSAPP_APP_SECRET: appSecret, ...opts.env },
    opts.core,
  );
  sim.setWebhookUrl(`${app.url}/webhooks/whatsapp`);
  const stack: Stack = {
    ...app,
    sim,
    async startWorker(core?: CoreOptions) {
      const worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(app.config, core), {
        logger: false,
      });
      await worker.init();
      stack.worker = worker;
      return worker;
    },
    async stopWorker() {
      await stack.worker?.close();
      stack.worker = undefined;
    },
    async close() {
      await stack.stopWorker();
      await sim.close();
      await app.close();
    },
  };
  if (opts.worker) await stack.startWorker();
  return stack;
}
