import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Response } from 'supertest';
import { metaJson } from '../../simulator/meta-json.js';
import { signatureHeader } from '../../simulator/payloads/signature.js';
import type { AppConfig } from '../../src/core/config/app-config.js';
import type { CoreOptions } from '../../src/core/core.module.js';
import { DeliverySweeper } from '../../src/webhooks/processing/delivery.sweeper.js';
import { DeliveryWorker } from '../../src/webhooks/processing/delivery.worker.js';
import { WorkerModule } from '../../src/worker/worker.module.js';
import { poll } from './poll.js';
import type { TestApp } from './test-app.js';

/** The worker process (WorkerModule) started in-process, with the API's config: same database, same queue prefix. */
export interface TestWorker {
  context: INestApplicationContext;
  sweeper: DeliverySweeper;
  /** Graceful stop, as on SIGTERM. */
  close(): Promise<void>;
  /** As if the process died: running jobs stop mid-way and stay locked until another worker takes them over. */
  crash(): Promise<void>;
}

export async function startTestWorker(config: AppConfig, core: CoreOptions = {}): Promise<TestWorker> {
  const context = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, core), { logger: false });
  await context.init();
  let closed = false;
  return {
    context,
    sweeper: context.get(DeliverySweeper),
    close: async () => {
      if (closed) return;
      closed = true;
      await context.close();
    },
    crash: async () => {
      if (closed) return;
      closed = true;
      await context.get(DeliveryWorker).stop({ force: true });
      await context.close();
    },
  };
}

/** Posts a payload as Meta does: serialised with Meta's escaping, signed over exactly those bytes. */
export function postWebhook(
  t: TestApp,
  payload: unknown,
  opts: { signature?: string | null; body?: string } = {},
): Promise<Response> {
  const body = opts.body ?? metaJson(payload);
  let req = t.http.post('/webhooks/whatsapp').set('content-type', 'application/json');
  const signature = opts.signature === undefined ? signatureHeader(body, t.config.whatsappAppSecret) : opts.signature;
  if (signature !== null) req = req.set('x-hub-signature-256', signature);
  return req.send(body);
}

/** Meta's time (unix seconds), now or `offsetSeconds` from now. */
export function unixNow(offsetSeconds = 0): number {
  return Math.floor(Date.now() / 1000) + offsetSeconds;
}

/** Polls until `probe` returns a value other than undefined (or throws with `what` after the timeout; see poll). */
export function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  return poll(probe, { done: (v) => v !== undefined, timeoutMs, intervalMs: 50, what }) as Promise<T>;
}
