import { AppConfig, ConfigError } from './app-config.js';
import { parseRedisClusterNodes } from './redis-cluster-nodes.js';

const base = {
  DATABASE_URL: 'postgresql://u:p@127.0.0.1:5432/db',
  UPSTREAM_BASE_URL: 'http://127.0.0.1:4010/v25.0/',
  WHATSAPP_APP_SECRET: 'app-secret-123',
  WHATSAPP_VERIFY_TOKEN: 'verify-token-123',
  ENCRYPTION_KEY: 'a'.repeat(64),
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    AppConfig.fromEnv(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('REDIS_URL or REDIS_CLUSTER_NODES', () => {
  it('takes one Redis from REDIS_URL, as before', () => {
    const config = AppConfig.fromEnv({ ...base, REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.redisCluster).toBeNull();
  });

  it('takes a cluster from REDIS_CLUSTER_NODES, an empty REDIS_URL counting as unset', () => {
    const config = AppConfig.fromEnv({
      ...base,
      REDIS_URL: ' ',
      REDIS_CLUSTER_NODES: '127.0.0.1:7000, 127.0.0.1:7001',
    });
    expect(config.redisUrl).toBe('');
    expect(config.redisCluster).toEqual({
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '127.0.0.1', port: 7001 },
      ],
      tls: false,
    });
  });

  it('stops the start with one message when both are set, or neither', () => {
    expect(problemsOf({ ...base, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' })).toEqual(
      [
        'REDIS_URL and REDIS_CLUSTER_NODES are both set: keep REDIS_URL for one Redis, or REDIS_CLUSTER_NODES for a Redis Cluster',
      ],
    );
    expect(problemsOf(base)).toEqual(['REDIS_URL is required (or REDIS_CLUSTER_NODES for a Redis Cluster)']);
  });

  it('reads TLS and credentials from redis:// seeds, and refuses seeds that disagree or do not parse', () => {
    expect(parseRedisClusterNodes('rediss://app:s%40cret@cache-1.example:6379,cache-2.example:6380')).toEqual({
      nodes: [
        { host: 'cache-1.example', port: 6379 },
        { host: 'cache-2.example', port: 6380 },
      ],
      tls: true,
      username: 'app',
      password: 's@cret',
    });
    expect(parseRedisClusterNodes('[::1]:7000').nodes).toEqual([{ host: '::1', port: 7000 }]);
    expect(problemsOf({ ...base, REDIS_CLUSTER_NODES: 'redis://a:1,rediss://b:2' })).toEqual([
      'REDIS_CLUSTER_NODES mixes redis:// and rediss:// seeds: a cluster is reached one way',
    ]);
    expect(problemsOf({ ...base, REDIS_CLUSTER_NODES: 'redis://:x@a:1,redis://:y@b:2' })).toEqual([
      'REDIS_CLUSTER_NODES gives different credentials on different seeds: give one user and password',
    ]);
    expect(problemsOf({ ...base, REDIS_CLUSTER_NODES: '127.0.0.1' })[0]).toMatch(
      /^REDIS_CLUSTER_NODES must be a comma-separated list of host:port/,
    );
    expect(problemsOf({ ...base, REDIS_CLUSTER_NODES: 'http://a:1' })[0]).toMatch(/not redis:\/\/ or rediss:\/\//);
    expect(problemsOf({ ...base, REDIS_CLUSTER_NODES: 'a:70000' })[0]).toMatch(/bad port/);
  });
});
