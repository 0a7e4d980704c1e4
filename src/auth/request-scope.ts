import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { ReadWindow } from './read-window.js';
import type { OperatorRole } from './roles.js';

/** Who is calling through an API key pair: the key's one business account is the whole scope. */
export interface ApiKeyScope {
  apiKeyId: string;
  organizationId: string;
  businessAccountId: string;
  wabaId: string;
  /**
   * Changes whenever the business account's upstream token is replaced (a fingerprint of its ciphertext), so
   * per-process token caches follow a reconnect as fast as the key lookup itself.
   */
  credentialVersion: string;
  /** What of the account's history the key pair's organization may read (a cut-off once its credentials failed). */
  window: ReadWindow;
}

/** Who is calling through the console: an operator of one organization. */
export interface ConsoleScope {
  operatorId: string;
  organizationId: string;
  email: string;
  sessionId: string;
  /** The operator's role in its organization, read with the session on every request (a change applies at once). */
  role: OperatorRole;
  /** Runs the platform (the stored flag, granted out of band with npm run platform-admin; never from an email). */
  platformAdmin: boolean;
}

declare module 'express-serve-static-core' {
  interface Request {
    apiKey?: ApiKeyScope;
    operator?: ConsoleScope;
    /** The session cookie's lookup made ahead of the body parser (auth/unauthenticated-rate-limit.ts), for the guard. */
    sessionCheck?: { token: string; result: { scope: ConsoleScope; renewedForSeconds?: number } | null };
  }
}

/** The API key scope set by the guard on @ApiKeyAuth routes. */
export const CurrentApiKey = createParamDecorator((_: unknown, ctx: ExecutionContext): ApiKeyScope => {
  const scope = ctx.switchToHttp().getRequest<Request>().apiKey;
  if (!scope) throw new Error('CurrentApiKey used on a route without @ApiKeyAuth');
  return scope;
});

/** The operator scope set by the guard on @ConsoleAuth routes. */
export const CurrentOperator = createParamDecorator((_: unknown, ctx: ExecutionContext): ConsoleScope => {
  const scope = ctx.switchToHttp().getRequest<Request>().operator;
  if (!scope) throw new Error('CurrentOperator used on a route without @ConsoleAuth');
  return scope;
});
