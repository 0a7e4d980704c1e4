import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AppConfig } from '../core/config/app-config.js';
import { enforceRateLimit, RateLimiterService, type RateLimitDecision } from '../core/rate-limit/rate-limiter.service.js';
import { AUTH_KIND, type AuthKind } from './auth.decorators.js';

const ADDRESS_DECISION = Symbol('consoleAddressRateLimit');

type LimitedRequest = Request & { [ADDRESS_DECISION]?: RateLimitDecision | null };

function isConsoleRoute(reflector: Reflector, context: ExecutionContext): boolean {
  return reflector.getAllAndOverride<AuthKind | undefined>(AUTH_KIND, [context.getHandler(), context.getClass()]) === 'console';
}

/**
 * Console routes, step 1 of 2 (before the AuthGuard): a token bucket per client address
 * (CONSOLE_ADDRESS_RATE_LIMIT_*), taken before the session is looked up, so a flood of made-up session
 * cookies from one address is refused without a database query each. The address is `req.ip`, which
 * follows TRUST_PROXY.
 */
@Injectable()
export class ConsoleAddressRateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiterService,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!isConsoleRoute(this.reflector, context)) return true;
    const req = context.switchToHttp().getRequest<LimitedRequest>();
    const decision = await this.limiter.take(`console-address:${req.ip ?? 'unknown'}`, {
      perSecond: this.config.consoleAddressRateLimitPerSecond,
      burst: this.config.consoleAddressRateLimitBurst,
    });
    req[ADDRESS_DECISION] = decision;
    enforceRateLimit(context.switchToHttp().getResponse<Response>(), [decision]);
    return true;
  }
}

/**
 * Console routes, step 2 of 2 (after the AuthGuard): a token bucket per session (CONSOLE_RATE_LIMIT_*),
 * so one signed-in browser or script cannot monopolise the service. The RateLimit-* headers describe
 * whichever of the two buckets is closer to refusing.
 */
@Injectable()
export class ConsoleSessionRateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiterService,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!isConsoleRoute(this.reflector, context)) return true;
    const req = context.switchToHttp().getRequest<LimitedRequest>();
    if (!req.operator) return true;
    const decision = await this.limiter.take(`console-session:${req.operator.sessionId}`, {
      perSecond: this.config.consoleRateLimitPerSecond,
      burst: this.config.consoleRateLimitBurst,
    });
    enforceRateLimit(context.switchToHttp().getResponse<Response>(), [req[ADDRESS_DECISION] ?? null, decision]);
    return true;
  }
}
