// The durable-send reference (bench/reference/durable-send.mjs) started beside the service on the bench's own engines,
// with the key pairs the bench's requests carry: `npm run bench:send` and `npm run bench` measure sends against it.
import path from 'node:path';
import { ROOT, freePort, waitFor, type Stack } from './bench.js';

/** A key pair as the reference holds it: the business account it reaches and that account's token at Meta. */
export interface ReferenceKeyPair {
  accessKey: string;
  secretKey: string;
  businessAccountId: string;
  accessToken: string;
}

/** Starts the reference (as an extra process of the stack, stopped with it); resolves its base URL once it answers. */
export async function startDurableSendReference(stack: Stack, keyPairs: readonly ReferenceKeyPair[]): Promise<string> {
  const port = await freePort();
  const proc = await stack.spawnExtra('ref-send', [path.join(ROOT, 'bench/reference/durable-send.mjs')], {
    PORT: String(port),
    DATABASE_URL: stack.databaseUrl,
    REDIS_URL: stack.redisUrl,
    UPSTREAM_BASE_URL: `${stack.simUrl}/v25.0`,
    KEY_PAIRS: JSON.stringify(keyPairs),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('ref-send', async () => (await fetch(`${url}/`)).status === 404, 10_000, [proc]);
  return url;
}
