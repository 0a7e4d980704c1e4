import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './net.js';
import { startTestApp, type TestApp } from './test-app.js';

/** A redis-server of the test's own (no persistence: a restart comes back empty), which the test may stop and start. */
export interface DisposableRedis {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  kill(): void;
}

export async function startDisposableRedis(): Promise<DisposableRedis> {
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const redis: DisposableRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      await new Promise((r) => setTimeout(r, 300));
    },
    async stop() {
      if (!proc || proc.exitCode !== null) return;
      const exited = new Promise((r) => proc!.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
    kill() {
      proc?.kill('SIGKILL');
    },
  };
  await redis.start();
  return redis;
}

/** The real API on a Redis of its own, which a test may stop (`stopRedis`) to see how the API copes. */
export interface AppWithOwnRedis {
  t: TestApp;
  stopRedis(): Promise<void>;
  close(): Promise<void>;
}

export async function startAppWithOwnRedis(overrides: Record<string, string> = {}): Promise<AppWithOwnRedis> {
  const redis = await startDisposableRedis();
  const t = await startTestApp({ REDIS_URL: redis.url, ...overrides });
  return {
    t,
    stopRedis: () => redis.stop(),
    async close() {
      await t.close();
      redis.kill();
    },
  };
}
