import { groupedKey, queueKeyPrefix } from './redis-keys.js';

const single = { queuePrefix: 'bmapi', redisCluster: null };
const cluster = { queuePrefix: 'bmapi', redisCluster: { nodes: [{ host: '127.0.0.1', port: 7000 }], tls: false } };

describe('Redis key names', () => {
  it('are those of earlier releases on one Redis, so an upgrade finds its queued jobs and buckets', () => {
    expect(queueKeyPrefix(single)).toBe('bmapi');
    expect(groupedKey(single, 'pace:123', 'pace:123:next')).toBe('bmapi:pace:123:next');
    expect(groupedKey(single, 'rate:account:9', 'rate:key-1')).toBe('bmapi:rate:key-1');
  });

  it('carry one hash tag per group on a cluster, ahead of any user input', () => {
    expect(queueKeyPrefix(cluster)).toBe('{bmapi}');
    expect(groupedKey(cluster, 'login', 'login:email:{evil}@example.test')).toBe(
      'bmapi:{login}:login:email:{evil}@example.test',
    );
    expect(() => groupedKey(cluster, 'a}b', 'x')).toThrow(/braces/);
  });
});
