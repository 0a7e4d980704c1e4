import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { startDemoInstance, type DemoInstance } from '../utils/demo-instance.js';
import { accountRow } from '../utils/db-rows.js';
import { runProcess, type Exit } from '../utils/run-built.js';

/**
 * What a new user does in the first hour, exactly as the README and Swagger UI tell it, against what dev.sh leaves
 * running (the seeded demo data): the README's walk-through blocks, every Swagger example of POST /messages, and the
 * README's generated-client recipe with its own commands. If one of them stops working, this fails.
 */

const README = readFileSync('README.md', 'utf8');

/** The fenced blocks of one language between `<!-- name:begin -->` and `<!-- name:end -->` in the README. */
function readmeBlocks(name: string, lang: string): string[] {
  const begin = README.indexOf(`<!-- ${name}:begin -->`);
  const end = README.indexOf(`<!-- ${name}:end -->`);
  if (begin < 0 || end < begin) throw new Error(`README.md has no <!-- ${name}:begin/end --> section`);
  return [...README.slice(begin, end).matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

/** Runs a script with bash -euo pipefail in `cwd`, with only PATH, HOME and `env`. */
function bash(script: string, cwd: string, env: Record<string, string>, timeoutMs = 120_000): Promise<Exit> {
  return runProcess('bash', ['-euo', 'pipefail', '-c', script], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, ...env },
    timeoutMs,
  });
}

describe('the first hour (README walk-through, Swagger examples, generated client) against the seeded demo instance', () => {
  let demo: DemoInstance;
  let dir: string;

  beforeAll(async () => {
    demo = await startDemoInstance();
    // Inside the checkout (test-results/ is git-ignored): npx finds the project's openapi-typescript, tsc and tsx.
    mkdirSync('test-results', { recursive: true });
    dir = mkdtempSync(path.resolve('test-results/first-hour-'));
  }, 180_000);

  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await demo?.close();
  });

  it("seeds what the examples need: the demo login, Parcel Co synced, a key pair, the example customer's open window", () => {
    expect(demo.seed).toEqual({
      consoleLogin: { email: 'demo@example.com', password: 'demo-password-123' },
      businessAccount: {
        wabaId: '310000000000001',
        phoneNumbers: expect.arrayContaining(['402000000000011 CONNECTED']),
        templates: expect.objectContaining({ approved: 8 }),
      },
      apiKey: {
        accessKey: expect.stringMatching(/^ak_/),
        secretKey: expect.stringMatching(/^sk_/),
        wabaId: '310000000000001',
      },
      customerWindow: expect.stringMatching(
        /^447700900123 \/ US\.13491208655302741918 may get any message type until /,
      ),
    });
  });

  it('sends every Swagger example of POST /messages as given, with the seeded key pair: each one 200 and sent', async () => {
    const document = (await (await fetch(`${demo.stack.url}/swagger/docs-json`)).json()) as {
      paths: Record<
        string,
        {
          post?: {
            requestBody?: {
              content: Record<string, { examples?: Record<string, { summary: string; value: { type: string } }> }>;
            };
          };
        }
      >;
    };
    const examples = document.paths['/messages']?.post?.requestBody?.content['application/json']?.examples ?? {};
    expect(Object.keys(examples).length).toBeGreaterThanOrEqual(14);
    const keys = { 'x-access-key': demo.seed.apiKey.accessKey, 'x-secret-key': demo.seed.apiKey.secretKey };
    const answers: Record<string, unknown> = {};
    for (const [name, example] of Object.entries(examples)) {
      const res = await demo.stack.http.post('/messages').set(keys).send(example.value);
      answers[name] =
        res.status === 200
          ? {
              status: 200,
              type: res.body.data.type,
              sent: ['sent', 'delivered', 'read'].includes(res.body.data.status),
            }
          : { status: res.status, body: res.body };
    }
    expect(answers).toEqual(
      Object.fromEntries(
        Object.entries(examples).map(([name, example]) => [
          name,
          { status: 200, type: example.value.type, sent: true },
        ]),
      ),
    );
  });

  it("runs the README's generated-client recipe with its own commands: types from the served document, a --strict compile, a send", async () => {
    const [generate, compileAndRun] = readmeBlocks('client-recipe', 'bash');
    const [source] = readmeBlocks('client-recipe', 'ts');
    expect([generate, compileAndRun, source].every((b) => b !== undefined)).toBe(true);

    // `npm install …` would write into this checkout: its packages must instead be the project's own dev dependencies.
    const lines = generate!.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
    const installs = lines.filter((l) => l.startsWith('npm install'));
    const packages = installs.flatMap((l) =>
      l.split('&&').flatMap((part) =>
        part
          .trim()
          .split(/\s+/)
          .slice(2)
          .filter((w) => !w.startsWith('-')),
      ),
    );
    expect(packages).toEqual(['openapi-fetch', 'typescript', 'tsx', '@types/node']);
    const require = createRequire(path.resolve('package.json'));
    for (const pkg of packages) expect(() => require.resolve(`${pkg}/package.json`)).not.toThrow();

    const env = { API: demo.stack.url, ACCESS_KEY: demo.seed.apiKey.accessKey, SECRET_KEY: demo.seed.apiKey.secretKey };
    const generated = await bash(lines.filter((l) => !l.startsWith('npm install')).join('\n'), dir, env);
    expect({ code: generated.code, stderr: generated.stderr.includes('rror') ? generated.stderr : '' }).toEqual({
      code: 0,
      stderr: '',
    });
    expect(readFileSync(path.join(dir, 'api-types.ts'), 'utf8')).toContain('export interface paths');

    const file = /^\/\/ (\S+\.mts)\n/.exec(source!)?.[1];
    expect(file).toBe('client.mts');
    writeFileSync(path.join(dir, file!), source!);
    const ran = await bash(compileAndRun!, dir, env);
    expect({ code: ran.code, stdout: ran.stdout.trim(), compileErrors: ran.stdout.includes('error TS') }).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^(sent|delivered|read) text$/),
      compileErrors: false,
    });
  }, 180_000);

  it("runs the README's walk-through as printed: log in, connect, sync, key, template, read back, events, an inbound message, a text and an image in the window", async () => {
    const script = readmeBlocks('first-hour', 'bash').join('\n');
    const run = await bash(script, dir, { API: demo.stack.url, SIM: demo.stack.sim.url });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });

    const out = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const customer = '447700900456';
    expect(out.slice(0, 6)).toEqual([
      { statusCode: 200, email: 'demo@example.com' },
      { statusCode: 201, name: 'Bloom Florist', webhooksSubscribed: true },
      { added: 2, updated: 0, removed: 0, total: 2 },
      { added: 3, updated: 0, removed: 0, total: 3, approved: 2 },
      { name: 'bouquet_ready', language: 'en_US', parameters: 1 },
      { name: 'bouquet_ready', language: 'es_MX', parameters: 1 },
    ]);
    expect(out[6]).toEqual({ statusCode: 200, id: expect.any(Number), status: 'sent' });
    expect(out[7]).toEqual({
      status: expect.stringMatching(/^(sent|delivered|read)$/),
      history: expect.arrayContaining(['accepted']),
    });
    const events = out.slice(8, -3);
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events.every((e) => e.kind === 'status_update' && e.recipient === customer)).toBe(true);
    expect(out.slice(-3)).toEqual([
      {
        direction: 'inbound',
        status: 'received',
        from: customer,
        content: { text: { body: 'Lovely! Can you add a card?' } },
      },
      { statusCode: 200, type: 'text', status: 'sent' },
      { statusCode: 200, type: 'image', status: 'sent' },
    ]);

    // What the walk-through did is stored: the account is the demo organization's, the four messages are its.
    const account = await accountRow(demo.stack.db, { wabaId: '310000000000002' });
    const operator = await demo.stack.db
      .on()
      .selectFrom('operators')
      .select('organization_id as organizationId')
      .where('email', '=', 'demo@example.com')
      .executeTakeFirstOrThrow();
    expect(account.organizationId).toBe(operator.organizationId);
    const messages = await demo.stack.db
      .on()
      .selectFrom('messages')
      .select(['direction', 'type'])
      .where('business_account_id', '=', account.id)
      .orderBy('id')
      .execute();
    expect(messages.map((m) => [m.direction, m.type])).toEqual([
      ['outbound', 'template'],
      ['inbound', 'text'],
      ['outbound', 'text'],
      ['outbound', 'image'],
    ]);
  }, 180_000);
});
