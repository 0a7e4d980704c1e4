import { readFileSync } from 'node:fs';
import { startTestApp, type TestApp } from '../utils/test-app.js';

interface Operation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  responses: Record<
    string,
    { description?: string; content?: Record<string, { schema?: { $ref?: string; allOf?: Array<{ $ref?: string }> } }> }
  >;
}

/**
 * The console routes and the error responses each must document. `session: false` marks the two public
 * console routes (signup, login), which must not claim the session scheme.
 */
const CONSOLE_OPERATIONS: Array<{ method: string; path: string; errors: number[]; session?: false }> = [
  { method: 'post', path: '/auth/signup', errors: [409, 422], session: false },
  { method: 'post', path: '/auth/login', errors: [401, 422, 429], session: false },
  { method: 'post', path: '/auth/logout', errors: [401] },
  { method: 'get', path: '/auth/me', errors: [401] },
  { method: 'post', path: '/business-accounts', errors: [401, 409, 422, 424, 502] },
  { method: 'get', path: '/business-accounts', errors: [401] },
  { method: 'get', path: '/business-accounts/{wabaId}', errors: [401, 404] },
  { method: 'delete', path: '/business-accounts/{wabaId}', errors: [401, 404] },
  { method: 'put', path: '/business-accounts/{wabaId}/access-token', errors: [401, 404, 422, 424, 502] },
  { method: 'post', path: '/business-accounts/{wabaId}/subscription', errors: [401, 404, 424, 502] },
  { method: 'post', path: '/business-accounts/{wabaId}/credentials/check', errors: [401, 404, 424, 502] },
  { method: 'post', path: '/business-accounts/{wabaId}/phone-numbers/sync', errors: [401, 404, 424, 502] },
  { method: 'get', path: '/business-accounts/{wabaId}/phone-numbers', errors: [401, 404] },
  { method: 'post', path: '/business-accounts/{wabaId}/templates/sync', errors: [401, 404, 424, 502] },
  { method: 'get', path: '/business-accounts/{wabaId}/templates', errors: [401, 404, 422] },
  {
    method: 'post',
    path: '/business-accounts/{wabaId}/phone-numbers/{phoneNumberId}/media',
    errors: [401, 404, 413, 422, 424, 502],
  },
  { method: 'get', path: '/business-accounts/{wabaId}/media/{mediaId}', errors: [401, 404, 424, 502] },
  { method: 'post', path: '/api-keys', errors: [401, 404, 422] },
  { method: 'get', path: '/api-keys', errors: [401, 422] },
  { method: 'delete', path: '/api-keys/{id}', errors: [401, 404] },
  { method: 'get', path: '/audit-log', errors: [401, 422] },
  { method: 'get', path: '/webhooks/deliveries/health', errors: [401, 404, 422] },
];

describe('Console routes in the OpenAPI document', () => {
  let t: TestApp;
  let doc: {
    info: { version: string };
    paths: Record<string, Record<string, Operation>>;
    components: { securitySchemes: Record<string, unknown> };
  };

  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.http.get('/swagger/docs-json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(async () => {
    await t?.close();
  });

  const operation = (method: string, path: string): Operation | undefined => doc.paths[path]?.[method];

  it('declares the session cookie security scheme', () => {
    expect(doc.components.securitySchemes.session).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'bm_session' }),
    );
  });

  it('requires the two key headers together on every key-pair route (one security requirement naming both)', () => {
    const keyRoutes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(
          ([, op]) =>
            JSON.stringify(op.security ?? []).includes('accessKey') ||
            JSON.stringify(op.security ?? []).includes('secretKey'),
        )
        .map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, security: op.security })),
    );
    expect(keyRoutes.map((r) => r.route)).toEqual(
      expect.arrayContaining(['POST /messages', 'GET /messages', 'GET /messages/{id}', 'GET /messages/analytics']),
    );
    expect(
      keyRoutes.filter((r) => JSON.stringify(r.security) !== JSON.stringify([{ accessKey: [], secretKey: [] }])),
    ).toEqual([]);
  });

  it('types every error answer as the error envelope, and carries the package version', () => {
    const untyped = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).flatMap(([method, op]) =>
        Object.entries(op.responses)
          .filter(([status, r]) => {
            const schema = r.content?.['application/json']?.schema;
            // The envelope itself, or the envelope with a typed `data` (allOf: envelope, {data}).
            const envelope = schema?.$ref ?? schema?.allOf?.[0]?.$ref;
            return Number(status) >= 400 && envelope !== '#/components/schemas/ErrorEnvelope';
          })
          .map(([status]) => `${method.toUpperCase()} ${path} ${status}`),
      ),
    );
    expect(untyped).toEqual([]);
    // A send the upstream platform refused (or that timed out) carries the stored failed message in `data`.
    for (const status of ['422', '424', '429', '502']) {
      expect(doc.paths['/messages']!.post!.responses[status]!.content!['application/json']!.schema).toEqual({
        allOf: [
          { $ref: '#/components/schemas/ErrorEnvelope' },
          { type: 'object', properties: { data: { $ref: '#/components/schemas/MessageView' } } },
        ],
      });
    }
    expect(doc.info.version).toBe((JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version);
  });

  it('documents the key routes with operation ids and envelope-wrapped (page) schemas', () => {
    const list = operation('get', '/api-keys')!;
    expect(list.operationId).toBe('listApiKeys');
    const data = (
      list.responses['200']!.content!['application/json']!.schema as {
        properties: { data: { allOf: Array<Record<string, unknown>> } };
      }
    ).properties.data;
    expect(data.allOf[0]).toEqual({ $ref: '#/components/schemas/PageInfo' });
    expect(operation('post', '/api-keys')!.operationId).toBe('createApiKey');
    expect(operation('delete', '/api-keys/{id}')!.operationId).toBe('revokeApiKey');
    const ids = {
      'post /messages': 'sendMessage',
      'get /messages': 'listMessages',
      'get /messages/{id}': 'getMessage',
      'get /messages/analytics': 'getMessageAnalytics',
    };
    for (const [route, id] of Object.entries(ids)) {
      const [method, path] = route.split(' ') as [string, string];
      expect([route, operation(method, path)?.operationId]).toEqual([route, id]);
    }
    const sent = operation('post', '/messages')!.responses['200']!.content!['application/json']!.schema as {
      properties: { data: unknown };
    };
    expect(sent.properties.data).toEqual({ $ref: '#/components/schemas/MessageView' });
  });

  it('gives every operation an operation id a person would write and one success answer typed as the envelope', () => {
    // Not JSON: Meta's handshake answers the challenge as text/plain, the media routes stream the file.
    const raw: Record<string, string> = {
      verifyWebhookSubscription: 'text/plain',
      downloadMedia: 'application/octet-stream',
      downloadInboundMedia: 'application/octet-stream',
    };
    const gaps: string[] = [];
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const route = `${method.toUpperCase()} ${path}`;
        const id = op.operationId ?? '';
        if (!/^[a-z]+(?:[A-Z][a-z]+)+$|^[a-z]+$/.test(id)) gaps.push(`${route}: operationId ${id || 'missing'}`);
        if (ids.has(id)) gaps.push(`${route}: operationId ${id} used twice`);
        ids.add(id);
        const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'));
        if (success.length !== 1) {
          gaps.push(`${route}: ${success.length} success answers`);
          continue;
        }
        const content = success[0]![1].content ?? {};
        if (raw[id]) {
          if (!content[raw[id]]?.schema) gaps.push(`${route}: no ${raw[id]} schema`);
          continue;
        }
        const schema = content['application/json']?.schema as
          { required?: string[]; properties?: { data?: object } } | undefined;
        if (!schema?.properties?.data || !schema.required?.includes('data'))
          gaps.push(`${route}: success answer not the envelope with typed data`);
      }
    }
    expect(gaps).toEqual([]);
  });

  it('documents every console route', () => {
    const missing = CONSOLE_OPERATIONS.filter(({ method, path }) => !operation(method, path)).map(
      ({ method, path }) => `${method.toUpperCase()} ${path}`,
    );
    expect(missing).toEqual([]);
  });

  it('puts the session scheme, and only it, on every console route that needs a session', () => {
    const wrong = CONSOLE_OPERATIONS.filter(({ method, path, session }) => {
      const security = operation(method, path)?.security;
      return session === false
        ? security !== undefined && security.length > 0
        : JSON.stringify(security) !== JSON.stringify([{ session: [] }]);
    }).map(
      ({ method, path }) => `${method.toUpperCase()} ${path}: ${JSON.stringify(operation(method, path)?.security)}`,
    );
    expect(wrong).toEqual([]);
  });

  it('documents the error responses of every console route, each with a description', () => {
    const gaps: string[] = [];
    for (const { method, path, errors, session } of CONSOLE_OPERATIONS) {
      const responses = operation(method, path)?.responses ?? {};
      // Every route behind a session is rate limited (per session and per address).
      for (const status of session === false ? errors : [...errors, 429]) {
        if (!responses[String(status)]?.description) gaps.push(`${method.toUpperCase()} ${path} ${status}`);
      }
      const success = Object.keys(responses).filter((s) => s.startsWith('2'));
      if (success.length !== 1)
        gaps.push(`${method.toUpperCase()} ${path} success response: ${success.join(',') || 'none'}`);
    }
    expect(gaps).toEqual([]);
  });

  it('answers 401 without a cookie on every operation it marks with the session scheme', async () => {
    const secured = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security?.some((s) => 'session' in s))
        .map(([method]) => [method, path.replace(/\{wabaId\}/g, '310000000000001').replace(/\{id\}/g, '1')] as const),
    );
    expect(secured.length).toBeGreaterThanOrEqual(CONSOLE_OPERATIONS.filter((o) => o.session !== false).length);
    const answers: string[] = [];
    for (const [method, path] of secured) {
      const res = await t.http[method as 'get' | 'post' | 'put' | 'delete'](path);
      if (res.status !== 401) answers.push(`${method.toUpperCase()} ${path} → ${res.status}`);
    }
    expect(answers).toEqual([]);
  });
});
