import type { ChannelSubscriber, PgListener } from '../../core/db/pg-listener.js';
import { FeedActivity } from './feed-activity.js';

describe('FeedActivity', () => {
  function setUp() {
    let subscriber!: ChannelSubscriber;
    const listener = { subscribe: (_: string, s: ChannelSubscriber) => (subscriber = s) } as unknown as PgListener;
    const activity = new FeedActivity(listener);
    activity.onModuleInit();
    return { activity, subscriber };
  }

  it("changes an account's mark with each of its notifications only, and says nothing while not listening", () => {
    const { activity, subscriber } = setUp();
    expect(activity.mark('A')).toBeUndefined();
    subscriber.listening(true);
    const a = activity.mark('A');
    const b = activity.mark('B');
    expect(a).toBeDefined();
    subscriber.notify('B 12345');
    expect(activity.mark('A')).toBe(a);
    expect(activity.mark('B')).not.toBe(b);
    subscriber.listening(false);
    expect(activity.mark('A')).toBeUndefined();
  });

  it('changes every mark when the connection comes back (what was missed meanwhile is unknown)', () => {
    const { activity, subscriber } = setUp();
    subscriber.listening(true);
    const a = activity.mark('A');
    subscriber.listening(false);
    subscriber.listening(true);
    expect(activity.mark('A')).not.toBe(a);
  });
});
