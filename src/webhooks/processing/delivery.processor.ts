import { Inject, Injectable } from '@nestjs/common';
import { UnrecoverableError } from 'bullmq';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { inTransaction } from '../../core/prisma/sql.js';
import { DeliveryQueue, MAX_PENDING_RERUNS, deliveryJobIds, pendingRerunDelayMs, type DeliveryJobData } from '../delivery-queue.js';
import { classify, isRecord, type EventDraft } from './classify.js';
import { AccountUpdateEffect } from './effects/account-update.effect.js';
import type { EventEffect, StoredEvent } from './effects/event-effect.js';
import { InboundMessageEffect } from './effects/inbound-message.effect.js';
import { STATUS_CHUNK, StatusUpdateEffect, planStatuses, writeStatuses } from './effects/status-update.effect.js';
import { TemplateStatusEffect } from './effects/template-status.effect.js';
import { ProcessingStore } from './processing.store.js';

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
 * re-run only does what is still left. Delivery statuses (most of the traffic) are applied in set-based
 * chunks (StatusUpdateEffect); the rarer kinds one event per transaction.
 */
@Injectable()
export class DeliveryProcessor {
  private readonly effects: EventEffect[];

  constructor(
    private readonly prisma: PrismaService,
    private readonly store: ProcessingStore,
    private readonly queue: DeliveryQueue,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly statuses: StatusUpdateEffect,
    inbound: InboundMessageEffect,
    template: TemplateStatusEffect,
    account: AccountUpdateEffect,
  ) {
    this.effects = [inbound, template, account];
  }

  async process(job: DeliveryJobData, signal?: AbortSignal): Promise<ProcessResult | null> {
    const { deliveryId } = job;
    const delivery = await this.store.findDelivery(deliveryId);
    if (!delivery) {
      this.logger.warn({ deliveryId }, 'webhook delivery not found; nothing to process');
      return null;
    }

    let events = delivery.eventCount ?? 0;
    const first = { inserted: 0, applied: 0, waiting: 0, tried: new Set<number>() };
    if (delivery.status !== 'processed') {
      const drafts = this.classify(deliveryId, delivery.rawBody);
      events = drafts.length;
      await this.storeAndApply(deliveryId, drafts, first, signal);
    }

    const pending = await this.applyPending(deliveryId, delivery.receivedAt, first.tried, signal);
    const applied = first.applied + pending.applied;
    const waiting = first.waiting + pending.waiting;
    const inserted = first.inserted;

    if (delivery.status !== 'processed') {
      if (signal?.aborted) throw new ProcessingAborted('worker stopped');
      await this.store.markProcessed(deliveryId, events);
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
      // PostgreSQL text and jsonb cannot hold NUL nor a lone UTF-16 surrogate (both only reachable through
      // JSON escapes); a payload with one would otherwise never store.
      if (text.includes('\\u0000') || /\\u[dD][89a-fA-F]/.test(text)) payload = storable(payload);
    } catch {
      throw new UnrecoverableError('stored payload is not valid JSON');
    }
    const { drafts, anomalies } = classify(payload);
    if (anomalies.length > 0) this.logger.warn({ deliveryId, anomalies }, 'webhook payload with unexpected shape; stored as classified');
    // The same item twice in one payload is one event.
    const seen = new Set<string>();
    return drafts.filter((d) => !seen.has(d.dedupeKey) && seen.add(d.dedupeKey));
  }

  /**
   * First run: per chunk of items, one transaction locks the messages its statuses concern, stores the items
   * (statuses that can be applied already processed) and applies those statuses: one commit per chunk, and no
   * separate claim. What is left (other kinds, statuses still waiting) goes through applyPending; `tried`
   * holds the waiting ones this run already tried.
   */
  private async storeAndApply(
    deliveryId: number,
    drafts: EventDraft[],
    out: { inserted: number; applied: number; waiting: number; tried: Set<number> },
    signal?: AbortSignal,
  ): Promise<void> {
    for (let i = 0; i < drafts.length; i += STATUS_CHUNK) {
      if (signal?.aborted) throw new ProcessingAborted('worker stopped');
      const chunk = drafts.slice(i, i + STATUS_CHUNK);
      await inTransaction(this.prisma.pool, async (client) => {
        const statuses = chunk.filter((d) => this.statuses.appliesTo(d));
        const plan = await planStatuses(client, statuses);
        const waiting = new Set(plan.waiting);
        const inserted = await this.store.insertEvents(client, deliveryId, chunk, {
          applied: (d) => plan.target.has(d),
          waiting: (d) => waiting.has(d),
        });
        // Items stored before (a redelivery, a duplicate) belong to the delivery that stored them.
        const owned = statuses.filter((d) => plan.target.has(d) && inserted.has(d.dedupeKey));
        await writeStatuses(client, plan, owned.map((d) => Object.assign(d, { createdAt: inserted.get(d.dedupeKey)!.createdAt })));
        out.inserted += inserted.size;
        out.applied += owned.length;
        for (const d of plan.waiting) {
          const row = inserted.get(d.dedupeKey);
          if (!row) continue;
          out.waiting++;
          out.tried.add(row.id);
        }
      });
    }
  }

  private async applyPending(deliveryId: number, receivedAt: Date, tried: Set<number>, signal?: AbortSignal): Promise<{ applied: number; waiting: number }> {
    const pending = (await this.store.pendingEvents(deliveryId, receivedAt)).filter((e) => !tried.has(e.id));

    const statuses: StoredEvent[] = [];
    const withoutEffect: number[] = [];
    let applied = 0;
    let waiting = 0;
    for (const event of pending) {
      if (this.statuses.appliesTo(event)) {
        statuses.push(event);
        continue;
      }
      const effect = this.effects.find((e) => e.appliesTo(event));
      if (!effect) {
        withoutEffect.push(event.id);
        continue;
      }
      if (signal?.aborted) throw new ProcessingAborted('worker stopped');
      const outcome = await this.applyOnce(event, effect);
      if (outcome === 'applied') applied++;
      if (outcome === 'waiting') waiting++;
    }
    if (statuses.length > 0) {
      const outcome = await this.statuses.applyAll(statuses, signal);
      applied += outcome.applied;
      waiting += outcome.waiting;
    }
    if (signal?.aborted) throw new ProcessingAborted('worker stopped');
    applied += await this.store.claimWithoutEffect(withoutEffect);
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

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function storable(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UNSTORABLE, '\uFFFD');
  if (Array.isArray(value)) return value.map(storable);
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k) as string, storable(v)]));
  return value;
}
