import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { API_TYPES_FILE, openApiTypes } from '../../src/openapi-types.cli.js';
import { onboard, recipient, type Tenant } from '../utils/factories.js';
import { messageRow } from '../utils/messaging-rows.js';
import { startStack, type Stack } from '../utils/stack.js';

/**
 * What a developer does with the served document: generate types with openapi-typescript, write a client
 * with openapi-fetch, typecheck it (strict) and run it against the service. A response typed wrongly, a
 * missing success schema or an untyped error shows here as a compile error or a wrong value.
 */

/** The developer's script. Every value it prints is read through the generated types. */
const CLIENT_SOURCE = `
import createClient from 'openapi-fetch';
import type { MessageView, paths } from './api-types.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(name + ' is not set');
  return value;
};
const keys = { 'x-access-key': env('ACCESS_KEY'), 'x-secret-key': env('SECRET_KEY') };
const client = createClient<paths>({ baseUrl: env('BASE_URL') });

const sent = await client.POST('/messages', {
  headers: keys,
  body: { phoneNumberId: env('PHONE_NUMBER_ID'), to: env('TO'), type: 'template', templateName: 'hello_world', templateLanguage: 'en_US' },
});
if (!sent.data) throw new Error('send failed: ' + sent.response.status + ' ' + sent.error?.message);
const message: MessageView = sent.data.data;
const id: number = message.id;
const status: 'pending' | 'sent' | 'delivered' | 'read' | 'failed' | 'received' = message.status;
const wamid: string | null = message.upstreamMessageId;
// @ts-expect-error the generated types know MessageView's fields: a misspelt one does not compile
void message.upstreamMesageId;

const read = await client.GET('/messages/{id}', { headers: keys, params: { path: { id } } });
if (!read.data) throw new Error('read failed: ' + read.response.status);
const history: string[] = read.data.data.statusHistory.map((h) => h.status);

const listed = await client.GET('/messages', { headers: keys, params: { query: { to: env('TO'), limit: 10 } } });
if (!listed.data) throw new Error('list failed: ' + listed.response.status);
const page = listed.data.data;
// GET /messages answers pages, or the feed when asked with after: the generated type is either.
if (!('total' in page)) throw new Error('a list without after answered the feed form');
const total: number = page.total;

// Console routes take the session cookie; the worker turns the simulator's status webhooks into events.
let events: Array<{ kind: string; status: string | null; messageId: string | null }> = [];
for (let attempt = 0; attempt < 100 && !events.some((e) => e.status === 'delivered'); attempt++) {
  if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  const answer = await client.GET('/webhooks/events', {
    headers: { cookie: env('COOKIE') },
    params: { query: { wabaId: env('WABA_ID'), messageId: wamid ?? undefined, limit: 50 } },
  });
  if (!answer.data) throw new Error('events failed: ' + answer.response.status + ' ' + answer.error?.message);
  events = answer.data.data.items.map((e) => ({ kind: e.kind, status: e.status, messageId: e.messageId }));
}

const invalid = await client.POST('/messages', {
  headers: keys,
  body: { phoneNumberId: env('PHONE_NUMBER_ID'), to: '+44 7700 900123', type: 'template', templateName: 'hello_world', templateLanguage: 'en_US' },
});
if (!invalid.error) throw new Error('an invalid recipient was accepted');
const statusCode: number = invalid.error.statusCode;
const field: string | undefined = invalid.error.errors?.[0]?.field;
const reason: string | undefined = invalid.error.errors?.[0]?.message;

// Meta refuses this recipient (131026): the stored failed message comes back typed in the error's data.
const refused = await client.POST('/messages', {
  headers: keys,
  body: { phoneNumberId: env('PHONE_NUMBER_ID'), to: '15550000001', type: 'template', templateName: 'hello_world', templateLanguage: 'en_US' },
});
if (!refused.error) throw new Error('a refused send was answered as a success');
const failed: MessageView | undefined = 'data' in refused.error ? refused.error.data : undefined;
const failedStatus: 'pending' | 'sent' | 'delivered' | 'read' | 'failed' | 'received' | undefined = failed?.status;
const failedCode: number | null | undefined = failed?.error?.code;

console.log(JSON.stringify({
  sent: { httpStatus: sent.response.status, id, status, wamid, to: message.to, templateName: message.templateName },
  read: { id: read.data.data.id, to: read.data.data.to, history },
  listed: { ids: page.items.map((m) => m.id), total, page: page.page },
  events,
  invalid: { httpStatus: invalid.response.status, statusCode, message: invalid.error.message, field, reason },
  refused: { httpStatus: refused.response.status, id: failed?.id, status: failedStatus, code: failedCode },
}));
`;

const run = promisify(execFile);

/** Strict TypeScript over the script and the generated types; the diagnostics as readable lines. */
function typecheck(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file && d.start !== undefined
        ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1} `
        : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
}

describe('a client generated from the served OpenAPI document (openapi-typescript + openapi-fetch)', () => {
  let stack: Stack;
  let tenant: Tenant;
  let document: object;
  let dir: string;

  beforeAll(async () => {
    stack = await startStack({ worker: true });
    tenant = await onboard(stack, 'Generated Client Co');
    const res = await fetch(`${stack.url}/swagger/docs-json`);
    expect(res.status).toBe(200);
    document = (await res.json()) as object;
    // Inside the checkout (test-results/ is git-ignored), so the script resolves openapi-fetch from node_modules.
    mkdirSync('test-results', { recursive: true });
    dir = mkdtempSync(path.resolve('test-results/openapi-client-'));
    writeFileSync(path.join(dir, 'api-types.ts'), await openApiTypes(document));
  });

  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await stack?.close();
  });

  it('generates types, typechecks a strict script against them, and runs it: send, read back, list, events, a typed 422, a refused send with its typed data', async () => {
    const source = path.join(dir, 'client.ts');
    writeFileSync(source, CLIENT_SOURCE);
    expect(typecheck(source)).toEqual([]);

    const js = ts.transpileModule(CLIENT_SOURCE, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(path.join(dir, 'client.mjs'), js);
    const to = recipient();
    const { stdout } = await run(process.execPath, [path.join(dir, 'client.mjs')], {
      cwd: dir,
      timeout: 20_000,
      env: {
        PATH: process.env.PATH,
        BASE_URL: stack.url,
        ACCESS_KEY: tenant.key.accessKey,
        SECRET_KEY: tenant.key.secretKey,
        COOKIE: tenant.operator.cookie,
        WABA_ID: tenant.account.wabaId,
        PHONE_NUMBER_ID: tenant.account.phoneNumberId,
        TO: to,
      },
    });
    const out = JSON.parse(stdout) as {
      sent: {
        httpStatus: number;
        id: number;
        status: string;
        wamid: string | null;
        to: string;
        templateName: string | null;
      };
      read: { id: number; to: string; history: string[] };
      listed: { ids: number[]; total: number; page: number };
      events: Array<{ kind: string; status: string | null; messageId: string | null }>;
      invalid: { httpStatus: number; statusCode: number; message: string; field?: string; reason?: string };
      refused: { httpStatus: number; id?: number; status?: string; code?: number | null };
    };

    const stored = await messageRow(stack, out.sent.id);
    expect(out.sent).toEqual({
      httpStatus: 200,
      id: stored.id,
      status: expect.stringMatching(/^(sent|delivered|read)$/),
      wamid: stored.upstreamMessageId,
      to,
      templateName: 'hello_world',
    });
    expect(out.sent.wamid).toMatch(/^wamid\./);
    expect(out.read).toEqual({ id: out.sent.id, to, history: expect.arrayContaining(['accepted']) });
    expect(out.listed).toEqual({ ids: [out.sent.id], total: 1, page: 1 });
    expect(out.events).toEqual(
      expect.arrayContaining([{ kind: 'status_update', status: 'delivered', messageId: out.sent.wamid }]),
    );
    expect(out.invalid).toEqual({
      httpStatus: 422,
      statusCode: 422,
      message: 'Field Validation Failed',
      field: 'to',
      reason: expect.stringContaining('to'),
    });
    const refused = await messageRow(stack, out.refused.id!);
    expect(out.refused).toEqual({ httpStatus: 422, id: refused.id, status: 'failed', code: 131026 });
    expect(refused).toMatchObject({ status: 'failed', errorCode: 131026, to: '15550000001' });
  });

  it('fails to compile a script that reads a field the document does not have, or skips a required path parameter', () => {
    const wrong = path.join(dir, 'wrong.ts');
    writeFileSync(
      wrong,
      `import createClient from 'openapi-fetch';
import type { paths } from './api-types.js';
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:9' });
const read = await client.GET('/messages/{id}', {});
const n: number = read.data?.data.wamid;
export { n };
`,
    );
    const errors = typecheck(wrong);
    expect(errors).toEqual([
      expect.stringMatching(/^wrong\.ts:4 .*params/s),
      expect.stringMatching(/^wrong\.ts:5 .*wamid/s),
    ]);
  });

  it(`keeps the console's generated types (${API_TYPES_FILE}) in step with the served document: npm run openapi:types`, async () => {
    const generated = await openApiTypes(document);
    const committed = readFileSync(API_TYPES_FILE, 'utf8');
    const [a, b] = [committed.split('\n'), generated.split('\n')];
    const line = a.findIndex((text, i) => text !== b[i]);
    const firstDifference =
      committed === generated
        ? null
        : {
            line: (line === -1 ? a.length : line) + 1,
            committed: a[line] ?? '(end of file)',
            generated: b[line === -1 ? a.length : line] ?? '(end of file)',
          };
    expect({ file: API_TYPES_FILE, firstDifference }).toEqual({ file: API_TYPES_FILE, firstDifference: null });
  });
});
