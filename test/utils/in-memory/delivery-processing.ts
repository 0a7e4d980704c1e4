import pino from 'pino';
import type { DeliveryJobData } from '../../../src/webhooks/delivery-queue.js';
import { DeliveryProcessor } from '../../../src/webhooks/processing/delivery.processor.js';
import { AccountUpdateEffect } from '../../../src/webhooks/processing/effects/account-update.effect.js';
import { CallEffect } from '../../../src/webhooks/processing/effects/call.effect.js';
import { InboundMessageEffect } from '../../../src/webhooks/processing/effects/inbound-message.effect.js';
import { StatusUpdateEffect } from '../../../src/webhooks/processing/effects/status-update.effect.js';
import { TemplateStatusEffect } from '../../../src/webhooks/processing/effects/template-status.effect.js';
import type { PartitionsAhead, RerunQueue } from '../../../src/webhooks/processing/processing.ports.js';
import { metaJson } from '../../../simulator/meta-json.js';
import { MemoryDatabase } from './memory-database.js';
import {
  MemoryAccounts,
  MemoryBlocked,
  MemoryDeliveries,
  MemoryEvents,
  MemoryMessages,
  MemoryNumbers,
  MemoryPreferences,
  MemoryTemplates,
  MemoryWindows,
} from './repositories.js';

/** The delivery queue: remembers the jobs the processor adds (its delayed re-runs). */
export class MemoryQueue implements RerunQueue {
  readonly jobs: { data: DeliveryJobData; jobId: string; delayMs?: number }[] = [];

  enqueue(data: DeliveryJobData, jobId: string, opts: { delayMs?: number } = {}): Promise<void> {
    this.jobs.push({ data, jobId, delayMs: opts.delayMs });
    return Promise.resolve();
  }
}

/** Partition maintenance: counts the times it was asked to make partitions. */
export class MemoryPartitions implements PartitionsAhead {
  made = 0;

  ensureAhead(): ReturnType<PartitionsAhead['ensureAhead']> {
    this.made++;
    const now = new Date();
    return Promise.resolve({
      until: { events: now, webhook_deliveries: now },
      created: { events: 0, webhook_deliveries: 0 },
    });
  }
}

/**
 * The worker's DeliveryProcessor with its real effects, over in-memory repositories: what WebhooksWorkerModule
 * wires, without PostgreSQL or Redis. `chunk` is WEBHOOK_EVENT_CHUNK (items per transaction).
 */
export function processingOverMemory(opts: { chunk?: number } = {}) {
  const db = new MemoryDatabase();
  const deliveries = new MemoryDeliveries(db);
  const events = new MemoryEvents(db);
  const messages = new MemoryMessages(db);
  const windows = new MemoryWindows(db);
  const templates = new MemoryTemplates(db);
  const accounts = new MemoryAccounts(db);
  const numbers = new MemoryNumbers(db);
  const preferences = new MemoryPreferences(db);
  const blocked = new MemoryBlocked(db);
  const queue = new MemoryQueue();
  const partitions = new MemoryPartitions();
  const logger = pino({ level: 'silent' });
  const processor = new DeliveryProcessor(
    deliveries,
    events,
    db,
    queue,
    { webhookEventChunk: opts.chunk ?? 500 },
    partitions,
    logger,
    new StatusUpdateEffect(messages, preferences),
    new InboundMessageEffect(windows, messages, preferences, blocked),
    new TemplateStatusEffect(templates),
    new AccountUpdateEffect(accounts, numbers, preferences, logger),
    new CallEffect(windows),
  );
  /** What the receiver does with Meta's POST (its signature checked): stores the bytes as Meta serialised them; returns the delivery id. */
  const receive = (payload: unknown, receivedAt?: Date): number =>
    deliveries.receive(Buffer.from(metaJson(payload)), receivedAt);
  return {
    processor,
    db,
    deliveries,
    events,
    messages,
    windows,
    templates,
    accounts,
    numbers,
    preferences,
    blocked,
    queue,
    partitions,
    receive,
  };
}
