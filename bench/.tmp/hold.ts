// scratch: start a stack and hold it until SIGTERM
import fs from 'node:fs';
import { runBench } from '../lib/stack.js';
await runBench({ name: 'hold', limitMs: 1_500_000, apis: Number(process.env.APIS ?? 1), workers: Number(process.env.WORKERS ?? 1), simulatorWebhooks: false }, async (stack) => {
  const tenant = await stack.onboard();
  fs.writeFileSync('/tmp/bench-scratch/hold.json', JSON.stringify({ tenant, apiUrls: stack.apiUrls, simUrl: stack.simUrl, db: stack.databaseUrl, redis: stack.redisUrl, secret: stack.appSecret, logDir: stack.logDir }));
  console.log('held');
  await new Promise((r) => setTimeout(r, 1_400_000));
});
