import type { AppConfig } from '../../core/config/app-config.js';
import { FeedCursorCodec } from '../../events/feed-cursor.js';
import { MessagesFeedCursors } from './messages-feed-cursors.js';

describe('MessagesFeedCursors', () => {
  const config = { encryptionKeys: [{ id: 'k1', key: Buffer.alloc(32, 1) }] } as unknown as AppConfig;
  const account = '0b6f1f2e-6f0a-4c57-9d0e-5b2f8f6a1c01';

  it("round-trips a position for its business account only, and refuses the events feed's cursors (and vice versa)", () => {
    const messages = new MessagesFeedCursors(config);
    const events = new FeedCursorCodec(config);
    const p = { xid: 9_000_000_001n, id: 2 ** 31 + 5 };
    const cursor = messages.encode(account, p);
    expect(messages.decode(account, cursor)).toEqual(p);
    expect(messages.decode('0b6f1f2e-6f0a-4c57-9d0e-5b2f8f6a1c02', cursor)).toBeUndefined();
    expect(messages.decode(account, events.encode(account, p))).toBeUndefined();
    expect(events.decode(account, cursor)).toBeUndefined();
    expect(messages.decode(account, '0')).toEqual({ xid: 0n, id: 0 });
  });
});
