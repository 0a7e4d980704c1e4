import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { TooManyAttempts } from '../core/errors/domain-errors.js';
import type { ChannelSubscriber, PgListener } from '../core/db/pg-listener.js';
import type { EventsRepository } from './events.repository.js';
import { LongPollShares } from '../core/async/long-poll-shares.js';
import type { AppConfig } from '../core/config/app-config.js';
import { EVENTS_FEED_CHANNEL, FeedWaiters, type FeedCheck } from './feed-waiters.js';

describe('FeedWaiters', () => {
  const me = { organization: 'org-1', session: 's-1' };
  let horizon = 100n;
  let subscriber!: ChannelSubscriber;
  let waiters: FeedWaiters;
  beforeEach(() => {
    horizon = 100n;
    const listener = {
      subscribe: (channel: string, s: ChannelSubscriber) => channel === EVENTS_FEED_CHANNEL && (subscriber = s),
    } as unknown as PgListener;
    const events = { feedHorizon: () => Promise.resolve(horizon) } as unknown as EventsRepository;
    waiters = new FeedWaiters(
      events,
      listener,
      pino({ level: 'silent' }),
      new LongPollShares({ longPollsPerOrganization: 3, longPollsPerSession: 2 } as AppConfig),
    );
    waiters.onModuleInit();
    subscriber.listening(true);
  });
  afterEach(() => waiters.onModuleDestroy());

  /** A feed that has something once `ready` is true, counting its reads. */
  const feed = (beyond?: bigint) => {
    const state = { ready: false, reads: 0 };
    const check = async (): Promise<FeedCheck> => {
      state.reads++;
      return { found: state.ready, beyond: state.ready ? undefined : beyond };
    };
    return { state, check };
  };

  it('re-reads when a notified transaction of its account has passed the horizon, not before', async () => {
    const { state, check } = feed();
    const started = Date.now();
    const done = waiters.wait(me, 'w1', 10_000, undefined, check);
    await sleep(20);
    expect(state.reads).toBe(1);
    horizon = 120n;
    subscriber.notify('w2 110'); // another account
    subscriber.notify('w1 130'); // not in the feed yet: the horizon is 120
    await sleep(40);
    expect(state.reads).toBe(1);
    state.ready = true;
    horizon = 131n;
    await done;
    expect(state.reads).toBe(2);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('waits for the horizon to pass an event a read saw committed but not in the feed yet', async () => {
    const { state, check } = feed(150n);
    const done = waiters.wait(me, 'w1', 10_000, undefined, check);
    await sleep(40);
    expect(state.reads).toBe(1);
    state.ready = true;
    horizon = 151n;
    await done;
    expect(state.reads).toBe(2);
  });

  it('ends at the deadline, when the client goes away, and on shutdown; refuses the owner past its organization’s or session’s share', async () => {
    const started = Date.now();
    await waiters.wait(me, 'w1', 100, undefined, feed().check);
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);

    const gone = new AbortController();
    const aborted = waiters.wait(me, 'w1', 10_000, gone.signal, feed().check);
    await sleep(10);
    expect(waiters.waiting).toBe(1);
    gone.abort();
    await aborted;
    expect(waiters.waiting).toBe(0);

    // Shares (issue 29, finding 4): 2 per session, 3 per organization here; the greedy one is refused, not the others.
    const many = [
      waiters.wait(me, 'w1', 10_000, undefined, feed().check),
      waiters.wait(me, 'w1', 10_000, undefined, feed().check),
    ];
    expect(() => waiters.wait(me, 'w1', 10_000, undefined, feed().check)).toThrow(
      /Too many long polls open for this session \(at most 2/,
    );
    many.push(waiters.wait({ ...me, session: 's-2' }, 'w1', 10_000, undefined, feed().check));
    expect(() => waiters.wait({ ...me, session: 's-3' }, 'w1', 10_000, undefined, feed().check)).toThrow(
      TooManyAttempts,
    );
    expect(() => waiters.wait({ ...me, session: 's-3' }, 'w1', 10_000, undefined, feed().check)).toThrow(
      /this organization \(at most 3/,
    );
    many.push(waiters.wait({ organization: 'org-2', session: 's-4' }, 'w2', 10_000, undefined, feed().check));
    expect(waiters.waiting).toBe(4);
    waiters.onModuleDestroy();
    await Promise.all(many);
    expect(waiters.waiting).toBe(0);
  });

  it('looks again every 150 ms while its notification connection is down', async () => {
    subscriber.listening(false);
    const { state, check } = feed();
    const done = waiters.wait(me, 'w1', 10_000, undefined, check);
    await sleep(400);
    expect(state.reads).toBeGreaterThanOrEqual(3);
    state.ready = true;
    await done;
  });
});
