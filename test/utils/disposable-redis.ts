import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './net.js';
import { startTestApp, type TestApp } from './test-app.js';

/** The real API on a Redis of its own, which a test may stop (`stopRedis`) to see how the API copes. */
export interface AppWithOwnRedis {
  t: TestApp;
  stopRedis(): Promise<void>;
  close(): Promise<void>;
}

export async function startAppWithOwnRedis(overrides: Record<string, string> = {}): Promise<AppWithOwnRedis> {
  const port = await freePort();
  const redis: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  const t = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${port}`, ...overrides });
  return {
    t,
    async stopRedis() {
      if (redis.exitCode !== null) return;
      const exited = new Promise((r) => redis.once('exit', r));
      redis.kill('SIGTERM');
      await exited;
    },
    async close() {
      await t.close();
      redis.kill('SIGKILL');
    },
  };
}
