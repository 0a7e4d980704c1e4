// PostgreSQL and Redis for a run: the given DATABASE_URL / REDIS_URL (each on its own), otherwise private ones
// started in a state directory, after stopping whatever an earlier run left running there.
import fs from 'node:fs';
import path from 'node:path';
import { Postgres, stopStalePostgres, useGivenPostgres } from './postgres.js';
import { Redis, redisServerOrInstallable, stopStaleRedis, useGivenRedis } from './redis.js';
import { maskUrl, secs } from './process.js';
import { startScaled, stopStaleScaled, type ScaledServices } from './scaled.js';
import { stopSupervisor } from './state.js';

type Log = (msg: string) => void;

export interface ServicesOptions {
  /** State directory: data, logs, pid files. */
  dir: string;
  /** The database to create (default bmapi). */
  dbName?: string;
  /** More databases to create; their URLs are in extraUrls (and DATABASE_URL_<NAME> in envLines). */
  extraDbs?: string[];
  /**
   * Where DATABASE_URL / REDIS_URL are looked up (default process.env); non-empty ones are used instead of starting a
   * service. A non-empty REDIS_CLUSTER_NODES is a given Redis too: no private one is started and no REDIS_URL written
   * (the service refuses both at once).
   */
  env?: NodeJS.ProcessEnv;
  /** Fixed ports for the private services (default: free ones). */
  postgresPort?: number;
  redisPort?: number;
  /** Extra PostgreSQL settings (default: LOCAL_PG_SETTINGS, `name=value` separated by spaces). */
  postgresSettings?: string[];
  /** The hosted topology instead of one PostgreSQL and one Redis (scripts/stack/scaled.ts). */
  scaled?: boolean;
  log?: Log;
}

export interface Services {
  databaseUrl: string;
  extraUrls: Record<string, string>;
  redisUrl: string;
  /** The private services (undefined for a given URL). */
  postgres?: Postgres;
  redis?: Redis;
  /** With `scaled`: the replica, the pooler, the cluster, and the URLs of each. */
  scaled?: ScaledServices;
  /** One line per service: what is used, where, how long it took. */
  readyLines: string[];
  /** KEY=VALUE lines for a services.env (DATABASE_URL, DATABASE_URL_<NAME>..., REDIS_URL). */
  envLines(): string[];
  /** Stops the private services (Redis first, PostgreSQL last). */
  stop(): Promise<void>;
}

/** Stops leftovers of an earlier run in `dir`: its supervising CLI when asked, PostgreSQL, Redis. */
export async function stopStale(dir: string, o: { supervisor: boolean; log?: Log }): Promise<string[]> {
  const log = o.log ?? (() => undefined);
  return [
    ...(o.supervisor ? await stopSupervisor(dir, log) : []),
    ...(await stopStaleScaled(dir)),
    ...(await stopStalePostgres(dir)),
    ...(await stopStaleRedis(dir)),
  ];
}

export async function startServices(o: ServicesOptions): Promise<Services> {
  const log = o.log ?? (() => undefined);
  const env = o.env ?? process.env;
  const dbName = o.dbName ?? 'bmapi';
  const extraDbs = [...new Set(o.extraDbs ?? [])].filter((n) => n !== dbName);
  const givenDb = env.DATABASE_URL?.trim() || null;
  const givenRedis = env.REDIS_URL?.trim() || null;
  const givenCluster = env.REDIS_CLUSTER_NODES?.trim() || null;
  const dir = path.resolve(o.dir);
  fs.mkdirSync(dir, { recursive: true });

  const stale = await stopStale(dir, { supervisor: false, log });
  if (stale.length) log(`stopped leftovers of a previous run: ${stale.join(', ')}`);
  if (!givenRedis && !givenCluster) redisServerOrInstallable();
  if (o.scaled) return scaledServices(o, dir, dbName, extraDbs, env, log);

  const postgres = givenDb
    ? undefined
    : new Postgres({
        dir,
        port: o.postgresPort,
        settings: o.postgresSettings ?? (env.LOCAL_PG_SETTINGS ?? '').split(/\s+/).filter(Boolean),
        log,
      });
  const redis = givenRedis || givenCluster ? undefined : new Redis({ dir, port: o.redisPort, log });
  // Logs of this run only, for the services this run starts.
  if (postgres) fs.writeFileSync(postgres.logFile, '');
  if (redis) fs.writeFileSync(redis.logFile, '');

  const stop = async () => {
    await redis?.stop();
    await postgres?.stop();
  };
  const startPg = async (): Promise<[Record<string, string>, string]> => {
    const t = Date.now();
    if (givenDb)
      return [
        await useGivenPostgres(givenDb, extraDbs, log),
        `postgres: using DATABASE_URL ${maskUrl(givenDb)} (reachable, ${secs(Date.now() - t)})`,
      ];
    await postgres!.start();
    await postgres!.ensureDatabases([dbName, ...extraDbs]);
    const more = extraDbs.length ? ` + ${extraDbs.join(', ')}` : '';
    return [
      Object.fromEntries(extraDbs.map((n) => [n, postgres!.url(n)])),
      `postgres ${postgres!.version} ready on 127.0.0.1:${postgres!.port} (db ${dbName}${more}; data ${postgres!.dataDir}; pid ${postgres!.proc!.pid}; ${secs(Date.now() - t)})`,
    ];
  };
  const startRedis = async (): Promise<string> => {
    const t = Date.now();
    if (givenCluster) return `redis: using REDIS_CLUSTER_NODES ${givenCluster} (checked by the service at its start)`;
    if (givenRedis) {
      await useGivenRedis(givenRedis, log);
      return `redis: using REDIS_URL ${maskUrl(givenRedis)} (PONG, ${secs(Date.now() - t)})`;
    }
    await redis!.start();
    return `redis ${redis!.version} ready on 127.0.0.1:${redis!.port} (pid ${redis!.proc!.pid}; ${secs(Date.now() - t)})`;
  };
  const [pgRes, redisRes] = await Promise.allSettled([startPg(), startRedis()]);
  if (pgRes.status === 'rejected' || redisRes.status === 'rejected') {
    await stop();
    throw pgRes.status === 'rejected' ? pgRes.reason : (redisRes as PromiseRejectedResult).reason;
  }
  const [extraUrls, pgLine] = pgRes.value;
  const databaseUrl = givenDb ?? postgres!.url(dbName);
  const redisUrl = givenCluster ? (givenRedis ?? '') : (givenRedis ?? redis!.url);
  return {
    databaseUrl,
    extraUrls,
    redisUrl,
    postgres,
    redis,
    readyLines: [pgLine, redisRes.value],
    envLines: () => [
      `DATABASE_URL=${envValue(databaseUrl)}`,
      ...extraUrlLines(extraUrls),
      ...(redisUrl ? [`REDIS_URL=${envValue(redisUrl)}`] : []),
    ],
    stop,
  };
}

async function scaledServices(
  o: ServicesOptions,
  dir: string,
  dbName: string,
  extraDbs: string[],
  env: NodeJS.ProcessEnv,
  log: Log,
): Promise<Services> {
  const scaled = await startScaled({
    dir,
    dbName,
    extraDbs,
    env,
    postgresSettings: o.postgresSettings ?? (env.LOCAL_PG_SETTINGS ?? '').split(/\s+/).filter(Boolean),
    log,
  });
  return {
    databaseUrl: scaled.databaseUrl,
    extraUrls: scaled.extraUrls,
    redisUrl: scaled.redisUrl,
    postgres: scaled.primary,
    scaled,
    readyLines: scaled.readyLines,
    envLines: () => [
      ...Object.entries(scaled.env).map(([k, v]) => `${k}=${envValue(v)}`),
      ...extraUrlLines(scaled.extraUrls),
    ],
    stop: () => scaled.stop(),
  };
}

/** DATABASE_URL_<NAME> lines of the extra databases. */
function extraUrlLines(extraUrls: Record<string, string>): string[] {
  return Object.entries(extraUrls).map(
    ([n, u]) => `DATABASE_URL_${n.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}=${envValue(u)}`,
  );
}

/** Values that a shell `source` / dotenv reads literally need no quoting; others get single quotes. */
function envValue(v: string): string {
  return /^[A-Za-z0-9_@%+=:,./?-]*$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}
