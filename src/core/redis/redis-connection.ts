import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { AppConfig } from '../config/app-config.js';

/** A connection to one Redis or to a Redis Cluster: the commands, scripts and BullMQ work on either. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: REDIS_URL, or REDIS_CLUSTER_NODES (then the URL is empty). */
export type RedisEndpoint = Pick<AppConfig, 'redisUrl'> & Partial<Pick<AppConfig, 'redisCluster'>>;

export interface ConnectionOptions {
  /**
   * Request-path clients: a command fails at once while Redis (or the master of its slot) is unreachable, so an HTTP
   * request never waits on Redis. Otherwise (BullMQ workers, the scheduler) commands wait for Redis: blocking
   * commands need maxRetriesPerRequest null.
   */
  failFast: boolean;
  /** Commands issued in the same tick by concurrent requests (rate limits, mostly) go out in one write. */
  autoPipelining?: boolean;
}

const CONNECT_TIMEOUT_MS = 2000;
const retryDelay = (times: number) => Math.min(times * 200, 2000);

/** The one place a Redis connection is made: every client of the API and the worker comes from here. */
export function createRedisConnection(endpoint: RedisEndpoint, opts: ConnectionOptions): RedisClient {
  const nodeOptions: RedisOptions = {
    maxRetriesPerRequest: opts.failFast ? 1 : null,
    enableOfflineQueue: !opts.failFast,
    connectTimeout: CONNECT_TIMEOUT_MS,
  };
  const client: RedisClient = endpoint.redisCluster
    ? new Cluster(endpoint.redisCluster.nodes, clusterOptions(endpoint.redisCluster, nodeOptions, opts))
    : new Redis(endpoint.redisUrl, {
        ...nodeOptions,
        enableAutoPipelining: opts.autoPipelining ?? false,
        retryStrategy: retryDelay,
      });
  // Connection errors are reported through readiness and the callers; don't crash on 'error' events.
  client.on('error', () => undefined);
  return client;
}

function clusterOptions(
  cluster: NonNullable<AppConfig['redisCluster']>,
  nodeOptions: RedisOptions,
  opts: ConnectionOptions,
): ClusterOptions {
  return {
    // Replicas are for failover, not reads: a read from a replica may miss a write just made (a rate-limit bucket).
    scaleReads: 'master',
    enableOfflineQueue: !opts.failFast,
    enableAutoPipelining: opts.autoPipelining ?? false,
    // While the cluster as a whole is unreachable, try again at the same pace as one Redis; never give up.
    clusterRetryStrategy: retryDelay,
    // A master gone (failover under way): the command is retried on the refreshed slot map every 300 ms, up to 8
    // times on the request path (about the 2–3 s a replica takes to be promoted with a short cluster-node-timeout),
    // then it fails and the caller answers as for a Redis outage. Workers keep retrying.
    retryDelayOnFailover: 300,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 300,
    maxRedirections: opts.failFast ? 8 : 64,
    slotsRefreshTimeout: CONNECT_TIMEOUT_MS,
    redisOptions: {
      ...nodeOptions,
      ...(cluster.username ? { username: cluster.username } : {}),
      ...(cluster.password ? { password: cluster.password } : {}),
      ...(cluster.tls ? { tls: {} } : {}),
    },
    // Managed clusters with TLS announce addresses whose certificates name the host the client asked for.
    ...(cluster.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
  };
}
