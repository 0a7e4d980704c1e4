import { AppConfig } from '../core/config/app-config.js';
import { FEED_START, FeedCursorCodec } from './feed-cursor.js';

describe('FeedCursorCodec', () => {
  const ring = (...keys: number[]) =>
    ({ encryptionKeys: keys.map((k) => ({ id: `k${k}`, key: Buffer.alloc(32, k) })) }) as unknown as AppConfig;
  const codec = (key = 1) => new FeedCursorCodec(ring(key));
  const waba = '310900000000001';

  it('round-trips a position for the account it was minted for; 0 is the start', () => {
    const p = { xid: 18_446_744_073_709_551_615n, id: 2_147_483_647 };
    expect(codec().decode(waba, codec().encode(waba, p))).toEqual(p);
    expect(codec().decode(waba, codec().encode(waba, FEED_START))).toEqual(FEED_START);
    expect(codec().decode(waba, '0')).toEqual(FEED_START);
  });

  it('round-trips 64-bit event ids up to 2^53 - 1, and refuses a position beyond (even with a valid MAC)', () => {
    for (const id of [3_000_000_000, 2 ** 32 + 7, Number.MAX_SAFE_INTEGER]) {
      const p = { xid: 4_294_967_296n, id };
      expect(codec().decode(waba, codec().encode(waba, p))).toEqual(p);
    }
    for (const id of [2 ** 53, 1e17])
      expect(codec().decode(waba, codec().encode(waba, { xid: 1n, id }))).toBeUndefined();
  });

  it('refuses a cursor of another account, of another server key, altered, or malformed', () => {
    const cursor = codec().encode(waba, { xid: 881234n, id: 1042 });
    const [body, mac] = cursor.split('.') as [string, string];
    const altered = `${Buffer.from('v1:881234:1043').toString('base64url')}.${mac}`;
    for (const bad of [
      altered,
      `${body}.${mac}A`,
      `${body}=.${mac}`,
      `${body}`,
      `${cursor}.x`,
      '',
      '00',
      '-1',
      'v1:1:1',
      '1042',
    ]) {
      expect({ bad, position: codec().decode(waba, bad) }).toEqual({ bad, position: undefined });
    }
    expect(codec().decode('310900000000002', cursor)).toBeUndefined();
    expect(codec(2).decode(waba, cursor)).toBeUndefined();
  });

  it('accepts cursors of any key still in the ring, and makes new ones with the newest', () => {
    const old = codec(1).encode(waba, { xid: 5n, id: 6 });
    const rotated = new FeedCursorCodec(ring(2, 1));
    expect(rotated.decode(waba, old)).toEqual({ xid: 5n, id: 6 });
    const fresh = rotated.encode(waba, { xid: 5n, id: 6 });
    expect(fresh).not.toBe(old);
    expect(codec(2).decode(waba, fresh)).toEqual({ xid: 5n, id: 6 });
  });
});
