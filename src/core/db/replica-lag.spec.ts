import { parseLsn, ReplicaLag } from './replica-lag.js';

describe('parseLsn', () => {
  it('orders WAL positions across the high word', () => {
    expect(parseLsn('0/16B3740')).toBe(0x16b3740n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
    expect(() => parseLsn('nonsense')).toThrow(/not a WAL position/);
  });
});

describe('ReplicaLag', () => {
  it('is no lag on an idle primary, however long since the last transaction', () => {
    const lag = new ReplicaLag();
    for (let t = 0; t < 60_000; t += 1000) {
      lag.primaryAt(parseLsn('0/5000'), t);
      expect(lag.replayedTo(parseLsn('0/5000'), t + 10)).toBe(0);
    }
  });

  it('grows from the first position the standby has not replayed, and drops once it has', () => {
    const lag = new ReplicaLag();
    lag.primaryAt(parseLsn('0/5000'), 0);
    expect(lag.replayedTo(parseLsn('0/5000'), 5)).toBe(0);
    lag.primaryAt(parseLsn('0/6000'), 1000);
    expect(lag.replayedTo(parseLsn('0/5000'), 1005)).toBe(5);
    lag.primaryAt(parseLsn('0/7000'), 2000);
    lag.primaryAt(parseLsn('0/7000'), 3000);
    expect(lag.replayedTo(parseLsn('0/5000'), 3005)).toBe(2005);
    expect(lag.replayedTo(parseLsn('0/6000'), 3010)).toBe(1010);
    expect(lag.replayedTo(parseLsn('0/7000'), 3020)).toBe(0);
  });

  it('keeps the oldest unreplayed position when it thins out its samples', () => {
    const lag = new ReplicaLag();
    for (let i = 1; i <= 5000; i++) lag.primaryAt(BigInt(i), i * 1000);
    expect(lag.replayedTo(0n, 5_000_000)).toBe(4_999_000);
  });
});
