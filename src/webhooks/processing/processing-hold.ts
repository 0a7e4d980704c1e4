import type { AppLogger } from '../../core/logging/app-logger.js';
import type { Metrics } from '../../core/metrics/metrics.js';
import type { RedisClient } from '../../core/redis/redis-connection.js';
import { PRESSURE_TICK_MS } from '../acks-first.js';

/** What a hold acts on: the webhook deliveries' consumer of this worker process. */
export interface HeldConsumer {
  pause(): Promise<void>;
  resume(): void;
}

/**
 * Worker side: holds its consumer while a receiver says it is saturated (running jobs finish; no new one starts), at
 * most `maxMs` at a time. Held that long, it processes until its queue is drained (`drained()`) or the saturation
 * ends before it holds again, so a long overload still has its deliveries processed, at most `maxMs` later.
 */
export class ProcessingHold {
  private timer?: NodeJS.Timeout;
  private heldSince?: number;
  /** Held for the longest allowed: no new hold before the backlog is drained or the receivers are no longer saturated. */
  private owed = false;
  private looking = false;
  /** Resolved when the hold ends (a job the consumer had already been handed waits for it: `released`). */
  private ended?: { promise: Promise<void>; resolve: () => void };

  constructor(
    private readonly consumer: HeldConsumer,
    private readonly o: { redis: RedisClient; key: string; maxMs: number; logger: AppLogger; metrics: Metrics },
  ) {}

  start(): void {
    if (this.o.maxMs <= 0) return;
    this.timer = setInterval(() => void this.look(), PRESSURE_TICK_MS);
    this.timer.unref();
  }

  /**
   * Resolves at once, or when the hold ends: the job a consumer was already waiting for when it was paused is handed
   * to it all the same (BullMQ's blocking fetch), and waits here.
   */
  released(): Promise<void> {
    return this.ended?.promise ?? Promise.resolve();
  }

  /** The consumer found its queue empty. */
  drained(): void {
    this.owed = false;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.heldSince !== undefined) this.release('stopping');
  }

  private async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      let saturated = false;
      try {
        saturated = (await this.o.redis.exists(this.o.key)) === 1;
      } catch {
        // Redis unreachable: nobody is asking, never hold.
      }
      if (!this.timer) return;
      if (this.heldSince === undefined) {
        if (!saturated) this.owed = false;
        else if (!this.owed) await this.hold();
      } else if (!saturated) {
        this.release('the receivers are no longer saturated');
      } else if (Date.now() - this.heldSince >= this.o.maxMs) {
        this.owed = true;
        this.release('held for WEBHOOK_HOLD_PROCESSING_MAX_MS; processing until the backlog is drained');
      }
    } finally {
      this.looking = false;
    }
  }

  private async hold(): Promise<void> {
    this.heldSince = Date.now();
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.ended = { promise, resolve };
    this.o.logger.info('webhook processing held: a receiver is saturated (acknowledgements first)');
    await this.consumer.pause();
  }

  private release(why: string): void {
    const ms = Date.now() - this.heldSince!;
    this.heldSince = undefined;
    this.o.metrics.processingHeld.inc(ms / 1000);
    this.ended?.resolve();
    this.ended = undefined;
    this.consumer.resume();
    this.o.logger.info({ heldMs: ms }, `webhook processing resumed: ${why}`);
  }
}
