import { createCipheriv, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SecretBox } from '../../src/core/crypto/secret-box.js';
import { WorkerPurges } from '../../src/worker/worker-purges.js';
import {
  connectAccount,
  insertOrganization,
  insertSendScope,
  signupAndLogin,
  type ConnectedAccount,
  type Operator,
} from '../utils/factories.js';
import { storeAccessToken } from '../utils/messaging-rows.js';
import { accountRow } from '../utils/db-rows.js';
import { startStack, type Stack } from '../utils/stack.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { testEnv } from '../utils/test-env.js';
import { runBuilt as run } from '../utils/run-built.js';

/**
 * Issue 12, finding 6 (secrets) and finding 5 (purges): production refuses the example secrets, upstream
 * tokens rotate to a new key and are bound to their account, and the worker purges what has expired.
 */

/** The values .env.example ships with. */
function exampleValues(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of readFileSync('.env.example', 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) values[m[1]!] = m[2]!;
  }
  return values;
}

/** A ciphertext as the service wrote them before key ids and account binding (`v1.<iv>.<tag>.<ct>`). */
function legacySeal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', ...[iv, cipher.getAuthTag(), ciphertext].map((p) => p.toString('base64url'))].join('.');
}

describe('Security: secrets', () => {
  describe('production start', () => {
    it('refuses the example secrets of .env.example, naming each variable, and exits non-zero (API and worker)', async () => {
      const example = exampleValues();
      expect(example.ENCRYPTION_KEY).toMatch(/^0+$/);
      const env = {
        ...testEnv(),
        NODE_ENV: 'production',
        PORT: '0',
        WHATSAPP_APP_SECRET: example.WHATSAPP_APP_SECRET!,
        WHATSAPP_VERIFY_TOKEN: example.WHATSAPP_VERIFY_TOKEN!,
        ENCRYPTION_KEY: example.ENCRYPTION_KEY!,
      };
      for (const entry of ['dist/src/main.js', 'dist/src/worker/main.js']) {
        const exit = await run(entry, env);
        expect([entry, exit.code]).toEqual([entry, 1]);
        for (const name of ['WHATSAPP_APP_SECRET', 'WHATSAPP_VERIFY_TOKEN', 'ENCRYPTION_KEY']) {
          expect(exit.stderr).toMatch(new RegExp(`- ${name} is the example value`));
        }
        // The secrets themselves are not printed.
        expect(exit.stderr).not.toContain(example.WHATSAPP_APP_SECRET);
      }
    });
  });

  describe('upstream token encryption keys', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const ring = (...keys: [string, Buffer][]) => ({
      ENCRYPTION_KEY: '',
      ENCRYPTION_KEYS: keys.map(([id, k]) => `${id}:${k.toString('base64')}`).join(','),
    });
    let stack: Stack;
    let operator: Operator;
    let accounts: ConnectedAccount[];

    beforeAll(async () => {
      stack = await startStack({ env: ring(['old', oldKey]) });
      operator = await signupAndLogin(stack, 'Key Rotation Org');
      accounts = [
        await connectAccount(stack, operator),
        await connectAccount(stack, operator),
        await connectAccount(stack, operator),
      ];
    });
    afterAll(async () => {
      await stack?.close();
    });

    const stored = async (wabaId: string) => (await accountRow(stack.db, { wabaId })).accessTokenEncrypted;
    const sync = (app: TestApp, wabaId: string) =>
      app.http.post(`/business-accounts/${wabaId}/phone-numbers/sync`).set('cookie', operator.cookie);

    it('rotates every token to the newest key (keys:rotate); then the new key alone is enough and the old one opens nothing', async () => {
      const [a, b, legacy] = accounts as [ConnectedAccount, ConnectedAccount, ConnectedAccount];
      expect(await stored(a.wabaId)).toMatch(/^v2\.old\./);
      // A token stored before this change: the old format, no key id, no account binding.
      await storeAccessToken(stack, legacy.wabaId, legacySeal(oldKey, legacy.accessToken));
      // With the new key ring (new key first, old key kept for reading) a process re-seals the v1 token when it
      // starts (nothing opens v1 any more: issue 29, finding 7); the old key's v2 tokens keep working.
      const both = await startTestApp({
        ...ring(['new', newKey], ['old', oldKey]),
        UPSTREAM_BASE_URL: stack.sim.baseUrl,
      });
      try {
        expect(await stored(legacy.wabaId)).toMatch(/^v2\.new\./);
        for (const account of [a, legacy]) expect((await sync(both, account.wabaId)).status).toBe(200);
      } finally {
        await both.close();
      }

      const rotation = await run(
        'dist/src/accounts/credentials/rotate-keys.cli.js',
        { ...testEnv(), ...ring(['new', newKey], ['old', oldKey]) },
        60_000,
      );
      expect(rotation.stdout).toContain('re-sealing upstream tokens under key "new"');
      expect(rotation.stdout).toMatch(/\d+\/\d+ accounts: \d+ re-sealed/);
      // The test database holds other test files' accounts, sealed under their own keys: those may be listed
      // as failed (and make the exit code 1), never ours.
      for (const account of accounts) expect(rotation.stderr).not.toContain(account.wabaId);
      expect(rotation.code === 0 || /no key of ENCRYPTION_KEYS opens the token of/.test(rotation.stderr)).toBe(true);

      for (const account of accounts) {
        const sealed = await stored(account.wabaId);
        expect(sealed).toMatch(/^v2\.new\./);
        expect(sealed).not.toContain(account.accessToken);
        expect(() => new SecretBox([{ id: 'old', key: oldKey }]).open(sealed, account.wabaId)).toThrow();
      }
      const newOnly = await startTestApp({ ...ring(['new', newKey]), UPSTREAM_BASE_URL: stack.sim.baseUrl });
      try {
        for (const account of [a, b, legacy])
          expect([account.wabaId, (await sync(newOnly, account.wabaId)).status]).toEqual([account.wabaId, 200]);
      } finally {
        await newOnly.close();
      }
    }, 180_000);

    it('binds a ciphertext to its account: copied onto another account it does not decrypt (424, reconnect)', async () => {
      const [a, b] = accounts as [ConnectedAccount, ConnectedAccount];
      const app = await startTestApp({
        ...ring(['new', newKey], ['old', oldKey]),
        UPSTREAM_BASE_URL: stack.sim.baseUrl,
      });
      try {
        await storeAccessToken(stack, b.wabaId, await stored(a.wabaId));
        const copied = await sync(app, b.wabaId);
        expect(copied.status).toBe(424);
        expect(copied.body.message).toMatch(/cannot be decrypted.*reconnect/);
        expect((await sync(app, a.wabaId)).status).toBe(200);
        // Reconnecting with the account's own token repairs it.
        const replaced = await app.http
          .put(`/business-accounts/${b.wabaId}/access-token`)
          .set('cookie', operator.cookie)
          .send({ accessToken: b.accessToken });
        expect(replaced.status).toBe(200);
        expect((await sync(app, b.wabaId)).status).toBe(200);
      } finally {
        await app.close();
      }
    });
  });

  describe('scheduled purges (worker)', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ worker: true });
    });
    afterAll(async () => {
      await stack?.close();
    });

    it('deletes ended sessions and expired idempotency keys, keeping live ones', async () => {
      const worker = stack.worker!;
      const org = await insertOrganization(stack.db);
      const scope = await insertSendScope(stack.db);
      // As of 2000-01-01 (so that only these rows are concerned): one expired and one live row of each table.
      const now = new Date('2000-01-01T00:00:00.000Z');
      const far = new Date('2100-01-01T00:00:00.000Z');
      const session = (expiresAt: Date) =>
        stack.db
          .on()
          .insertInto('sessions')
          .values({
            id: randomUUID(),
            operator_id: org.operatorId,
            token_hash: randomBytes(32).toString('hex'),
            expires_at: expiresAt,
            last_seen_at: new Date(),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
      const [expired, live] = [await session(new Date('1999-12-31T00:00:00.000Z')), await session(far)];
      const key = (name: string, expiresAt: Date) =>
        stack.db
          .on()
          .insertInto('idempotency_keys')
          .values({
            api_key_id: scope.apiKeyId,
            key: name,
            request_hash: 'h',
            state: 'completed',
            locked_until: expiresAt,
            expires_at: expiresAt,
          })
          .execute();
      await key('old', new Date('1999-12-31T00:00:00.000Z'));
      await key('fresh', far);

      const purges = worker.get(WorkerPurges);
      await purges.sessions.purge(now);
      await purges.idempotencyKeys.purge(now);

      const sessionRow = (id: string) =>
        stack.db.on().selectFrom('sessions').select('id').where('id', '=', id).executeTakeFirst();
      expect((await sessionRow(expired.id)) ?? null).toBeNull();
      expect((await sessionRow(live.id)) ?? null).not.toBeNull();
      const keys = await stack.db
        .on()
        .selectFrom('idempotency_keys')
        .select('key')
        .where('api_key_id', '=', scope.apiKeyId)
        .execute();
      expect(keys.map((k) => k.key)).toEqual(['fresh']);
    });
  });
});
