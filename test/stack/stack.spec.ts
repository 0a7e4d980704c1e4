// The stack module (scripts/stack/) on its own: private PostgreSQL and Redis in a temporary directory on free
// ports (never the DATABASE_URL / REDIS_URL the test run itself uses), started, restarted on the same ports,
// stopped; a requested port already taken; the CLI's services.env contract; and the services going away when
// the process that started them dies (the CLI's --parent-pid, and a SIGKILL of the CLI itself); a terminal's
// Ctrl-C left to the parent script when there is one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis as RedisClient } from 'ioredis';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../scripts/stack/app.js';
import { Postgres, pgQuery } from '../../scripts/stack/postgres.js';
import { Child, PortInUseError, isAlive, sleep } from '../../scripts/stack/process.js';
import { Redis, redisPing } from '../../scripts/stack/redis.js';
import { startServices, type Services } from '../../scripts/stack/services.js';
import { readPidFile } from '../../scripts/stack/state.js';

const dirs: string[] = [];
/** A private directory the postgres OS user can reach (PostgreSQL runs as that user when the tests run as root). */
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bmapi-stack-'));
  fs.chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

const selectDb = async (url: string) =>
  (await pgQuery({ connectionString: url }, 'SELECT current_database() AS db')).rows[0].db as string;

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

async function gone(pids: number[], withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (pids.some(isAlive) && Date.now() < deadline) await sleep(100);
  return !pids.some(isAlive);
}

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('private PostgreSQL and Redis', () => {
  let dir: string;
  let services: Services;

  beforeAll(async () => {
    dir = tempDir();
    services = await startServices({ dir, dbName: 'app', extraDbs: ['other'], env: {} });
  }, 180_000);

  afterAll(() => services?.stop());

  it('start: both accept connections, the databases exist, the env lines carry every URL', async () => {
    expect(services.postgres?.alive()).toBe(true);
    expect(services.redis?.alive()).toBe(true);
    expect(await selectDb(services.databaseUrl)).toBe('app');
    expect(await selectDb(services.extraUrls.other!)).toBe('other');
    expect(await redisPing({ host: '127.0.0.1', port: services.redis!.port })).toBe(true);
    expect(services.envLines()).toEqual([
      `DATABASE_URL=${services.databaseUrl}`,
      `DATABASE_URL_OTHER=${services.extraUrls.other}`,
      `REDIS_URL=${services.redisUrl}`,
    ]);
    expect(readPidFile(dir, 'postgres')?.pid).toBe(services.postgres!.proc!.pid);
  });

  it('restart: PostgreSQL and Redis come back on the same ports, PostgreSQL with its data, Redis empty', async () => {
    const pg = services.postgres!;
    const redis = services.redis!;
    const ports = [pg.port, redis.port];
    const oldPids = [pg.proc!.pid, redis.proc!.pid];
    await pgQuery(
      { connectionString: services.databaseUrl },
      'CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)',
    );
    const client = new RedisClient(services.redisUrl, { maxRetriesPerRequest: 50, retryStrategy: () => 50 });
    client.on('error', () => undefined);
    await client.set('lost-on-restart', '1');
    await pg.restart();
    await redis.restart();
    const afterRestart = await client.get('lost-on-restart');
    client.disconnect();
    expect(afterRestart).toBeNull();
    expect([pg.port, redis.port]).toEqual(ports);
    expect([pg.proc!.pid, redis.proc!.pid]).not.toEqual(oldPids);
    expect(oldPids.some(isAlive)).toBe(false);
    expect((await pgQuery({ connectionString: services.databaseUrl }, 'SELECT n FROM kept')).rows).toEqual([{ n: 42 }]);
    expect(await redisPing({ host: '127.0.0.1', port: redis.port })).toBe(true);
    expect(pg.starts).toBe(2);
  }, 180_000);

  it('port in use: a requested port that is taken is a clear error, nothing is started', async () => {
    const other = tempDir();
    const pg = new Postgres({ dir: other, port: services.postgres!.port });
    await expect(pg.start()).rejects.toThrow(PortInUseError);
    await expect(pg.start()).rejects.toThrow(
      `PostgreSQL: port ${services.postgres!.port} on 127.0.0.1 is already in use`,
    );
    const redis = new Redis({ dir: other, port: services.redis!.port });
    await expect(redis.start()).rejects.toThrow(
      `redis-server: port ${services.redis!.port} on 127.0.0.1 is already in use`,
    );
    expect([pg.alive(), redis.alive()]).toEqual([false, false]);
    expect(fs.existsSync(path.join(other, 'postgres'))).toBe(false);
  });

  it('given DATABASE_URL and REDIS_URL are used as they are (extra databases created there), nothing is started', async () => {
    const given = await startServices({
      dir: tempDir(),
      extraDbs: ['given_extra'],
      env: { DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl },
    });
    expect([given.postgres, given.redis]).toEqual([undefined, undefined]);
    expect([given.databaseUrl, given.redisUrl]).toEqual([services.databaseUrl, services.redisUrl]);
    expect(await selectDb(given.extraUrls.given_extra!)).toBe('given_extra');
    await expect(
      startServices({ dir: tempDir(), env: { DATABASE_URL: services.databaseUrl, REDIS_URL: 'http://127.0.0.1:1' } }),
    ).rejects.toThrow('REDIS_URL is not a valid redis:// URL: unsupported scheme http:');
  });

  it('stop: both processes exit, their ports close, their pid files go', async () => {
    const pids = [services.postgres!.proc!.pid, services.redis!.proc!.pid];
    const ports = [services.postgres!.port, services.redis!.port];
    await services.stop();
    expect(pids.some(isAlive)).toBe(false);
    expect([await accepts(ports[0]!), await accepts(ports[1]!)]).toEqual([false, false]);
    expect([readPidFile(dir, 'postgres'), readPidFile(dir, 'redis')]).toEqual([null, null]);
  }, 180_000);
});

describe('a child process', () => {
  it('stop escalates to SIGKILL of its group when SIGTERM is ignored', async () => {
    const c = await Child.start({
      name: 'stubborn',
      cmd: '/bin/sh',
      args: ['-c', 'trap "" TERM; sleep 60 & wait; sleep 60'],
    });
    await sleep(200);
    const exit = await c.stop([
      ['SIGTERM', 300],
      ['SIGKILL', 3_000],
    ]);
    expect(exit?.signal).toBe('SIGKILL');
    expect(c.alive()).toBe(false);
  });
});

describe('the CLI (scripts/stack/cli.ts, what dev.sh and test.sh run)', () => {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  const dir = tempDir();
  const envFile = path.join(dir, 'services.env');
  const cli = (...args: string[]): ChildProcess =>
    spawn(process.execPath, ['--import', 'tsx', 'scripts/stack/cli.ts', '--state-dir', dir, ...args], {
      cwd: ROOT,
      env,
      stdio: 'ignore',
    });
  const exitOf = (p: ChildProcess) =>
    new Promise<number | null>((r) => (p.exitCode !== null ? r(p.exitCode) : p.once('exit', (code) => r(code))));
  const servicePids = () => [readPidFile(dir, 'postgres')!.pid, readPidFile(dir, 'redis')!.pid];
  async function ready(p: ChildProcess): Promise<Record<string, string>> {
    const deadline = Date.now() + 60_000;
    while (!fs.existsSync(envFile)) {
      if (p.exitCode !== null || Date.now() > deadline)
        throw new Error(`the CLI did not write services.env (exit ${p.exitCode})`);
      await sleep(100);
    }
    return Object.fromEntries(
      fs
        .readFileSync(envFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  }

  it('parent death: the services stop when the --parent-pid process is SIGKILLed; a second CLI on the same state dir exits 3', async () => {
    const parent = spawn('sleep', ['600'], { stdio: 'ignore' });
    const sup = cli('--parent-pid', String(parent.pid), '--extra-db', 'more');
    const vars = await ready(sup);
    expect(Object.keys(vars)).toEqual(['DATABASE_URL', 'DATABASE_URL_MORE', 'REDIS_URL', 'LOCAL_SERVICES_PID']);
    expect(Number(vars.LOCAL_SERVICES_PID)).toBe(sup.pid);
    expect(await selectDb(vars.DATABASE_URL_MORE!)).toBe('more');
    const pids = servicePids();
    expect(await exitOf(cli())).toBe(3);
    parent.kill('SIGKILL');
    expect(await exitOf(sup)).toBe(0);
    expect(await gone(pids, 5_000)).toBe(true);
    expect(fs.existsSync(envFile)).toBe(false);
  }, 180_000);

  it('SIGKILL of the CLI itself: its watchdogs stop PostgreSQL and Redis; the next run reuses the state dir', async () => {
    const sup = cli();
    const vars = await ready(sup);
    const pids = servicePids();
    expect(await selectDb(vars.DATABASE_URL!)).toBe('bmapi');
    sup.kill('SIGKILL');
    expect(await gone(pids, 15_000)).toBe(true);
    // Same data dir (the database "more" made by the previous test is still there), new processes.
    fs.rmSync(envFile, { force: true });
    const again = cli();
    const vars2 = await ready(again);
    const pids2 = servicePids();
    expect(pids2).not.toEqual(pids);
    expect(await selectDb(vars2.DATABASE_URL!.replace(/\/bmapi$/, '/more'))).toBe('more');
    again.kill('SIGTERM');
    expect(await exitOf(again)).toBe(0);
    expect(await gone(pids2, 5_000)).toBe(true);
  }, 180_000);

  it('Ctrl-C with a parent: SIGINT leaves the services to the parent script, which stops them last with SIGTERM', async () => {
    const parent = spawn('sleep', ['600'], { stdio: 'ignore' });
    fs.rmSync(envFile, { force: true });
    try {
      const sup = cli('--parent-pid', String(parent.pid));
      const vars = await ready(sup);
      const pids = servicePids();
      // The terminal's SIGINT reaches the supervisor together with the script's API and worker, which may still
      // be writing their last rows: the database stays up.
      sup.kill('SIGINT');
      await sleep(1_500);
      expect(sup.exitCode).toBeNull();
      expect(await selectDb(vars.DATABASE_URL!)).toBe('bmapi');
      sup.kill('SIGTERM');
      expect(await exitOf(sup)).toBe(0);
      expect(await gone(pids, 5_000)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  }, 180_000);
});
