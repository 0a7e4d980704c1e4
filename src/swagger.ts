import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { SWAGGER_ACCESS_KEY, SWAGGER_SECRET_KEY, SWAGGER_SESSION } from './auth/auth.decorators.js';
import { sessionCookieName } from './auth/cookies.js';
import { AppConfig } from './core/config/app-config.js';

export const SWAGGER_PATH = 'swagger/docs';

/** OpenAPI at /swagger/docs (UI) and /swagger/docs-json, with the key-pair and console-session schemes. */
export function setupSwagger(app: INestApplication): void {
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
          '422 `Field Validation Failed`. Every response carries `x-request-id`.',
          '',
          'Message routes use an API key pair (`x-access-key` + `x-secret-key`); console routes use the session',
          `cookie \`${cookie}\` set by \`POST /auth/login\`.`,
        ].join('\n'),
      )
      .setVersion('1.0')
      .addApiKey({ type: 'apiKey', in: 'header', name: 'x-access-key', description: 'Public half, `ak_…`' }, SWAGGER_ACCESS_KEY)
      .addApiKey({ type: 'apiKey', in: 'header', name: 'x-secret-key', description: 'Secret half, `sk_…` (server side only)' }, SWAGGER_SECRET_KEY)
      .addCookieAuth(cookie, { type: 'apiKey', in: 'cookie', name: cookie, description: 'Console session (HttpOnly cookie)' }, SWAGGER_SESSION)
      .build(),
  );
  SwaggerModule.setup(SWAGGER_PATH, app, document, { jsonDocumentUrl: `${SWAGGER_PATH}-json` });
}
