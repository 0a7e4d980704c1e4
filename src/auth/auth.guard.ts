import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AppConfig } from '../core/config/app-config.js';
import { ApiError } from '../core/http/api-error.js';
import { API_KEY_HEADERS_MISSING, ApiKeyAuthenticator } from './api-keys/api-key.authenticator.js';
import { AUTH_KIND, SAME_ORIGIN_ONLY, type AuthKind } from './auth.decorators.js';
import { readSessionCookie, setSessionCookie } from './cookies.js';
import { assertSameOrigin } from './same-origin.js';
import type { ConsoleScope } from './request-scope.js';
import { hasRole, MINIMUM_ROLE, ROLE_MESSAGE, roleRefusal, type OperatorRole } from './roles.js';
import { SessionsService } from './sessions/sessions.service.js';

export const AUTHENTICATION_REQUIRED = 'Authentication required';
export const SESSION_INVALID = 'Session expired or invalid';

export const KEY_HEADERS = ['x-access-key', 'x-secret-key'] as const;

/**
 * Both key headers, or the contract's 401 `API key headers missing` with `errors` naming each missing header; a
 * caller who sent `Authorization: Bearer` (what most APIs want) is told that this one does not take it.
 */
function assertKeyHeaders(req: Request): void {
  const missing = KEY_HEADERS.filter((h) => typeof req.headers[h] !== 'string' || req.headers[h] === '');
  if (missing.length === 0) return;
  const bearer = /^bearer\s/i.test(req.headers.authorization ?? '');
  const why = bearer
    ? 'header is required (Authorization: Bearer is not used; send x-access-key and x-secret-key)'
    : 'header is required';
  throw new ApiError(401, API_KEY_HEADERS_MISSING, {
    errors: missing.map((field) => ({ field, message: `${field} ${why}` })),
  });
}

/**
 * Secure by default: every route must say how it is authenticated (@Public, @ApiKeyAuth, @ConsoleAuth).
 * A route that says nothing is refused, so a forgotten decorator cannot expose data. API-key routes never
 * accept a session cookie and console routes never accept a key pair.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly sessions: SessionsService,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const kind = this.reflector.getAllAndOverride<AuthKind | undefined>(AUTH_KIND, targets);
    const req = context.switchToHttp().getRequest<Request>();
    if (kind === 'console' || this.reflector.getAllAndOverride<boolean>(SAME_ORIGIN_ONLY, targets)) {
      assertSameOrigin(req, this.config.consoleAllowedOrigins);
    }
    switch (kind) {
      case 'public':
        return true;
      case 'apiKey':
        assertKeyHeaders(req);
        // Verified ahead of the body parser when the request may carry a body (auth/unauthenticated-rate-limit.ts).
        req.apiKey ??= await this.apiKeys.authenticate(req.headers['x-access-key'], req.headers['x-secret-key']);
        return true;
      case 'console': {
        const token = readSessionCookie(req, this.config);
        if (!token) throw new ApiError(401, AUTHENTICATION_REQUIRED);
        const checked = req.sessionCheck?.token === token ? req.sessionCheck.result : undefined;
        const session = checked !== undefined ? checked : await this.sessions.authenticateSliding(token);
        if (!session) throw new ApiError(401, SESSION_INVALID);
        req.operator = session.scope;
        this.assertRole(context, session.scope);
        if (session.renewedForSeconds !== undefined) {
          setSessionCookie(
            req,
            context.switchToHttp().getResponse<Response>(),
            this.config,
            token,
            session.renewedForSeconds,
          );
        }
        return true;
      }
      default:
        throw new ApiError(401, AUTHENTICATION_REQUIRED);
    }
  }

  /** The route's @Roles minimum; a console route without one is a programming error and is refused (secure by default). */
  private assertRole(context: ExecutionContext, scope: ConsoleScope): void {
    const targets = [context.getHandler(), context.getClass()];
    const minimum = this.reflector.getAllAndOverride<OperatorRole | undefined>(MINIMUM_ROLE, targets);
    if (!minimum)
      throw new Error(`console route ${context.getClass().name}.${context.getHandler().name} has no @Roles(...)`);
    if (!hasRole(scope.role, minimum))
      throw new ApiError(403, this.reflector.getAllAndOverride<string>(ROLE_MESSAGE, targets) ?? roleRefusal(minimum));
  }
}
