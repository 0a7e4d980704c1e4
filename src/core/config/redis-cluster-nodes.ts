import type { EnvReader } from './env-reader.js';

/** One seed of REDIS_CLUSTER_NODES: the client learns the rest of the cluster from it. */
export interface RedisClusterNode {
  host: string;
  port: number;
}

/** REDIS_CLUSTER_NODES parsed: the seeds, and what every node's connection shares (TLS, credentials). */
export interface RedisCluster {
  nodes: RedisClusterNode[];
  tls: boolean;
  username?: string;
  password?: string;
}

/**
 * Parses `host:port,host:port` or `redis://[user:password@]host:port,…` (`rediss://` for TLS; the forms may be mixed).
 * A cluster's nodes share one TLS setting and one set of credentials: seeds that disagree are refused rather than
 * one of them silently winning. Throws an Error whose message says what is wrong (EnvReader.parsed names the variable).
 */
export function parseRedisClusterNodes(value: string): RedisCluster {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new Error('must list at least one host:port');
  const seeds = items.map(parseSeed);
  const schemes = new Set(seeds.flatMap((s) => (s.tls === undefined ? [] : [s.tls])));
  if (schemes.size > 1) throw new Error('mixes redis:// and rediss:// seeds: a cluster is reached one way');
  const credentials = new Set(seeds.filter((s) => s.password || s.username).map((s) => `${s.username}\n${s.password}`));
  if (credentials.size > 1)
    throw new Error('gives different credentials on different seeds: give one user and password');
  const withCredentials = seeds.find((s) => s.password || s.username);
  return {
    nodes: seeds.map(({ host, port }) => ({ host, port })),
    tls: schemes.has(true),
    ...(withCredentials?.username ? { username: withCredentials.username } : {}),
    ...(withCredentials?.password ? { password: withCredentials.password } : {}),
  };
}

interface Seed extends RedisClusterNode {
  /** undefined: a bare host:port, which takes the scheme of the others. */
  tls?: boolean;
  username?: string;
  password?: string;
}

function parseSeed(item: string): Seed {
  if (item.includes('://')) {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new Error(`has a seed that is not a valid URL ("${item}")`);
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
      throw new Error(`has a seed that is not redis:// or rediss:// ("${url.protocol}//…")`);
    if (!url.hostname || !url.port) throw new Error(`has a seed without host and port ("${url.host}")`);
    return {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: portOf(url.port, item),
      tls: url.protocol === 'rediss:',
      username: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    };
  }
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d+)$/.exec(item);
  if (!m) throw new Error(`must be a comma-separated list of host:port or redis://host:port (got "${item}")`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: portOf(m[2]!, item) };
}

function portOf(text: string, item: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`has a seed with a bad port ("${item}")`);
  return port;
}

/**
 * REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster): exactly one. Both set stops the start with one
 * message rather than one of them silently winning; the scripts (dev.sh, test.sh) generate no REDIS_URL when
 * REDIS_CLUSTER_NODES is given, so a given cluster never meets a generated default.
 */
export function readRedisTarget(r: EnvReader): { redisUrl: string; redisCluster: RedisCluster | null } {
  const hasUrl = r.has('REDIS_URL');
  const hasNodes = r.has('REDIS_CLUSTER_NODES');
  if (hasUrl && hasNodes) {
    r.problem(
      'REDIS_URL and REDIS_CLUSTER_NODES are both set: keep REDIS_URL for one Redis, or REDIS_CLUSTER_NODES for a Redis Cluster',
    );
    return { redisUrl: '', redisCluster: null };
  }
  if (!hasNodes) {
    if (!hasUrl) r.problem('REDIS_URL is required (or REDIS_CLUSTER_NODES for a Redis Cluster)');
    return { redisUrl: hasUrl ? r.url('REDIS_URL', ['redis:', 'rediss:']) : '', redisCluster: null };
  }
  return { redisUrl: '', redisCluster: r.parsed('REDIS_CLUSTER_NODES', null, parseRedisClusterNodes) };
}
