import { TooManyAttempts } from '../errors/domain-errors.js';
import { SlotQuota } from './slot-quota.js';

describe('SlotQuota', () => {
  const quota = () => new SlotQuota({ total: 5, per: { organization: 3, session: 2 }, what: 'long polls' });

  it('refuses the owner past its share (429 naming the share) while others still get slots', () => {
    const q = quota();
    q.acquire({ organization: 'a', session: 's1' });
    q.acquire({ organization: 'a', session: 's1' });
    expect(() => q.acquire({ organization: 'a', session: 's1' })).toThrow(/this session/);
    q.acquire({ organization: 'a', session: 's2' });
    const err = (() => {
      try {
        q.acquire({ organization: 'a', session: 's3' });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TooManyAttempts);
    expect((err as TooManyAttempts).message).toMatch(/this organization \(at most 3/);
    expect((err as TooManyAttempts).retryAfterSeconds).toBe(1);
    expect(() => q.acquire({ organization: 'b', session: 's4' })).not.toThrow();
    expect(q.size).toBe(4);
  });

  it('keeps the total as a backstop, and gives slots back once (release twice is harmless)', () => {
    const q = quota();
    const releases = ['a', 'b', 'c', 'd', 'e'].map((o) => q.acquire({ organization: o, session: o }));
    expect(() => q.acquire({ organization: 'f', session: 'f' })).toThrow(/on this server/);
    releases[0]!();
    releases[0]!();
    expect(q.size).toBe(4);
    expect(q.heldBy('organization', 'a')).toBe(0);
    expect(() => q.acquire({ organization: 'f', session: 'f' })).not.toThrow();
    expect(() => q.acquire({ organization: 'g', session: 'g' })).toThrow(/on this server/);
  });
});
