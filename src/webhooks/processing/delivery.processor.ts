import { Inject, Injectable } from '@nestjs/common';
import { UnrecoverableError } from 'bullmq';
import { AppConfig } from '../../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../../core/logging/app-logger.js';
import { isMissingPartition } from '../../core/db/partitions.js';
import type { Tx } from '../../core/db/db.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { WebhookDeliveriesRepository, type StoredDelivery } from '../deliveries/webhook-deliveries.repository.js';
import {
  DeliveryQueue,
  MAX_PENDING_RERUNS,
  RERUN_PRIORITY,
  deliveryJobIds,
  pendingRerunDelayMs,
} from '../delivery-queue.js';
import { EventsRepository, type EventRow, type StoredEvent } from '../../events/events.repository.js';
import { classify, isRecord, type EventDraft } from '../../events/classify.js';
import { AccountUpdateEffect } from './effects/account-update.effect.js';
import { CallEffect } from './effects/call.effect.js';
import type { EffectItem, EventEffect, PreparedEffect } from './effects/event-effect.js';
import { InboundMessageEffect } from './effects/inbound-message.effect.js';
import { StatusUpdateEffect } from './effects/status-update.effect.js';
import { TemplateStatusEffect } from './effects/template-status.effect.js';
import { PartitionMaintenance } from '../storage/partition-maintenance.js';
import type {
  PartitionsAhead,
  ProcessingConfig,
  ProcessingDeliveries,
  ProcessingEvents,
  ProcessingUnitOfWork,
  RerunQueue,
} from './processing.ports.js';

/** Events are written after their delivery; the margin absorbs clock differences between API and worker hosts. */
const CLOCK_MARGIN_MS = 10 * 60 * 1000;

export interface ProcessResult {
  deliveryIds: number[];
  /** Items each of them carried, in the order of `deliveryIds`. */
  items: number[];
  /** Events these deliveries carried (after removing repeats inside each payload). */
  events: number;
  /** Newly stored; fewer than `events` when Meta had delivered some of them before. */
  inserted: number;
  applied: number;
  /** Statuses whose message is not known yet: retried by a delayed re-run. */
  waiting: number;
}

/** Thrown between chunks when the worker is stopped hard; the job stays locked and is retried elsewhere. */
export class ProcessingAborted extends Error {}

/** A draft and the delivery it came in. */
type Draft = EventDraft & { deliveryId: number; createdAt?: Date };

/**
 * Webhook deliveries, many at a time: classify each stored raw payload, store one event per item (once,
 * whatever the number of retries, redeliveries or workers), then apply each event's effect exactly once.
 * Idempotent: a re-run only does what is still left.
 *
 * Per chunk of `WEBHOOK_EVENT_CHUNK` items, across the deliveries, one transaction: every effect prepares (statuses
 * lock their messages), the items are stored (those that can be applied already processed; RETURNING tells
 * which this statement inserted: items stored before belong to whoever stored them), and the effects of the
 * inserted ones are applied. One commit per chunk, whatever the kinds. Events stored earlier and still
 * unprocessed (statuses that waited for their message, a run that crashed) are claimed (processed false →
 * true) and applied the same way.
 */
@Injectable()
export class DeliveryProcessor {
  private readonly effects: EventEffect[];

  constructor(
    @Inject(WebhookDeliveriesRepository) private readonly deliveries: ProcessingDeliveries,
    @Inject(EventsRepository) private readonly events: ProcessingEvents,
    @Inject(UnitOfWork) private readonly unitOfWork: ProcessingUnitOfWork,
    @Inject(DeliveryQueue) private readonly queue: RerunQueue,
    @Inject(AppConfig) private readonly config: ProcessingConfig,
    @Inject(PartitionMaintenance) private readonly partitions: PartitionsAhead,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    statuses: StatusUpdateEffect,
    inbound: InboundMessageEffect,
    template: TemplateStatusEffect,
    account: AccountUpdateEffect,
    calls: CallEffect,
  ) {
    // Statuses first: their prepare locks messages, and every chunk locks in the same order.
    this.effects = [statuses, inbound, template, account, calls];
  }

  /**
   * Processes these deliveries together; `rerun` counts the delayed re-runs already made for waiting
   * statuses. Deliveries unknown or dead-lettered are skipped. Throws UnrecoverableError for a batch of one
   * whose payload can never be processed.
   */
  async process(deliveryIds: number[], rerun = 0, signal?: AbortSignal): Promise<ProcessResult> {
    const found = (await this.deliveries.findForProcessing(deliveryIds)).filter((d) => d.status !== 'failed');
    const result: ProcessResult = {
      deliveryIds: found.map((d) => d.id),
      items: [],
      events: 0,
      inserted: 0,
      applied: 0,
      waiting: 0,
    };
    if (found.length === 0) return result;

    const fresh = found.filter((d) => d.status !== 'processed');
    const counts = new Map<number, number>();
    const drafts: Draft[] = [];
    const keys = new Set<string>();
    for (const delivery of fresh) {
      // Processed before and replayed: its bytes went when it was processed, its items are stored (the pass over
      // pending events below finishes any left waiting). Its count stays what it was.
      if (isEmptied(delivery)) {
        counts.set(delivery.id, delivery.eventCount);
        continue;
      }
      const own = this.classify(delivery);
      counts.set(delivery.id, own.length);
      // The same item in two deliveries of the batch (a redelivery) is stored once, by the first.
      for (const d of own) if (!keys.has(d.dedupeKey) && keys.add(d.dedupeKey)) drafts.push(d);
    }
    result.items = found.map((d) => counts.get(d.id) ?? d.eventCount ?? 0);
    result.events = result.items.reduce((sum, n) => sum + n, 0);

    const waitingIn = new Set<number>();
    const tried = new Set<number>();
    const done = fresh.map((d) => ({ id: d.id, events: counts.get(d.id)! }));
    // While every item this run stores is new (and no delivery is a processed one replayed), no earlier run stored any
    // of these deliveries' items, so none of theirs can be left unprocessed: the last chunk then marks the deliveries
    // processed in its own transaction and the pass over pending events is skipped.
    let allNew = rerun === 0 && fresh.length === found.length && !fresh.some(isEmptied);
    let finished = false;
    // Items per transaction (WEBHOOK_EVENT_CHUNK): bounds how long rows stay locked, and what a crash undoes.
    const size = this.config.webhookEventChunk;
    for (let i = 0; i < drafts.length; i += size) {
      if (signal?.aborted) throw new ProcessingAborted('worker stopped');
      const chunk = drafts.slice(i, i + size);
      const last = i + size >= drafts.length;
      const outcome = await this.storing(async (tx) => {
        const stored = await this.storeAndApply(tx, chunk);
        allNew &&= stored.inserted === chunk.length;
        if (last && allNew) {
          if (signal?.aborted) throw new ProcessingAborted('worker stopped');
          await this.deliveries.markProcessed(done, tx);
          finished = true;
        }
        return stored;
      });
      result.inserted += outcome.inserted;
      result.applied += outcome.applied;
      result.waiting += outcome.waiting.length;
      for (const w of outcome.waiting) {
        waitingIn.add(w.deliveryId);
        tried.add(w.id);
      }
    }

    if (!finished) {
      const since = new Date(Math.min(...found.map((d) => d.receivedAt.getTime())) - CLOCK_MARGIN_MS);
      const pending = (await this.events.pendingOf(result.deliveryIds, since)).filter((e) => !tried.has(e.id));
      for (let i = 0; i < pending.length; i += size) {
        if (signal?.aborted) throw new ProcessingAborted('worker stopped');
        const outcome = await this.unitOfWork.run((tx) => this.claimAndApply(tx, pending.slice(i, i + size)));
        result.applied += outcome.applied;
        result.waiting += outcome.waiting.length;
        for (const w of outcome.waiting) waitingIn.add(w.deliveryId);
      }
      if (signal?.aborted) throw new ProcessingAborted('worker stopped');
      // Into the weekly table: like a chunk, it may find no partition (made, then once more).
      if (done.length > 0) await this.storing((tx) => this.deliveries.markProcessed(done, tx));
    }
    if (waitingIn.size > 0) await this.scheduleRerun([...waitingIn], rerun);
    return result;
  }

  /**
   * A chunk's transaction. When its events find no partition (the maintenance task has not run for weeks), nothing
   * of it was stored: the partitions are made and the chunk runs once more; should that fail too, the job fails
   * and is retried like any other failure.
   */
  private async storing<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.unitOfWork.run(work);
    } catch (err) {
      if (!isMissingPartition(err)) throw err;
      this.logger.error(
        { err },
        'no storage partition for the events being stored; creating the partitions and retrying the chunk',
      );
      await this.partitions.ensureAhead();
      return this.unitOfWork.run(work);
    }
  }

  /** A failed attempt; on the last one (or a permanent error) the deliveries become dead letters. */
  async recordFailure(deliveryIds: number[], error: string, final: boolean): Promise<void> {
    await this.deliveries.recordFailure(deliveryIds, error, final);
    if (final) this.logger.error({ deliveryIds, error }, 'webhook deliveries dead-lettered');
  }

  /** For a job that failed without its processor seeing it (stalled too often). */
  /** Returns how many of them this call dead-lettered. */
  async markDeadLetter(deliveryIds: number[], error: string): Promise<number> {
    const changed = await this.deliveries.markDeadLetter(deliveryIds, error);
    if (changed.length > 0) this.logger.error({ deliveryIds: changed, error }, 'webhook deliveries dead-lettered');
    return changed.length;
  }

  /** First run of a chunk: prepare, store (applicable ones already processed), apply what this statement inserted. */
  private async storeAndApply(
    tx: Tx,
    chunk: Draft[],
  ): Promise<{ inserted: number; applied: number; waiting: { id: number; deliveryId: number }[] }> {
    const { prepared, waiting } = await this.prepare(tx, chunk);
    // The chunk's own drafts, marked in place: a spread copy of a 20-field draft costs more than storing it.
    const rows: EventRow[] = chunk.map((d) =>
      Object.assign(d, { processed: !waiting.has(d), attempts: waiting.has(d) ? 1 : 0 }),
    );
    const inserted = await this.events.insert(tx, rows);
    const owned = new Set<Draft>();
    for (const d of chunk) {
      const row = inserted.get(d.dedupeKey);
      if (!row) continue;
      d.createdAt = row.createdAt;
      if (!waiting.has(d)) owned.add(d);
    }
    await this.apply(prepared, owned);
    const waited = chunk
      .filter((d) => waiting.has(d) && inserted.has(d.dedupeKey))
      .map((d) => ({ id: inserted.get(d.dedupeKey)!.id, deliveryId: d.deliveryId }));
    return { inserted: inserted.size, applied: owned.size, waiting: waited };
  }

  /** A later run: prepare, claim the ready stored events (a concurrent job may have them), apply those claimed. */
  private async claimAndApply(tx: Tx, chunk: StoredEvent[]): Promise<{ applied: number; waiting: StoredEvent[] }> {
    const { prepared, waiting } = await this.prepare(tx, chunk);
    const claimed = await this.events.claim(
      tx,
      chunk.filter((e) => !waiting.has(e)),
    );
    const owned = new Set(chunk.filter((e) => claimed.has(e.id)));
    await this.apply(prepared, owned);
    const waited = chunk.filter((e) => waiting.has(e));
    await this.events.countWait(tx, waited);
    return { applied: owned.size, waiting: waited };
  }

  private async prepare<T extends EffectItem>(
    tx: Tx,
    chunk: T[],
  ): Promise<{ prepared: [PreparedEffect<T>, T[]][]; waiting: Set<T> }> {
    const prepared: [PreparedEffect<T>, T[]][] = [];
    const waiting = new Set<T>();
    const taken = new Set<T>();
    for (const effect of this.effects) {
      const mine = chunk.filter((item) => !taken.has(item) && effect.appliesTo(item));
      if (mine.length === 0) continue;
      for (const item of mine) taken.add(item);
      const ready = await effect.prepare(tx, mine);
      for (const w of ready.waiting) waiting.add(w);
      prepared.push([ready, mine]);
    }
    return { prepared, waiting };
  }

  private async apply<T extends EffectItem>(prepared: [PreparedEffect<T>, T[]][], owned: Set<T>): Promise<void> {
    for (const [effect, mine] of prepared) {
      const ours = mine.filter((item) => owned.has(item));
      if (ours.length > 0) await effect.apply(ours);
    }
  }

  private classify(delivery: StoredDelivery): Draft[] {
    let payload: unknown;
    try {
      const text = Buffer.from(delivery.rawBody).toString('utf8');
      payload = JSON.parse(text);
      // PostgreSQL text and jsonb cannot hold NUL nor a lone UTF-16 surrogate (both only reachable through
      // JSON escapes); a payload with one would otherwise never store.
      if (text.includes('\\u0000') || /\\u[dD][89a-fA-F]/.test(text)) payload = storable(payload);
    } catch {
      throw new UnprocessablePayload(delivery.id, 'stored payload is not valid JSON');
    }
    const { drafts, anomalies } = classify(payload);
    if (anomalies.length > 0)
      this.logger.warn(
        { deliveryId: delivery.id, anomalies },
        'webhook payload with unexpected shape; stored as classified',
      );
    // The same item twice in one payload is one event.
    const seen = new Set<string>();
    // classify() made these objects for this call alone: the delivery id is added in place, not by a copy.
    return drafts
      .filter((d) => !seen.has(d.dedupeKey) && seen.add(d.dedupeKey))
      .map((d) => Object.assign(d, { deliveryId: delivery.id }));
  }

  /**
   * A status can arrive before the message it concerns has its wamid (the send response is still on its
   * way, or the send timed out). Those deliveries run again later, with growing delays; after the last
   * re-run the events stay unprocessed and visible (statuses of messages sent by other tools never match).
   */
  private async scheduleRerun(deliveryIds: number[], previous: number): Promise<void> {
    const rerun = previous + 1;
    if (rerun > MAX_PENDING_RERUNS) {
      this.logger.info({ deliveryIds }, 'statuses left unprocessed: no matching message after the last re-run');
      return;
    }
    await this.queue.enqueue({ deliveryIds, rerun }, deliveryJobIds.pending(deliveryIds, rerun), {
      delayMs: pendingRerunDelayMs(rerun),
      priority: RERUN_PRIORITY.delayed,
    });
  }
}

/**
 * A delivery processed before (its count set) whose bytes are gone: emptied by the processing (its items are in
 * `events`) or by the content retention. A delivery as received always has its bytes.
 */
function isEmptied(d: StoredDelivery): d is StoredDelivery & { eventCount: number } {
  return d.rawBody.length === 0 && d.eventCount !== null;
}

/** A delivery whose stored payload can never be processed: a dead letter at once (permanent). */
export class UnprocessablePayload extends UnrecoverableError {
  constructor(
    readonly deliveryId: number,
    message: string,
  ) {
    super(message);
  }
}

/** Lone surrogates (not valid Unicode); NUL is replaced on its own (a control character in a pattern reads as a typo). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function storable(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
  if (Array.isArray(value)) return value.map(storable);
  if (isRecord(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k) as string, storable(v)]));
  return value;
}
