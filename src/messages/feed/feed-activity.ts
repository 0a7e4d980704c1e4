import { Injectable, type OnModuleInit } from '@nestjs/common';
import { PgListener } from '../../core/db/pg-listener.js';
import { EVENTS_FEED_CHANNEL } from '../../events/feed-waiters.js';

/**
 * What this process has heard on `events_feed` per business account (wabaId): a number that changes with every
 * notification of that account, and with every change of the listening connection. Every write to `messages`
 * notifies at commit (statement triggers of migration conversations; the worker's also through `events`), so
 * while the connection listens, a messages feed whose mark has not changed since its last read has nothing new:
 * the long poll's periodic safety recheck (FeedWaiters, every second per waiter) can skip its query. That keeps
 * 1,000 idle long polls from costing 1,000 feed queries a second. While the connection is down nothing is skipped.
 */
@Injectable()
export class FeedActivity implements OnModuleInit {
  private readonly marks = new Map<string, number>();
  private epoch = 0;
  private listening = false;

  constructor(private readonly listener: PgListener) {}

  onModuleInit(): void {
    this.listener.subscribe(EVENTS_FEED_CHANNEL, {
      notify: (payload) => {
        const wabaId = payload.split(' ')[0];
        if (wabaId) this.marks.set(wabaId, (this.marks.get(wabaId) ?? 0) + 1);
      },
      listening: (on) => {
        this.listening = on;
        this.epoch++;
      },
    });
  }

  /** The account's mark now, or undefined while notifications may be missed (nothing may be skipped then). */
  mark(wabaId: string): string | undefined {
    return this.listening ? `${this.epoch}:${this.marks.get(wabaId) ?? 0}` : undefined;
  }
}
