import type { INestApplication } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { DocumentBuilder, SwaggerModule, getSchemaPath, type OpenAPIObject } from '@nestjs/swagger';
import { SWAGGER_ACCESS_KEY, SWAGGER_SECRET_KEY, SWAGGER_SESSION } from './auth/auth.decorators.js';
import { sessionCookieName } from './auth/cookies.js';
import { AppConfig } from './core/config/app-config.js';
import { ErrorEnvelopeDoc } from './core/http/openapi.js';

export const SWAGGER_PATH = 'swagger/docs';

/** OpenAPI at /swagger/docs (UI) and /swagger/docs-json, with the key-pair and console-session schemes. */
export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup(SWAGGER_PATH, app, buildOpenApiDocument(app), { jsonDocumentUrl: `${SWAGGER_PATH}-json` });
}

/**
 * The OpenAPI document of the application's routes. Needs the application created, not listening nor
 * connected: `npm run openapi:types` builds it in-process for the console's generated types.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const cookie = sessionCookieName(app.get(AppConfig));
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Business Messaging API')
      .setDescription(
        [
          'Send WhatsApp template and text messages through the WhatsApp Business Cloud platform and read back',
          'their lifecycle. Every response uses one envelope: `{statusCode, message, data}` on success (message',
          '`Success`), `{statusCode, message, errors?}` on failure, with one `{field, message}` per failing field on',
          '422 `Field Validation Failed`. Every response carries `x-request-id`. A request body is JSON: one sent',
          'without `Content-Type: application/json` is refused with 415 naming `content-type`.',
          '',
          'Message routes use an API key pair (`x-access-key` + `x-secret-key`); console routes use the session',
          `cookie \`${cookie}\` set by \`POST /auth/login\`.`,
        ].join('\n'),
      )
      .setVersion(packageVersion())
      .addApiKey(
        { type: 'apiKey', in: 'header', name: 'x-access-key', description: 'Public half, `ak_…`' },
        SWAGGER_ACCESS_KEY,
      )
      .addApiKey(
        { type: 'apiKey', in: 'header', name: 'x-secret-key', description: 'Secret half, `sk_…` (server side only)' },
        SWAGGER_SECRET_KEY,
      )
      .addCookieAuth(
        cookie,
        { type: 'apiKey', in: 'cookie', name: cookie, description: 'Console session (HttpOnly cookie)' },
        SWAGGER_SESSION,
      )
      .build(),
    { extraModels: [ErrorEnvelopeDoc] },
  );
  withErrorEnvelopes(document);
  freeFormObjectsOpen(document);
  return document;
}

/** package.json's version: the document's `info.version` moves with the service. */
function packageVersion(): string {
  const url = new URL('../package.json', import.meta.url);
  const fallback = new URL('../../package.json', import.meta.url);
  for (const candidate of [url, fallback]) {
    try {
      return (JSON.parse(readFileSync(candidate, 'utf8')) as { version: string }).version;
    } catch {
      // src/ (tests) is one level below package.json, dist/src/ (build) two.
    }
  }
  return '0.0.0';
}

/**
 * Every error answer of the API is the error envelope `{statusCode, message, errors?}`: any 4xx/5xx response
 * documented with a description only gets that schema, so generated clients type their errors. Each gets an
 * example of its own status (the schema's example is the 422's, which Swagger UI would show under a 401 too).
 */
function withErrorEnvelopes(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const op of [item.get, item.post, item.put, item.patch, item.delete]) {
      if (op?.requestBody && 'content' in op.requestBody && op.requestBody.content['application/json']) {
        op.responses['415'] ??= {
          description:
            'The body is not sent as `Content-Type: application/json` (missing, or another type): `errors` names `content-type`',
        };
      }
      for (const [status, response] of Object.entries(op?.responses ?? {})) {
        const code = Number(status);
        if (code < 400 || !response || !('description' in response)) continue;
        response.content ??= { 'application/json': { schema: { $ref: getSchemaPath(ErrorEnvelopeDoc) } } };
        const json = response.content['application/json'];
        if (json && code !== 422) json.example ??= { statusCode: code, message: STATUS_CODES[code] ?? 'Error' };
      }
    }
  }
}

/**
 * `type: object` with no properties (Meta's objects passed through as they are: template components, media
 * parameters, raw webhook items) is free-form. Said explicitly, or generators type it as an object that may
 * have no keys at all (openapi-typescript: `Record<string, never>`), and a client can neither send nor read one.
 */
function freeFormObjectsOpen(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(freeFormObjectsOpen);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  if (
    schema.type === 'object' &&
    !('properties' in schema) &&
    !('additionalProperties' in schema) &&
    !('allOf' in schema || 'oneOf' in schema || 'anyOf' in schema)
  ) {
    schema.additionalProperties = true;
  }
  Object.values(schema).forEach(freeFormObjectsOpen);
}
