import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { eventually, onboard, type Tenant } from '../utils/factories.js';
import { countDeliveries, countEvents } from '../utils/messaging-rows.js';
import { rawRequest, type RawRequest, type RawResponse } from '../utils/raw-http.js';
import { startStack, type Stack } from '../utils/stack.js';
import { bodyDefinition } from '../utils/template-components.js';
import { signatureHeader } from '../../simulator/payloads/signature.js';

/**
 * Bad-input sweep: malformed and hostile input to every route the Swagger document lists (read at test time,
 * so a new route is swept without touching this file) plus the webhook receiver. Every answer must be a clear
 * 4xx envelope (`statusCode` = the HTTP status, a `message`, `errors[]` naming the field on 422), never a 5xx;
 * nothing the sweep's organization owns may change; the server must be healthy afterwards.
 *
 * Requests that would legitimately succeed must not write, so each route gets a base that passes validation but
 * is refused by a business rule (an unknown or already connected WABA, an existing email, a template that is not
 * synced...): a hostile value in one field then reaches the handler (and the database) without creating
 * anything. Routes without a body schema (syncs, deletes, logout) only get hostile path values and bodies the
 * parser refuses before routing, never a valid path with valid credentials. A new write route needs a safe base
 * in SAFE_BASES; without one the sweep builds a base from the schema's examples and the row counts tell.
 *
 * NUL characters and unpaired surrogates are refused wherever they appear (422 naming the field), bodies nested
 * deeper than the parser allows with a 400. SWEEP_VERBOSE=1 prints every request and its answer.
 *
 * GET routes may answer 200 to a hostile filter value (a template name with quotes is a valid filter): such an
 * answer must be a success envelope and, for a list, match nothing (an injection would widen it to the tenant's
 * message).
 */

// Every route of the document, each with dozens of cases (the campaign routes added nine): minutes on a busy host.
// A ceiling: about a minute on a quiet host; several times that on a slow, busy one (thousands of requests).
jest.setTimeout(900_000);

// ---------------------------------------------------------------------------------------------------------
// hostile values

const KB = 1024;
const JSON_CT = { 'content-type': 'application/json' };
const HUGE = 'x'.repeat(100 * KB);

/** Strings that are hostile but may be perfectly valid content for a free-text field. */
const HOSTILE_STRINGS: Record<string, string> = {
  'sql injection': "' OR 1=1 --",
  'sql injection (stacked)': '1; DROP TABLE messages; --',
  'sql injection (quote)': '" OR ""="',
  'json injection ($ne)': '{"$ne":null}',
  'json injection (__proto__)': '{"__proto__":{"polluted":"yes"}}',
  emoji: '😀🚀👩‍👩‍👧',
  'rtl override': '\u202Eevil\u202C',
  'nul byte': 'a\u0000b',
  'lone high surrogate': 'a\ud800b',
  'lone low surrogate': '\udfff',
  'zero width': '\u200b\u200b',
  'control chars': '\u0001\u0007\u001b[31m',
  'newlines (header injection)': 'a\r\nSet-Cookie: x=1',
  'path traversal': '../../../etc/passwd',
  'huge (100 kB)': HUGE,
  empty: '',
  blank: '   ',
};

/** JSON values of the wrong type for a field. */
const WRONG_TYPES: Record<string, unknown> = {
  number: 12345,
  float: 1.5,
  negative: -1,
  true: true,
  false: false,
  null: null,
  'empty array': [],
  array: ['x'],
  'empty object': {},
  'object ($ne)': { $ne: null },
  'object (__proto__)': JSON.parse('{"__proto__":{"polluted":"yes"}}') as unknown,
};

/** Path segments, already URL-encoded as sent (some are not valid UTF-8 or not valid percent-encoding). */
const HOSTILE_PATH_SEGMENTS: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(HOSTILE_STRINGS)
      .filter(
        ([k]) => !k.startsWith('lone') && k !== 'huge (100 kB)' && k !== 'empty' && k !== 'newlines (header injection)',
      )
      .map(([k, v]) => [k, encodeURIComponent(v)]),
  ),
  'encoded lone surrogate (CESU-8)': '%ED%A0%80',
  'invalid utf-8': '%FF%FE',
  'bad percent-encoding': '%E0%A4%A',
  'lone percent': '%',
  'encoded slash traversal': '..%2F..%2Fetc%2Fpasswd',
  'long (8 kB)': 'y'.repeat(8 * KB),
  negative: '-1',
  zero: '0',
  float: '1.5',
  // Row ids are 64-bit (JSON numbers up to 2^53 - 1): above 2^31 and 2^32 is an id like any other, beyond 2^53 not one.
  'beyond int32': '3000000000',
  'beyond uint32': '4294967297',
  'beyond 2^53': '9007199254740993',
  'beyond int64': '99999999999999999999999',
  'null literal': 'null',
  __proto__: '__proto__',
  constructor: 'constructor',
};

/** Query values, already URL-encoded. */
const HOSTILE_QUERY_VALUES: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(HOSTILE_STRINGS)
      .filter(([k]) => !k.startsWith('lone') && k !== 'huge (100 kB)')
      .map(([k, v]) => [k, encodeURIComponent(v)]),
  ),
  'encoded lone surrogate (CESU-8)': '%ED%A0%80',
  'invalid utf-8': '%FF%FE',
  'lone percent': '%',
  'long (8 kB)': 'q'.repeat(8 * KB),
};

// ---------------------------------------------------------------------------------------------------------
// the OpenAPI document

interface Schema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  example?: unknown;
  default?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  nullable?: boolean;
}

interface Operation {
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  security?: Array<Record<string, string[]>>;
}

interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface Route {
  method: string;
  path: string;
  op: Operation;
  auth: 'session' | 'key' | 'none';
  /** The resolved JSON body schema, when the route takes one. */
  body?: Schema;
}

function resolve(doc: OpenApi, schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  if (schema.$ref) return resolve(doc, doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')]);
  if (schema.allOf?.length) {
    const parts = schema.allOf.map((s) => resolve(doc, s) ?? {});
    return {
      type: 'object',
      properties: Object.assign({}, ...parts.map((p) => p.properties)),
      required: parts.flatMap((p) => p.required ?? []),
    };
  }
  return schema;
}

function routesOf(doc: OpenApi): Route[] {
  const routes: Route[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      const auth = schemes.includes('session') ? 'session' : schemes.length > 0 ? 'key' : 'none';
      const body = resolve(doc, op.requestBody?.content?.['application/json']?.schema);
      routes.push({ method: method.toUpperCase(), path, op, auth, body: body?.properties ? body : undefined });
    }
  }
  return routes;
}

/** One field of a body schema, with its dotted path (array items as index 0) and declared type. */
interface Field {
  path: string;
  type: string;
  required: boolean;
  /** null is one of its values (a required field may be nullable: a setting's "the default"). */
  nullable: boolean;
}

function fieldsOf(doc: OpenApi, schema: Schema, prefix = '', depth = 0): Field[] {
  const out: Field[] = [];
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    const prop = resolve(doc, raw) ?? {};
    const path = prefix ? `${prefix}.${name}` : name;
    const type = prop.type ?? (prop.properties ? 'object' : prop.enum ? 'string' : 'unknown');
    out.push({ path, type, required: (schema.required ?? []).includes(name), nullable: prop.nullable === true });
    if (depth < 2 && prop.properties) out.push(...fieldsOf(doc, prop, path, depth + 1));
    const items = resolve(doc, prop.items);
    if (depth < 2 && type === 'array' && items?.properties) out.push(...fieldsOf(doc, items, `${path}.0`, depth + 1));
  }
  return out;
}

/** A body from the schema's examples and defaults (for routes without a safe base). */
function exampleOf(doc: OpenApi, schema: Schema | undefined): unknown {
  const s = resolve(doc, schema) ?? {};
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (s.enum?.length) return s.enum[0];
  if (s.properties) {
    return Object.fromEntries(
      Object.entries(s.properties)
        .filter(([k]) => (s.required ?? []).includes(k))
        .map(([k, v]) => [k, exampleOf(doc, v)]),
    );
  }
  if (s.type === 'array') return [exampleOf(doc, s.items)];
  if (s.type === 'integer' || s.type === 'number') return 1;
  if (s.type === 'boolean') return false;
  return 'sweep';
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const root = structuredClone(target);
  const keys = path.split('.');
  let node: Record<string, unknown> | unknown[] = root;
  for (const [i, key] of keys.entries()) {
    const last = i === keys.length - 1;
    const k = Array.isArray(node) ? Number(key) : key;
    if (last) {
      (node as Record<string | number, unknown>)[k] = value;
    } else {
      const next = (node as Record<string | number, unknown>)[k];
      const child = typeof next === 'object' && next !== null ? next : /^\d+$/.test(keys[i + 1]!) ? [] : {};
      (node as Record<string | number, unknown>)[k] = child;
      node = child as Record<string, unknown>;
    }
  }
  return root;
}

// ---------------------------------------------------------------------------------------------------------
// cases

interface Case {
  route: string;
  label: string;
  req: RawRequest;
  /** The body or query field the case breaks with a wrong type or an oversize value: a 422 must name it. */
  names?: string;
  /** A GET whose filter is hostile: a 200 is allowed, must match nothing. */
  mayMatchNothing?: boolean;
  /** The status this case must get, when it is certain (e.g. 413). */
  status?: number;
  /** Nothing hostile reaches the route's logic: any envelope below 500 will do. */
  benign?: boolean;
}

interface Result {
  c: Case;
  res?: RawResponse;
  error?: string;
  problem?: string;
}

describe('Bad-input sweep: every route answers malformed and hostile input with a clear 4xx', () => {
  let stack: Stack;
  let tenant: Tenant;
  let doc: OpenApi;
  let routes: Route[];
  let messageId: number;
  let baseline: Record<string, number>;
  const marker = `sweep-${randomBytes(6).toString('hex')}`;
  const results: Result[] = [];

  const UNKNOWN_WABA = '399999999999990';
  const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

  /**
   * Settings: every well-typed body is a valid setting (answered 200 and audited), so only what is not (a wrong
   * type, an unknown field, a body that is no JSON object) must be refused.
   */
  const SETTINGS = new Set(['PATCH /organization/settings']);

  /** Valid-looking bodies that a business rule refuses without writing anything. */
  const safeBases = (): Record<string, Array<{ body: Record<string, unknown>; fields?: (f: string) => boolean }>> => ({
    // The email exists: 409 (or 422 for a bad field), never a new organization.
    'POST /auth/signup': [
      {
        body: { email: tenant.operator.email, password: 'correct horse battery staple', organizationName: 'Sweep Org' },
      },
    ],
    'POST /auth/login': [{ body: { email: `nobody-${marker}@example.test`, password: 'wrong password 123' } }],
    // A wrong current password: 422 naming currentPassword, nothing changed.
    'POST /auth/password': [
      { body: { currentPassword: 'not the sweep password', newPassword: 'a sweep passphrase 123' } },
    ],
    // Unknown WABA: the token goes to the upstream check, which refuses it.
    'POST /business-accounts': [
      { body: { wabaId: UNKNOWN_WABA, accessToken: 'sweep-not-a-token', name: 'Sweep WABA' } },
    ],
    'PUT /business-accounts/{wabaId}/access-token': [{ body: { accessToken: 'sweep-not-a-token' } }],
    // The organization already has its INVITATIONS_MAX_PENDING (1) pending invitation: 409 before another is stored.
    // (An already registered email is no refusal any more: the answer must not tell whether it is registered.)
    'POST /invitations': [{ body: { email: `sweep-${marker}@example.test`, role: 'member' } }],
    // Unknown WABA: 404 before anything is stored.
    'POST /api-keys': [{ body: { wabaId: UNKNOWN_WABA, name: 'Sweep key' } }],
    // A language Meta has no template in (422 naming language), or for the language field itself a category that
    // is none of Meta's (422 naming category): never a template created at Meta or stored.
    'POST /business-accounts/{wabaId}/templates': [
      {
        body: {
          name: `sweep_${marker}`.toLowerCase().replace(/[^a-z0-9_]/g, '_'),
          language: 'not-a-language',
          category: 'UTILITY',
          components: [bodyDefinition('Hi {{1}}', ['Sweep'])],
        },
        fields: (f) => f !== 'language',
      },
      {
        body: {
          name: `sweep_${marker}`.toLowerCase().replace(/[^a-z0-9_]/g, '_'),
          language: 'en_GB',
          category: 'NOT_A_CATEGORY',
          components: [bodyDefinition('Hi {{1}}', ['Sweep'])],
        },
      },
    ],
    // A template that is not synced: 422 naming templateName, no campaign stored, nothing sent.
    'POST /business-accounts/{wabaId}/campaigns': [
      {
        body: {
          name: 'Sweep campaign',
          phoneNumberId: tenant.account.phoneNumberId,
          templateName: 'sweep_not_synced',
          templateLanguage: 'en_GB',
          recipients: [{ to: '447700900123' }],
        },
      },
    ],
    // A template that is not synced, or text outside the 24 h window: 422 before any upstream call or row.
    'POST /messages': [
      {
        body: {
          phoneNumberId: tenant.account.phoneNumberId,
          to: '447700900123',
          type: 'template',
          templateName: 'sweep_not_synced',
          templateLanguage: 'en_GB',
          components: [
            {
              type: 'button',
              sub_type: 'quick_reply',
              index: '0',
              parameters: [{ type: 'payload', payload: 'sweep' }],
            },
          ],
        },
        fields: (f) => !f.startsWith('text'),
      },
      {
        body: {
          phoneNumberId: tenant.account.phoneNumberId,
          to: '447700900123',
          type: 'text',
          text: { body: 'Hello' },
        },
        fields: (f) => f.startsWith('text'),
      },
    ],
  });

  /** Path values that exist for the tenant, used only where the route cannot write with them (GET, or a body schema that refuses first). */
  const validPathValue = (route: Route, name: string): string => {
    if (name === 'wabaId') return tenant.account.wabaId;
    if (route.path.startsWith('/messages/') || route.path.includes('/messages/{id}')) return String(messageId);
    if (route.path.startsWith('/api-keys')) return UNKNOWN_UUID;
    return '2147483000';
  };

  const credentials = (route: Route): Record<string, string> => {
    if (route.auth === 'session') return { cookie: tenant.operator.cookie };
    if (route.auth === 'key') return { ...tenant.key.headers };
    return {};
  };

  const fill = (route: Route, values: Record<string, string> = {}): string =>
    route.path.replace(
      /\{(\w+)\}/g,
      (_, name: string) => values[name] ?? encodeURIComponent(validPathValue(route, name)),
    );

  function casesFor(route: Route): Case[] {
    const id = `${route.method} ${route.path}`;
    const cases: Case[] = [];
    const auth = credentials(route);
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const queryParams = (route.op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    const isGet = route.method === 'GET';
    // A write route without a body schema runs its handler on any JSON body: only hostile paths for it.
    const validPathIsSafe = isGet || route.body !== undefined;
    const add = (label: string, req: Omit<RawRequest, 'method'>, extra: Partial<Case> = {}) =>
      cases.push({ route: id, label, req: { method: route.method, ...req }, ...extra });
    const hostilePath =
      pathParams.length > 0
        ? fill(route, Object.fromEntries(pathParams.map((p) => [p, '%27%20OR%201%3D1%20--'])))
        : null;
    // Where parser-level cases go: the valid path when that is safe, else a hostile one (or the route itself,
    // since the parser refuses these bodies before any handler runs).
    const parserPath = fill(route);

    // --- bodies the parser refuses before routing (safe on any route) --------------------------------
    if (route.path !== '/webhooks/whatsapp' || route.method !== 'POST') {
      const limit = 1024 * 1024;
      add(
        'malformed JSON',
        { path: parserPath, headers: { ...auth, ...JSON_CT }, body: '{"phoneNumberId": "1", ' },
        { status: 400 },
      );
      add('truncated JSON', { path: parserPath, headers: { ...auth, ...JSON_CT }, body: '[' }, { status: 400 });
      add('bare word', { path: parserPath, headers: { ...auth, ...JSON_CT }, body: 'nul' }, { status: 400 });
      // A campaign's creation takes up to CAMPAIGN_BODY_LIMIT_BYTES (100,000 recipients): 1 MB reaches validation there.
      const bigBodyOk = route.method === 'POST' && route.path === '/business-accounts/{wabaId}/campaigns';
      add(
        'JSON over 1 MB',
        { path: parserPath, headers: { ...auth, ...JSON_CT }, body: JSON.stringify({ a: 'x'.repeat(limit) }) },
        bigBodyOk ? { status: 422 } : { status: 413 },
      );
      add(
        'unsupported charset',
        { path: parserPath, headers: { ...auth, 'content-type': 'application/json; charset=latin1' }, body: '{}' },
        { status: 415 },
      );
      add(
        'unsupported content-encoding',
        { path: parserPath, headers: { ...auth, ...JSON_CT, 'content-encoding': 'compress' }, body: '{}' },
        { status: 415 },
      );
      add(
        'gzip (compressed bodies are refused: issue 37)',
        { path: parserPath, headers: { ...auth, ...JSON_CT, 'content-encoding': 'gzip' }, body: '{"a":1}' },
        { status: 415 },
      );
    }

    // --- credentials ------------------------------------------------------------------------------------
    const authPath = hostilePath ?? parserPath;
    if (route.auth === 'session') {
      add('no session cookie', { path: authPath }, { status: 401 });
      add(
        'forged session cookie',
        { path: authPath, headers: { cookie: `bm_session=${'A'.repeat(43)}` } },
        { status: 401 },
      );
      add(
        'session cookie with sql injection',
        { path: authPath, headers: { cookie: `bm_session=${encodeURIComponent("' OR 1=1 --")}` } },
        { status: 401 },
      );
      add(
        'session cookie of 8 kB',
        { path: authPath, headers: { cookie: `bm_session=${'s'.repeat(8 * KB)}` } },
        { status: 401 },
      );
    }
    if (route.auth === 'key') {
      add('no key headers', { path: authPath }, { status: 401 });
      add('access key only', { path: authPath, headers: { 'x-access-key': tenant.key.accessKey } }, { status: 401 });
      add(
        'duplicate x-access-key headers',
        {
          path: authPath,
          headers: { 'x-access-key': [tenant.key.accessKey, 'ak_other'], 'x-secret-key': tenant.key.secretKey },
        },
        { status: 401 },
      );
      add(
        'duplicate x-secret-key headers',
        {
          path: authPath,
          headers: {
            'x-access-key': tenant.key.accessKey,
            'x-secret-key': [tenant.key.secretKey, tenant.key.secretKey],
          },
        },
        { status: 401 },
      );
      add(
        '4 kB key headers',
        {
          path: authPath,
          headers: { 'x-access-key': `ak_${'k'.repeat(4 * KB)}`, 'x-secret-key': `sk_${'k'.repeat(4 * KB)}` },
        },
        { status: 401 },
      );
      add(
        'sql injection in key headers',
        { path: authPath, headers: { 'x-access-key': "ak_' OR 1=1 --", 'x-secret-key': "sk_' OR '1'='1" } },
        { status: 401 },
      );
      add(
        'latin-1 bytes in key headers',
        { path: authPath, headers: { 'x-access-key': 'ak_\u00ff\u00fe', 'x-secret-key': 'sk_\u00e9' } },
        { status: 401 },
      );
    }
    if (isGet) {
      // Valid credentials and path, junk in headers the API does not act on: any answer but a 5xx will do.
      add(
        '8 kB x-request-id and junk headers',
        {
          path: parserPath,
          headers: {
            ...auth,
            'x-request-id': 'r'.repeat(8 * KB),
            'x-forwarded-for': "' OR 1=1 --",
            'accept-language': '\u00ff'.repeat(100),
          },
        },
        { benign: true },
      );
    }

    // --- path parameters -------------------------------------------------------------------------------
    const pathCaseBody = route.body
      ? JSON.stringify(safeBases()[id]?.[0]?.body ?? exampleOf(doc, route.body))
      : undefined;
    for (const param of pathParams) {
      for (const [label, segment] of Object.entries(HOSTILE_PATH_SEGMENTS)) {
        // A contact is a phone number (8 to 15 digits) or a user id: 3000000000 is a number like any other, whose
        // export is empty and whose erasure erases nothing (200); it is no hostile id there.
        if (param === 'phoneOrUserId' && /^\d{8,15}$/.test(segment)) continue;
        add(
          `path ${param}: ${label}`,
          {
            path: fill(route, { [param]: segment }),
            headers: { ...auth, ...(route.body ? JSON_CT : {}) },
            body: pathCaseBody,
          },
          label === 'nul byte' ? { names: param } : {},
        );
      }
    }

    // --- query parameters (GET) --------------------------------------------------------------------------
    if (isGet) {
      const base = fill(route);
      for (const q of queryParams) {
        for (const [label, value] of Object.entries(HOSTILE_QUERY_VALUES)) {
          // An empty or blank filter may mean "no filter" (any answer but a 5xx will do); the rest must match nothing.
          const benign = label === 'empty' || label === 'blank';
          // NUL is never a valid filter (PostgreSQL cannot compare it): 422 naming the parameter.
          const extra: Partial<Case> = benign
            ? { benign }
            : label === 'nul byte'
              ? { names: q }
              : { mayMatchNothing: true };
          add(`query ${q}: ${label}`, { path: `${base}?${encodeURIComponent(q)}=${value}`, headers: auth }, extra);
        }
        add(`query ${q}: array`, { path: `${base}?${q}=1&${q}=2`, headers: auth }, { names: q, mayMatchNothing: true });
        add(
          `query ${q}: nested ($ne)`,
          { path: `${base}?${q}%5B%24ne%5D=1`, headers: auth },
          { mayMatchNothing: true },
        );
      }
      // A route that declares query parameters refuses unknown ones (422); one that declares none ignores them.
      const unknown: Partial<Case> = queryParams.length > 0 ? { names: marker } : { benign: true };
      add('query: unknown parameter', { path: `${base}?${marker}=1`, headers: auth }, unknown);
      add(
        'query: __proto__ pollution',
        { path: `${base}?__proto__%5Bpolluted%5D=yes&constructor%5Bprototype%5D%5Bpolluted%5D=yes`, headers: auth },
        queryParams.length > 0 ? {} : { benign: true },
      );
    }

    // --- JSON bodies ---------------------------------------------------------------------------------------
    if (route.body && validPathIsSafe) {
      const path = fill(route);
      const bases = safeBases()[id] ?? [{ body: exampleOf(doc, route.body) as Record<string, unknown> }];
      const fields = fieldsOf(doc, route.body);
      for (const f of fields) {
        const base = (bases.find((b) => b.fields?.(f.path) ?? true) ?? bases[0]!).body;
        for (const [label, value] of Object.entries(WRONG_TYPES)) {
          // A value of the declared type (or null for an optional field) is not a wrong type.
          const jsType = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
          const declared = f.type === 'integer' ? 'number' : f.type;
          const fits =
            jsType === declared ||
            (declared === 'number' && jsType === 'number') ||
            (jsType === 'null' && (!f.required || f.nullable)) ||
            declared === 'unknown';
          add(
            `body ${f.path}: ${label}`,
            { path, headers: { ...auth, ...JSON_CT }, body: JSON.stringify(setPath(base, f.path, value)) },
            fits ? (SETTINGS.has(id) ? { benign: true } : {}) : { names: f.path },
          );
        }
        if (f.type === 'string' || f.type === 'unknown') {
          for (const [label, value] of Object.entries(HOSTILE_STRINGS)) {
            // Oversized, NUL (PostgreSQL cannot store it) and lone surrogates (not Unicode): 422 naming the field.
            const named = label.startsWith('huge') || label === 'nul byte' || label.startsWith('lone');
            add(
              `body ${f.path}: ${label}`,
              { path, headers: { ...auth, ...JSON_CT }, body: JSON.stringify(setPath(base, f.path, value)) },
              named ? { names: f.path } : {},
            );
          }
        }
      }
      const first = bases[0]!.body;
      add(
        'body: unknown field',
        { path, headers: { ...auth, ...JSON_CT }, body: JSON.stringify({ ...first, [marker]: 1 }) },
        { names: marker },
      );
      add(
        'body: __proto__ and constructor keys',
        {
          path,
          headers: { ...auth, ...JSON_CT },
          body: JSON.stringify(first).replace(
            /^\{/,
            '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},',
          ),
        },
        SETTINGS.has(id) ? { benign: true } : {},
      );
      add('body: JSON array instead of object', {
        path,
        headers: { ...auth, ...JSON_CT },
        body: JSON.stringify([first]),
      });
      add('body: JSON string instead of object', { path, headers: { ...auth, ...JSON_CT }, body: '"sweep"' });
      add('body: JSON null', { path, headers: { ...auth, ...JSON_CT }, body: 'null' });
      add('body: empty', { path, headers: { ...auth, ...JSON_CT }, body: '' });
      // A body that is not sent as JSON is refused as such (415 naming the header), not read as an empty object.
      const notJson: Partial<Case> = { status: 415, names: 'content-type' };
      add('body: no content-type', { path, headers: auth, body: JSON.stringify(first) }, notJson);
      add(
        'body: text/plain',
        { path, headers: { ...auth, 'content-type': 'text/plain' }, body: JSON.stringify(first) },
        notJson,
      );
      add(
        'body: form-encoded',
        { path, headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=2' },
        notJson,
      );
      add('body: bytes that are not UTF-8', {
        path,
        headers: { ...auth, ...JSON_CT },
        body: Buffer.concat([Buffer.from('{"'), Buffer.from([0xff, 0xfe]), Buffer.from('":1}')]),
      });
      add(
        'body: deeply nested',
        { path, headers: { ...auth, ...JSON_CT }, body: `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}` },
        { status: 400 },
      );
      add(
        'body: deeply nested arrays',
        { path, headers: { ...auth, ...JSON_CT }, body: `${'['.repeat(5000)}${']'.repeat(5000)}` },
        { status: 400 },
      );
    }
    return cases;
  }

  /** The receiver: signed by Meta or refused before anything is stored. */
  function webhookCases(): Case[] {
    const route = 'POST /webhooks/whatsapp';
    const secret = stack.config.whatsappAppSecret;
    const valid = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: marker, changes: [] }] });
    const cases: Case[] = [];
    const add = (
      label: string,
      body: string | Buffer,
      headers: Record<string, string | string[]>,
      extra: Partial<Case> = {},
    ) => cases.push({ route, label, req: { method: 'POST', path: '/webhooks/whatsapp', headers, body }, ...extra });
    const signed = (body: string | Buffer) => ({
      'content-type': 'application/json',
      'x-hub-signature-256': signatureHeader(body, secret),
    });

    add('no signature', valid, { 'content-type': 'application/json' }, { status: 401 });
    add(
      'wrong signature',
      valid,
      { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
      { status: 401 },
    );
    add(
      'signature of another body',
      valid,
      { 'content-type': 'application/json', 'x-hub-signature-256': signatureHeader(`${valid} `, secret) },
      { status: 401 },
    );
    add(
      'sha1 signature',
      valid,
      { 'content-type': 'application/json', 'x-hub-signature-256': `sha1=${'0'.repeat(40)}` },
      { status: 401 },
    );
    add(
      'non-hex signature',
      valid,
      { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${'z'.repeat(64)}` },
      { status: 401 },
    );
    add(
      'duplicate signature headers',
      valid,
      {
        'content-type': 'application/json',
        'x-hub-signature-256': [signatureHeader(valid, secret), `sha256=${'0'.repeat(64)}`],
      },
      { status: 401 },
    );
    add(
      '8 kB signature',
      valid,
      { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${'a'.repeat(8 * KB)}` },
      { status: 401 },
    );
    add(
      'signature with sql injection',
      valid,
      { 'content-type': 'application/json', 'x-hub-signature-256': "sha256=' OR 1=1 --" },
      { status: 401 },
    );
    add('unsigned, no content-type', valid, {}, { status: 401 });
    add('unsigned, text/plain', valid, { 'content-type': 'text/plain' }, { status: 401 });
    add('unsigned malformed JSON', '{"object":', { 'content-type': 'application/json' }, { status: 401 });
    for (const [label, value] of Object.entries(HOSTILE_STRINGS)) {
      add(
        `unsigned, entry id: ${label}`,
        JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: value, changes: [], marker }] }),
        { 'content-type': 'application/json' },
        { status: 401 },
      );
    }
    // Signed (as Meta would) but not a delivery we can store.
    add(
      'signed malformed JSON',
      `{"object":"whatsapp_business_account","entry":[{"id":"${marker}"`,
      signed(`{"object":"whatsapp_business_account","entry":[{"id":"${marker}"`),
      { status: 400 },
    );
    const notDeliveries: Record<string, string> = {
      'JSON array': JSON.stringify([marker]),
      'JSON string': JSON.stringify(marker),
      'JSON number': '12345',
      'JSON null': 'null',
      'empty body': '',
      'another object type': JSON.stringify({ object: 'instagram', entry: [{ id: marker }] }),
      'object of wrong type': JSON.stringify({ object: 12345, entry: [{ id: marker }] }),
      'object as array': JSON.stringify({ object: ['whatsapp_business_account'], entry: [{ id: marker }] }),
      'no entry': JSON.stringify({ object: 'whatsapp_business_account', marker }),
      'entry as string': JSON.stringify({ object: 'whatsapp_business_account', entry: marker }),
      'entry as object': JSON.stringify({ object: 'whatsapp_business_account', entry: { id: marker } }),
      'entry null': JSON.stringify({ object: 'whatsapp_business_account', entry: null, marker }),
      '__proto__ object': `{"__proto__":{"object":"whatsapp_business_account"},"entry":[{"id":"${marker}"}]}`,
    };
    for (const [label, body] of Object.entries(notDeliveries))
      add(`signed ${label}`, body, signed(body), { status: 400 });
    const big = Buffer.from(
      JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [{ id: marker, pad: 'p'.repeat(3 * 1024 * 1024) }],
      }),
    );
    add('signed, over 3 MB', big, signed(big), { status: 413 });
    // Without a signature header the answer comes before the body is read: 401, whatever its size.
    add('unsigned, over 3 MB', big, { 'content-type': 'application/json' }, { status: 401 });
    // The verification handshake with wrong tokens.
    const verify = (label: string, query: string) =>
      cases.push({
        route: 'GET /webhooks/whatsapp',
        label,
        req: { method: 'GET', path: `/webhooks/whatsapp?${query}` },
        status: 403,
      });
    verify('no parameters', '');
    verify('wrong token', 'hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1');
    verify(
      'sql injection token',
      `hub.mode=subscribe&hub.verify_token=${encodeURIComponent("' OR 1=1 --")}&hub.challenge=1`,
    );
    verify('array token', 'hub.mode=subscribe&hub.verify_token=a&hub.verify_token=b&hub.challenge=1');
    verify('nul token', 'hub.mode=subscribe&hub.verify_token=%00&hub.challenge=%00');
    verify('wrong mode', `hub.mode=${encodeURIComponent('😀')}&hub.verify_token=x&hub.challenge=${'c'.repeat(8 * KB)}`);
    return cases;
  }

  /** How many results a list answer holds (a page's total, a plain list's length, analytics' total). */
  function matches(data: unknown): number {
    if (Array.isArray(data)) return data.length;
    if (typeof data !== 'object' || data === null) return 0;
    const d = data as { total?: unknown; items?: unknown; totals?: { total?: unknown } };
    if (typeof d.total === 'number') return d.total;
    if (Array.isArray(d.items)) return d.items.length;
    if (typeof d.totals?.total === 'number') return d.totals.total;
    return 0;
  }

  /** What makes an answer acceptable; the reason it is not, otherwise. */
  function judge(c: Case, res: RawResponse): string | undefined {
    const body = res.json as { statusCode?: unknown; message?: unknown; errors?: unknown; data?: unknown } | undefined;
    if (res.status >= 500) return `${res.status} (server error): ${res.text.slice(0, 200)}`;
    if (c.status !== undefined && res.status !== c.status)
      return `expected ${c.status}, got ${res.status}: ${res.text.slice(0, 200)}`;
    if (typeof body !== 'object' || body === null)
      return `${res.status} without a JSON envelope: ${JSON.stringify(res.text.slice(0, 200))}`;
    if (body.statusCode !== res.status)
      return `envelope statusCode ${String(body.statusCode)} differs from HTTP ${res.status}`;
    if (typeof body.message !== 'string' || body.message === '') return `${res.status} without a message`;
    if (c.benign) return undefined;
    if (res.status >= 200 && res.status < 300) {
      if (!(c.req.method === 'GET' && c.mayMatchNothing))
        return `${res.status}: a hostile request succeeded: ${res.text.slice(0, 200)}`;
      const found = matches(body.data);
      if (found > 0) return `200 with ${found} results for a hostile filter`;
      return undefined;
    }
    if (res.status < 400) return `unexpected ${res.status}`;
    if (res.status === 422 || res.status === 415) {
      const errors = body.errors as Array<{ field?: unknown; message?: unknown }> | undefined;
      if (!Array.isArray(errors) || errors.length === 0) return `${res.status} without errors[]`;
      if (errors.some((e) => typeof e.field !== 'string' || typeof e.message !== 'string' || e.message === ''))
        return `422 with a malformed errors[]: ${JSON.stringify(errors)}`;
      if (
        c.names &&
        !errors.some(
          (e) =>
            e.field === c.names ||
            String(e.field).startsWith(`${c.names}.`) ||
            c.names!.startsWith(`${String(e.field)}.`),
        )
      ) {
        return `${res.status} does not name ${c.names}: ${JSON.stringify(errors).slice(0, 300)}`;
      }
    }
    return undefined;
  }

  async function countRows(): Promise<Record<string, number>> {
    const org = tenant.operator.organizationId;
    const q = async (sql: string, ...params: unknown[]) =>
      (await stack.db.pool.query<{ n: number }>(sql, params)).rows[0]!.n;
    const ba = `SELECT id FROM business_accounts WHERE organization_id = $1::uuid`;
    return {
      organizations: await q(`SELECT count(*) AS n FROM organizations WHERE id = $1::uuid`, org),
      operators: await q(`SELECT count(*) AS n FROM operators WHERE organization_id = $1::uuid`, org),
      sessions: await q(
        `SELECT count(*) AS n FROM sessions WHERE operator_id IN (SELECT id FROM operators WHERE organization_id = $1::uuid)`,
        org,
      ),
      revokedSessions: await q(
        `SELECT count(*) AS n FROM sessions WHERE revoked_at IS NOT NULL AND operator_id IN (SELECT id FROM operators WHERE organization_id = $1::uuid)`,
        org,
      ),
      businessAccounts: await q(`SELECT count(*) AS n FROM business_accounts WHERE organization_id = $1::uuid`, org),
      disconnected: await q(
        `SELECT count(*) AS n FROM business_accounts WHERE organization_id = $1::uuid AND disconnected_at IS NOT NULL`,
        org,
      ),
      phoneNumbers: await q(`SELECT count(*) AS n FROM phone_numbers WHERE business_account_id IN (${ba})`, org),
      templates: await q(`SELECT count(*) AS n FROM templates WHERE business_account_id IN (${ba})`, org),
      apiKeys: await q(`SELECT count(*) AS n FROM api_keys WHERE organization_id = $1::uuid`, org),
      revokedKeys: await q(
        `SELECT count(*) AS n FROM api_keys WHERE organization_id = $1::uuid AND revoked_at IS NOT NULL`,
        org,
      ),
      // Audit entries of what the sweep may rightly do: sign in, export or erase a contact with unusual but valid
      // headers (the benign cases, answered 200: an erasure of nobody erases nothing, and is audited), and change
      // a setting to another valid value.
      auditLogs: await q(
        `SELECT count(*) AS n FROM audit_logs WHERE organization_id = $1::uuid
           AND action NOT IN ('operator.signed_in', 'operator.sign_in_failed', 'contact.exported', 'contact.erased',
                              'organization.settings_changed')`,
        org,
      ),
      messages: await q(`SELECT count(*) AS n FROM messages WHERE business_account_id IN (${ba})`, org),
      idempotencyKeys: await q(
        `SELECT count(*) AS n FROM idempotency_keys WHERE api_key_id IN (SELECT id FROM api_keys WHERE organization_id = $1::uuid)`,
        org,
      ),
      conversationWindows: await q(
        `SELECT count(*) AS n FROM conversation_windows WHERE waba_id = $1`,
        tenant.account.wabaId,
      ),
      events: await q(
        `SELECT count(*) AS n FROM events WHERE waba_id = $1 OR waba_id = $2`,
        tenant.account.wabaId,
        marker,
      ),
      eventCounts: await q(
        `SELECT count(*) AS n FROM event_counts WHERE waba_id = $1 OR waba_id = $2`,
        tenant.account.wabaId,
        marker,
      ),
      // The sweep's webhook bodies carry the marker: none may have been stored, waiting (the inbox) or processed.
      webhookDeliveries: await q(
        `SELECT count(*) AS n FROM (
           SELECT raw_body, waba_ids FROM webhook_inbox
           UNION ALL
           SELECT raw_body, waba_ids FROM webhook_deliveries
         ) d WHERE position(convert_to($1, 'UTF8') in raw_body) > 0 OR $2 = ANY (waba_ids)`,
        marker,
        tenant.account.wabaId,
      ),
      operatorsWithSweepEmail: await q(`SELECT count(*) AS n FROM operators WHERE email LIKE $1`, `%${marker}%`),
    };
  }

  beforeAll(async () => {
    // Limits high enough that the sweep sees validation, not throttling (429 is a 4xx too, but hides the rest).
    // With a worker: the status webhooks of the one valid message below are processed before the counting starts
    // (a worker of another suite on the same database would otherwise pick them up in the middle of the sweep).
    // Thousands of requests from one address and a few sessions within seconds: no rate limit may answer first.
    const unlimited = '1000000';
    stack = await startStack({
      worker: true,
      env: {
        RATE_LIMIT_PER_SECOND: unlimited,
        RATE_LIMIT_BURST: unlimited,
        LOGIN_MAX_FAILURES: unlimited,
        CONSOLE_RATE_LIMIT_PER_SECOND: unlimited,
        CONSOLE_RATE_LIMIT_BURST: unlimited,
        CONSOLE_ADDRESS_RATE_LIMIT_PER_SECOND: unlimited,
        CONSOLE_ADDRESS_RATE_LIMIT_BURST: unlimited,
        INVITATIONS_MAX_PENDING: '1',
      },
    });
    tenant = await onboard(stack, 'Bad Input Sweep');
    // The one pending invitation the organization may have: every invitation the sweep tries is refused (409).
    expect(
      (
        await stack.http
          .post('/invitations')
          .set('cookie', tenant.operator.cookie)
          .send({ email: `pending-${marker}@example.test` })
      ).status,
    ).toBe(201);
    // One message, so that a filter an injection widened would return it.
    const sent = await stack.http.post('/messages').set(tenant.key.headers).send({
      phoneNumberId: tenant.account.phoneNumberId,
      to: '447700900123',
      type: 'template',
      templateName: 'hello_world',
      templateLanguage: 'en_US',
    });
    expect(sent.status).toBe(200);
    messageId = sent.body.data.id;
    // Its status webhooks (sent, delivered, read) arrive from the simulator and are processed: count after them.
    const settled = await eventually(
      async () => {
        const [deliveries, pending, events] = await Promise.all([
          countDeliveries(stack, tenant.account.wabaId),
          countDeliveries(stack, tenant.account.wabaId, 'received'),
          countEvents(stack, tenant.account.wabaId, { processed: true }),
        ]);
        return deliveries >= 3 && pending === 0 && events >= 3;
      },
      { timeoutMs: 15_000 },
    );
    expect(settled).toBe(true);
    const swagger = await stack.http.get('/swagger/docs-json');
    expect(swagger.status).toBe(200);
    doc = swagger.body as OpenApi;
    routes = routesOf(doc);
    baseline = await countRows();
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('reads every route from the Swagger document, the webhook receiver included', () => {
    const ids = routes.map((r) => `${r.method} ${r.path}`);
    expect(ids).toEqual(
      expect.arrayContaining([
        'POST /messages',
        'GET /messages/{id}',
        'POST /auth/signup',
        'POST /webhooks/whatsapp',
        'GET /webhooks/events',
        'DELETE /api-keys/{id}',
      ]),
    );
    expect(routes.length).toBeGreaterThanOrEqual(30);
  });

  it('answers every malformed or hostile request with a 4xx envelope (422 naming the field), never a 5xx', async () => {
    const t = Date.now();
    const cases = [
      ...routes.filter((r) => !(r.method === 'POST' && r.path === '/webhooks/whatsapp')).flatMap(casesFor),
      ...webhookCases(),
    ];
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++]!;
        try {
          const res = await rawRequest(stack.url, c.req);
          results.push({ c, res, problem: judge(c, res) });
        } catch (err) {
          results.push({ c, error: String(err), problem: `no answer: ${String(err)}` });
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));

    const byStatus: Record<string, number> = {};
    for (const r of results) byStatus[r.res?.status ?? 'none'] = (byStatus[r.res?.status ?? 'none'] ?? 0) + 1;
    const problems = results.filter((r) => r.problem).map((r) => `${r.c.route} — ${r.c.label}: ${r.problem}`);
    const routesSwept = new Set(results.map((r) => r.c.route)).size;
    process.stdout.write(
      `[bad-input] ${results.length} requests over ${routesSwept} routes in ${((Date.now() - t) / 1000).toFixed(1)} s; answers ${JSON.stringify(byStatus)}; problems ${problems.length}\n`,
    );
    if (process.env.SWEEP_VERBOSE) {
      for (const r of results)
        process.stdout.write(`[bad-input] ${r.res?.status ?? '---'} ${r.c.route} — ${r.c.label}\n`);
    }
    expect(problems).toEqual([]);
    // Nothing reached Object.prototype (the API runs in this process).
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers a header block over the server limit with a 431 envelope', async () => {
    const res = await rawRequest(stack.url, {
      method: 'GET',
      path: '/health',
      headers: { 'x-junk': 'j'.repeat(20 * KB) },
    });
    expect(res.status).toBe(431);
    expect(res.json).toEqual(expect.objectContaining({ statusCode: 431, message: expect.any(String) }));
  });

  it('changed no row of the sweep’s organization, and stored no webhook delivery', async () => {
    expect(await countRows()).toEqual(baseline);
  });

  it('is still healthy afterwards: /health/ready is 200 and valid requests work', async () => {
    expect((await stack.http.get('/health/ready')).status).toBe(200);
    const me = await stack.http.get('/auth/me').set('cookie', tenant.operator.cookie);
    expect(me.status).toBe(200);
    const list = await stack.http.get('/messages').set(tenant.key.headers);
    expect(list.status).toBe(200);
    expect(list.body.data.total).toBe(1);
    const sent = await stack.http.post('/messages').set(tenant.key.headers).send({
      phoneNumberId: tenant.account.phoneNumberId,
      to: '447700900124',
      type: 'template',
      templateName: 'hello_world',
      templateLanguage: 'en_US',
    });
    expect(sent.status).toBe(200);
    expect(sent.body.data.status).toBe('sent');
  });
});
