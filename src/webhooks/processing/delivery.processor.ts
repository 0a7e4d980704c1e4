import { Inject, Injectable } from '@nestjs/common';
import { UnrecoverableError } from 'bullmq';
import type { Prisma } from '../../generated/prisma/client.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { DeliveryQueue, MAX_PENDING_RERUNS, deliveryJobIds, pendingRerunDelayMs, type DeliveryJobData } from '../delivery-queue.js';
import { classify, isRecord, type EventDraft } from './classify.js';
import { AccountUpdateEffect } from './effects/account-update.effect.js';
import type { EventEffect, StoredEvent } from './effects/event-effect.js';
import { InboundMessageEffect } from './effects/inbound-message.effect.js';
import { StatusUpdateEffect } from './effects/status-update.effect.js';
import { TemplateStatusEffect } from './effects/template-status.effect.js';

const INSERT_CHUNK = 500;
/** Events are written after their delivery; the margin absorbs clock differences between API and worker hosts. */
const CLOCK_MARGIN_MS = 10 * 60 * 1000;
const EFFECT_TX = { maxWait: 10_000, timeout: 15_000 };

export interface ProcessResult {
  deliveryId: number;
  /** Events this delivery carried (after removing repeats inside the payload). */
  events: number;
  /** Newly stored; fewer than `events` when Meta had delivered some of them before. */
  inserted: number;
  applied: number;
  /** Statuses whose message is not known yet: retried by a delayed re-run. */
  waiting: number;
}

/** Rolls an effect's transaction back (its claim included) when the event has to wait. */
class EventMustWait extends Error {}

/** Thrown between events when the worker is stopped hard; the job stays locked and is retried elsewhere. */
export class ProcessingAborted extends Error {}

/**
 * One webhook delivery: classify the stored raw payload, store one event per item (once, whatever the
 * number of retries, redeliveries or workers), then apply each event's effect exactly once. Idempotent: a
 * re-run only does what is still left.
 */
@Injectable()
export class DeliveryProcessor {
  private readonly effects: EventEffect[];

  constructor(
    private readonly prisma: PrismaService,
    private readonly queue: DeliveryQueue,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    status: StatusUpdateEffect,
    inbound: InboundMessageEffect,
    template: TemplateStatusEffect,
    account: AccountUpdateEffect,
  ) {
    this.effects = [status, inbound, template, account];
  }

  async process(job: DeliveryJobData, signal?: AbortSignal): Promise<ProcessResult | null> {
    const { deliveryId } = job;
    const delivery = await this.prisma.webhookDelivery.findUnique({
      where: { id: deliveryId },
      select: { id: true, status: true, rawBody: true, receivedAt: true, eventCount: true },
    });
    if (!delivery) {
      this.logger.warn({ deliveryId }, 'webhook delivery not found; nothing to process');
      return null;
    }

    let events = delivery.eventCount ?? 0;
    let inserted = 0;
    if (delivery.status !== 'processed') {
      const drafts = this.classify(deliveryId, delivery.rawBody);
      events = drafts.length;
      inserted = await this.store(deliveryId, drafts);
    }

    const { applied, waiting } = await this.applyPending(deliveryId, delivery.receivedAt, signal);

    if (delivery.status !== 'processed') {
      await this.prisma.webhookDelivery.updateMany({
        where: { id: deliveryId, status: { not: 'processed' } },
        data: { status: 'processed', processedAt: new Date(), eventCount: events, lastError: null, attempts: { increment: 1 } },
      });
    }
    if (waiting > 0) await this.scheduleRerun(job, waiting);
    return { deliveryId, events, inserted, applied, waiting };
  }

  /**
   * Records a failed attempt. On the last one (or a permanent error) the delivery becomes a dead letter:
   * status `failed` with the reason, replayable from the console. Deliveries already processed (a failing
   * delayed re-run) are left as they are.
   */
  async recordFailure(deliveryId: number, error: string, final: boolean): Promise<void> {
    await this.prisma.webhookDelivery.updateMany({
      where: { id: deliveryId, status: 'received' },
      data: { attempts: { increment: 1 }, lastError: error.slice(0, 2000), ...(final ? { status: 'failed' } : {}) },
    });
    if (final) this.logger.error({ deliveryId, error }, 'webhook delivery dead-lettered');
  }

  /** For a job that failed without its processor seeing it (stalled too often). */
  async markDeadLetter(deliveryId: number, error: string): Promise<void> {
    const { count } = await this.prisma.webhookDelivery.updateMany({
      where: { id: deliveryId, status: 'received' },
      data: { status: 'failed', lastError: error.slice(0, 2000) },
    });
    if (count > 0) this.logger.error({ deliveryId, error }, 'webhook delivery dead-lettered');
  }

  private classify(deliveryId: number, rawBody: Uint8Array): EventDraft[] {
    let payload: unknown;
    try {
      const text = Buffer.from(rawBody).toString('utf8');
      payload = JSON.parse(text);
      // PostgreSQL text and jsonb cannot hold NUL; a payload that contains one would otherwise never store.
      if (text.includes('\\u0000')) payload = withoutNul(payload);
    } catch {
      throw new UnrecoverableError('stored payload is not valid JSON');
    }
    const { drafts, anomalies } = classify(payload);
    if (anomalies.length > 0) this.logger.warn({ deliveryId, anomalies }, 'webhook payload with unexpected shape; stored as classified');
    // The same item twice in one payload is one event.
    const seen = new Set<string>();
    return drafts.filter((d) => !seen.has(d.dedupeKey) && seen.add(d.dedupeKey));
  }

  /** The unique dedupeKey makes this once-only across Meta's retries, restarts and concurrent workers. */
  private async store(deliveryId: number, drafts: EventDraft[]): Promise<number> {
    let inserted = 0;
    for (let i = 0; i < drafts.length; i += INSERT_CHUNK) {
      const chunk = drafts.slice(i, i + INSERT_CHUNK).map((d) => ({ ...d, deliveryId, raw: d.raw as Prisma.InputJsonObject }));
      const { count } = await this.prisma.event.createMany({ data: chunk, skipDuplicates: true });
      inserted += count;
    }
    return inserted;
  }

  private async applyPending(deliveryId: number, receivedAt: Date, signal?: AbortSignal): Promise<{ applied: number; waiting: number }> {
    // Served by the (processed, created_at) index: only this delivery's still-unprocessed events are read.
    const pending: StoredEvent[] = await this.prisma.event.findMany({
      where: { processed: false, createdAt: { gte: new Date(receivedAt.getTime() - CLOCK_MARGIN_MS) }, deliveryId },
      orderBy: { id: 'asc' },
      select: {
        id: true,
        wabaId: true,
        phoneNumberId: true,
        eventType: true,
        kind: true,
        status: true,
        recipient: true,
        messageId: true,
        upstreamTimestamp: true,
        errorCode: true,
        errorTitle: true,
        errorDetail: true,
        raw: true,
        createdAt: true,
      },
    });

    let applied = 0;
    let waiting = 0;
    const withoutEffect: number[] = [];
    for (const event of pending) {
      if (signal?.aborted) throw new ProcessingAborted('worker stopped');
      const effect = this.effects.find((e) => e.appliesTo(event));
      if (!effect) {
        withoutEffect.push(event.id);
        continue;
      }
      const outcome = await this.applyOnce(event, effect);
      if (outcome === 'applied') applied++;
      if (outcome === 'waiting') waiting++;
    }
    if (withoutEffect.length > 0) {
      const { count } = await this.prisma.event.updateMany({
        where: { id: { in: withoutEffect }, processed: false },
        data: { processed: true, processedAt: new Date() },
      });
      applied += count;
    }
    return { applied, waiting };
  }

  /**
   * The claim (processed=false → true) and the effect commit together: a second worker on the same event
   * blocks on the row, then finds it processed and skips; an effect that fails rolls its claim back.
   */
  private async applyOnce(event: StoredEvent, effect: EventEffect): Promise<'applied' | 'skipped' | 'waiting'> {
    try {
      return await this.prisma.$transaction(async (tx) => {
        const claimed = await tx.$executeRaw`UPDATE events SET processed = true, processed_at = now() WHERE id = ${event.id} AND processed = false`;
        if (claimed === 0) return 'skipped';
        if ((await effect.apply(tx, event)) === 'waiting') throw new EventMustWait();
        return 'applied';
      }, EFFECT_TX);
    } catch (err) {
      if (!(err instanceof EventMustWait)) throw err;
      await this.prisma.event.updateMany({ where: { id: event.id, processed: false }, data: { attempts: { increment: 1 } } });
      return 'waiting';
    }
  }

  /**
   * A status can arrive before the message it concerns has its wamid (the send response is still on its
   * way, or the send timed out). The same delivery runs again later, with growing delays; after the last
   * re-run the events stay unprocessed and visible (statuses of messages sent by other tools never match).
   */
  private async scheduleRerun(job: DeliveryJobData, waiting: number): Promise<void> {
    const rerun = (job.rerun ?? 0) + 1;
    if (rerun > MAX_PENDING_RERUNS) {
      this.logger.info({ deliveryId: job.deliveryId, waiting }, 'statuses left unprocessed: no matching message after the last re-run');
      return;
    }
    await this.queue.enqueue({ deliveryId: job.deliveryId, rerun }, deliveryJobIds.pending(job.deliveryId, rerun), { delayMs: pendingRerunDelayMs(rerun) });
  }
}

function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/\u0000/g, '\uFFFD');
  if (Array.isArray(value)) return value.map(withoutNul);
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(/\u0000/g, '\uFFFD'), withoutNul(v)]));
  return value;
}
