// The topology of a hosted deployment, on this machine (`./scripts/dev.sh --scaled`, the scaled fault suite,
// `BENCH_TOPOLOGY=scaled`): a PostgreSQL primary with one streaming replica, PgBouncer in transaction pooling in front
// of the primary, and a Redis Cluster of 3 masters and 3 replicas; or what the environment gives (DATABASE_URL,
// REDIS_URL / REDIS_CLUSTER_NODES), used as it is. docs/operations-and-scaling.md draws it.
import fs from 'node:fs';
import path from 'node:path';
import { PgBouncer, stopStalePgBouncer } from './pgbouncer.js';
import { Postgres, stopStalePostgres, useGivenPostgres } from './postgres.js';
import { PostgresReplica } from './postgres-replica.js';
import { maskUrl, secs } from './process.js';
import { RedisCluster, stopStaleRedisCluster } from './redis-cluster.js';
import { useGivenRedis } from './redis.js';

type Log = (msg: string) => void;

export interface ScaledOptions {
  dir: string;
  dbName: string;
  extraDbs: string[];
  env: NodeJS.ProcessEnv;
  /** Extra settings of the primary (the replica takes the same). */
  postgresSettings: string[];
  log: Log;
}

export interface ScaledServices {
  /** What the service's statements use: the pooler (or the given DATABASE_URL). */
  databaseUrl: string;
  /** PostgreSQL itself: migrations, LISTEN, set-up. */
  directUrl: string;
  /** The streaming replica (empty when DATABASE_URL is given without DATABASE_READ_URL). */
  readUrl: string;
  /** The extra databases, on the primary itself (set-up work, not the service's). */
  extraUrls: Record<string, string>;
  /** REDIS_CLUSTER_NODES, or empty when a REDIS_URL is given. */
  redisClusterNodes: string;
  redisUrl: string;
  primary?: Postgres;
  replica?: PostgresReplica;
  pooler?: PgBouncer;
  cluster?: RedisCluster;
  readyLines: string[];
  /** KEY=VALUE pairs for the API and the worker (services.env). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** The replica's own state directory. */
const replicaDir = (dir: string) => path.join(dir, 'replica');

/** Leftovers of an earlier scaled run in `dir`. */
export async function stopStaleScaled(dir: string): Promise<string[]> {
  return [
    ...(await stopStalePgBouncer(dir)),
    ...(await stopStalePostgres(replicaDir(dir))),
    ...(await stopStaleRedisCluster(dir)),
  ];
}

export async function startScaled(o: ScaledOptions): Promise<ScaledServices> {
  const { log, env } = o;
  const givenDb = env.DATABASE_URL?.trim() || null;
  const givenRedis = env.REDIS_URL?.trim() || null;
  const givenCluster = env.REDIS_CLUSTER_NODES?.trim() || null;
  fs.mkdirSync(o.dir, { recursive: true });
  const stale = await stopStaleScaled(o.dir);
  if (stale.length) log(`stopped leftovers of a previous scaled run: ${stale.join(', ')}`);

  const primary = givenDb ? undefined : new Postgres({ dir: o.dir, settings: o.postgresSettings, log });
  const replica = primary
    ? new PostgresReplica({ dir: replicaDir(o.dir), primary, settings: o.postgresSettings, log })
    : undefined;
  const cluster = givenRedis || givenCluster ? undefined : new RedisCluster({ dir: o.dir, log });
  let pooler: PgBouncer | undefined;
  const stop = async () => {
    await cluster?.stop();
    await pooler?.stop();
    await replica?.stop();
    await primary?.stop();
  };

  const startPg = async (): Promise<{ lines: string[]; extraUrls: Record<string, string> }> => {
    const t = Date.now();
    if (givenDb)
      return {
        extraUrls: await useGivenPostgres(env.DATABASE_DIRECT_URL?.trim() || givenDb, o.extraDbs, log),
        lines: [`postgres: using DATABASE_URL ${maskUrl(givenDb)} (reachable, ${secs(Date.now() - t)})`],
      };
    await primary!.start();
    await primary!.ensureDatabases([o.dbName, ...o.extraDbs]);
    const lines = [
      `postgres ${primary!.version} primary ready on 127.0.0.1:${primary!.port} (db ${o.dbName}; data ${primary!.dataDir}; ${secs(Date.now() - t)})`,
    ];
    const tr = Date.now();
    await replica!.start();
    lines.push(`postgres streaming replica ready on 127.0.0.1:${replica!.port} (${secs(Date.now() - tr)})`);
    const tp = Date.now();
    pooler = new PgBouncer({
      dir: o.dir,
      upstreamUrl: primary!.url(o.dbName),
      preparedStatements: true,
      // Every client connection the topology can open (2 APIs × 1.5 × DATABASE_POOL_SIZE + 2 workers × it, at the
      // default 10) gets a server connection: at 20, the receivers' INSERTs queued behind the workers' transactions
      // (single-status ingest 58–70 % of one PostgreSQL's, 77–83 % at 50; bench history of 2026-12-02).
      poolSize: 50,
      log,
    });
    await pooler.start();
    lines.push(
      `pgbouncer ${pooler.version} ready on 127.0.0.1:${pooler.port} (transaction pooling before the primary, ${pooler.keepsPrepared ? 'prepared statements kept' : 'no prepared statements: unnamed'}; ${secs(Date.now() - tp)})`,
    );
    return { lines, extraUrls: Object.fromEntries(o.extraDbs.map((n) => [n, primary!.url(n)])) };
  };
  const startRedis = async (): Promise<string> => {
    const t = Date.now();
    if (givenCluster) return `redis: using REDIS_CLUSTER_NODES ${givenCluster}`;
    if (givenRedis) {
      await useGivenRedis(givenRedis, log);
      return `redis: using REDIS_URL ${maskUrl(givenRedis)} (PONG, ${secs(Date.now() - t)})`;
    }
    await cluster!.start();
    return `redis cluster: REDIS_CLUSTER_NODES=${cluster!.seeds} (${secs(Date.now() - t)})`;
  };
  const [pgRes, redisRes] = await Promise.allSettled([startPg(), startRedis()]);
  if (pgRes.status === 'rejected' || redisRes.status === 'rejected') {
    await stop();
    throw pgRes.status === 'rejected' ? pgRes.reason : (redisRes as PromiseRejectedResult).reason;
  }

  const databaseUrl = givenDb ?? pooler!.url(o.dbName);
  const directUrl = givenDb ? env.DATABASE_DIRECT_URL?.trim() || givenDb : primary!.url(o.dbName);
  const readUrl = givenDb ? env.DATABASE_READ_URL?.trim() || '' : replica!.url(o.dbName);
  const redisClusterNodes = givenRedis ? '' : (givenCluster ?? cluster!.seeds);
  const serviceEnv: Record<string, string> = givenDb
    ? { DATABASE_URL: databaseUrl }
    : {
        DATABASE_URL: databaseUrl,
        DATABASE_DIRECT_URL: directUrl,
        DATABASE_READ_URL: readUrl,
        // PgBouncer 1.21+ keeps named statements (max_prepared_statements); Debian 12's 1.18, the fallback, does not.
        DATABASE_PREPARED_STATEMENTS: pooler!.keepsPrepared ? 'named' : 'unnamed',
      };
  if (redisClusterNodes) serviceEnv.REDIS_CLUSTER_NODES = redisClusterNodes;
  else serviceEnv.REDIS_URL = givenRedis!;
  return {
    databaseUrl,
    directUrl,
    readUrl,
    extraUrls: pgRes.value.extraUrls,
    redisClusterNodes,
    redisUrl: givenRedis ?? '',
    primary,
    replica,
    pooler,
    cluster,
    readyLines: [...pgRes.value.lines, redisRes.value],
    env: serviceEnv,
    stop,
  };
}
