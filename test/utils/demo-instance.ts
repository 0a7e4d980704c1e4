import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './net.js';
import { runBuilt } from './run-built.js';
import { scratchDatabase, type ScratchDatabase } from './scratch-database.js';
import { startStack, type Stack } from './stack.js';
import { testEnv } from './test-env.js';

/** What `npm run db:seed` prints (src/seed/demo-seed.ts). */
export interface DemoSeed {
  consoleLogin: { email: string; password: string };
  businessAccount: { wabaId: string; phoneNumbers: string[]; templates: Record<string, number> };
  apiKey: { accessKey: string; secretKey: string; wabaId: string };
  customerWindow: string;
}

export interface DemoInstance {
  stack: Stack;
  seed: DemoSeed;
  close(): Promise<void>;
}

/**
 * What `./scripts/dev.sh` leaves running, for the tests of what the README and Swagger promise a new user: a
 * database of its own (the seed's fixed ids, demo@example.com and the simulator's accounts, would collide with other
 * test files in the shared one), the simulator with its default accounts, the API and the worker, and the built
 * demo seed run exactly as dev.sh runs it (so the example customer's window is opened through the webhook path).
 */
export async function startDemoInstance(): Promise<DemoInstance> {
  const db: ScratchDatabase = await scratchDatabase();
  const keyDir = mkdtempSync(path.join(tmpdir(), 'demo-seed-'));
  let stack: Stack | undefined;
  try {
    // The API, the worker and the seed share the database, the queue namespace and the encryption key. The API's
    // port is chosen first so that its inbound media links point at it, as dev.sh's PUBLIC_BASE_URL does.
    const port = await freePort();
    const shared = {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: db.url,
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      QUEUE_PREFIX: `demo${randomBytes(4).toString('hex')}`,
    };
    stack = await startStack({ worker: true, env: shared });
    const seeded = await runBuilt(
      'dist/src/seed/demo-seed.js',
      {
        ...testEnv({ ...shared, UPSTREAM_BASE_URL: stack.sim.baseUrl }),
        // dev.sh's level (.env.example): the seed's stdout must stay its JSON alone while the service logs.
        LOG_LEVEL: 'info',
        SEED_WABA_ID: '310000000000001',
        SEED_ACCESS_TOKEN: 'sim-token-waba-1',
        SEED_SIMULATOR_URL: stack.sim.url,
        SEED_KEY_FILE: path.join(keyDir, 'demo-key.json'),
      },
      60_000,
    );
    if (seeded.code !== 0)
      throw new Error(`the demo seed failed (exit ${seeded.code}): ${seeded.stderr}${seeded.stdout}`);
    const seed = JSON.parse(seeded.stdout) as DemoSeed;
    const started = stack;
    return {
      stack: started,
      seed,
      async close() {
        await started.close();
        await db.drop();
        rmSync(keyDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stack?.close();
    await db.drop();
    rmSync(keyDir, { recursive: true, force: true });
    throw error;
  }
}
