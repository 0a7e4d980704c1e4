import { inspect } from 'node:util';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { LongPollShares, type LongPollOwner } from '../core/async/long-poll-shares.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { PgListener } from '../core/db/pg-listener.js';
import { EventsRepository } from './events.repository.js';

/** NOTIFYed by the statement trigger on `events` at commit, payload '<waba_id> <xid>' (migration events_feed). */
export const EVENTS_FEED_CHANNEL = 'events_feed';
/** While a notified event is not in the feed yet (an older transaction is still open): how often the horizon is read. */
const HORIZON_POLL_MS = 10;
const HORIZON_STUCK_POLL_MS = 50;
/** Safety nets for notifications never heard: every waiter re-reads its feed this often. */
const RECHECK_LISTENING_MS = 1000;
const RECHECK_DEAF_MS = 150;

/** What one look at the feed found: something to answer with, or the first xid not in the feed yet. */
export interface FeedCheck {
  found: boolean;
  beyond?: bigint;
}

interface Waiter {
  wabaId: string;
  check: () => Promise<FeedCheck>;
  /** The smallest notified (or seen) xid of this account not in the feed yet: re-read once the horizon passes it. */
  pending: bigint | undefined;
  running: boolean;
  again: boolean;
  lastCheck: number;
  finish(err?: unknown): void;
}

/**
 * Long polls of the events feed in one API process. A waiter re-reads its feed when an event of its account
 * may have entered it:
 * - a NOTIFY (any API process hears every commit, whichever worker made it) says account A committed events
 *   in transaction X; they enter the feed once the horizon (oldest running xid) has passed X, normally at
 *   once, later if an older transaction is still open. So the process reads the horizon (one tiny query for
 *   all its waiters, every 10 ms while something is pending) and re-reads a waiter's feed when it has passed;
 * - a read that finds an event committed but not in the feed yet (`beyond`) waits for the horizon likewise;
 * - safety nets: every second anyway, every 150 ms while the notification connection is down.
 * A waiter is registered before its first read, so a commit is either in that read or notified after it.
 * Shutdown and a client that goes away end waits at once.
 */
@Injectable()
export class FeedWaiters implements OnModuleInit, OnModuleDestroy {
  private readonly byAccount = new Map<string, Set<Waiter>>();
  private readonly pending = new Set<Waiter>();
  private size = 0;
  private listening = false;
  private stopped = false;
  private horizonTimer: NodeJS.Timeout | undefined;
  private readingHorizon = false;
  private readAgain = false;
  private lastHorizon = -1n;

  constructor(
    private readonly events: EventsRepository,
    private readonly listener: PgListener,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly shares: LongPollShares,
  ) {}

  /** Long polls waiting in this process now. */
  get waiting(): number {
    return this.size;
  }

  onModuleInit(): void {
    this.listener.subscribe(EVENTS_FEED_CHANNEL, {
      notify: (payload) => this.notified(payload),
      listening: (on) => {
        this.listening = on;
        // Back after an outage: whatever was notified meanwhile is lost, so everyone looks again.
        if (on) for (const set of this.byAccount.values()) for (const w of set) this.run(w);
      },
    });
  }

  onModuleDestroy(): void {
    this.stopped = true;
    clearTimeout(this.horizonTimer);
    for (const set of this.byAccount.values()) for (const w of [...set]) w.finish();
  }

  /**
   * Until `check` finds something, `ms` pass, the signal aborts or the process stops. Resolves either way
   * (the caller reads what `check` last saw); rejects if a check fails. Takes one of the owner's long-poll slots
   * for the wait (LongPollShares: 429 past the organization's or the session's share) and gives it back at the end.
   */
  wait(
    owner: LongPollOwner,
    wabaId: string,
    ms: number,
    signal: AbortSignal | undefined,
    check: () => Promise<FeedCheck>,
  ): Promise<void> {
    if (this.stopped || signal?.aborted) return Promise.resolve();
    const release = this.shares.acquire(owner);
    return new Promise<void>((resolve, reject) => {
      const safety = setInterval(() => {
        if (!this.listening || Date.now() - w.lastCheck >= RECHECK_LISTENING_MS) this.run(w);
      }, RECHECK_DEAF_MS);
      const deadline = setTimeout(() => w.finish(), ms);
      const aborted = () => w.finish();
      let done = false;
      const w: Waiter = {
        wabaId,
        check,
        pending: undefined,
        running: false,
        again: false,
        lastCheck: 0,
        finish: (err) => {
          if (done) return;
          done = true;
          clearInterval(safety);
          clearTimeout(deadline);
          signal?.removeEventListener('abort', aborted);
          this.remove(w);
          release();
          if (err === undefined) resolve();
          else reject(err instanceof Error ? err : new Error(inspect(err)));
        },
      };
      signal?.addEventListener('abort', aborted, { once: true });
      this.add(w);
      this.run(w);
    });
  }

  private add(w: Waiter): void {
    let set = this.byAccount.get(w.wabaId);
    if (!set) this.byAccount.set(w.wabaId, (set = new Set()));
    set.add(w);
    this.size++;
  }

  private remove(w: Waiter): void {
    const set = this.byAccount.get(w.wabaId);
    if (!set?.delete(w)) return;
    this.size--;
    this.pending.delete(w);
    if (set.size === 0) this.byAccount.delete(w.wabaId);
  }

  private notified(payload: string): void {
    const [wabaId, xid] = payload.split(' ');
    const set = wabaId ? this.byAccount.get(wabaId) : undefined;
    if (!set || !xid || !/^\d+$/.test(xid)) return;
    for (const w of set) this.await(w, BigInt(xid));
    this.readHorizon();
  }

  /** Re-read w's feed once the horizon has passed xid. */
  private await(w: Waiter, xid: bigint): void {
    if (w.pending === undefined || xid < w.pending) w.pending = xid;
    this.pending.add(w);
  }

  /** One look at w's feed (never two at once for one waiter; a look asked for meanwhile runs after it). */
  private run(w: Waiter): void {
    if (!this.byAccount.get(w.wabaId)?.has(w)) return;
    if (w.running) {
      w.again = true;
      return;
    }
    w.running = true;
    w.again = false;
    w.lastCheck = Date.now();
    w.check().then(
      (r) => {
        w.running = false;
        if (r.found) return w.finish();
        if (r.beyond !== undefined) {
          this.await(w, r.beyond);
          this.scheduleHorizon(HORIZON_POLL_MS);
        }
        if (w.again) this.run(w);
      },
      (err: unknown) => {
        w.running = false;
        w.finish(err);
      },
    );
  }

  private scheduleHorizon(ms: number): void {
    if (this.horizonTimer || this.stopped) return;
    this.horizonTimer = setTimeout(() => {
      this.horizonTimer = undefined;
      this.readHorizon();
    }, ms);
  }

  /** One horizon read for every pending waiter of the process; those it has passed look at their feed. */
  private readHorizon(): void {
    if (this.readingHorizon) {
      this.readAgain = true;
      return;
    }
    if (this.pending.size === 0 || this.stopped) return;
    this.readingHorizon = true;
    this.readAgain = false;
    this.events.feedHorizon().then(
      (horizon) => {
        for (const w of [...this.pending]) {
          if (w.pending !== undefined && w.pending < horizon) {
            w.pending = undefined;
            this.pending.delete(w);
            this.run(w);
          }
        }
        const moved = horizon !== this.lastHorizon;
        this.lastHorizon = horizon;
        this.afterHorizonRead(moved ? HORIZON_POLL_MS : HORIZON_STUCK_POLL_MS);
      },
      (err: unknown) => {
        this.logger.warn({ err }, 'events feed: reading the horizon failed');
        this.afterHorizonRead(HORIZON_STUCK_POLL_MS);
      },
    );
  }

  private afterHorizonRead(nextMs: number): void {
    this.readingHorizon = false;
    if (this.readAgain) this.readHorizon();
    else if (this.pending.size > 0) this.scheduleHorizon(nextMs);
  }
}
