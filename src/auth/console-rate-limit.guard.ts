import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AppConfig } from '../core/config/app-config.js';
import { clientAddress } from '../core/http/client-address.js';
import {
  enforceRateLimit,
  RateLimiterService,
  type RateLimitDecision,
  type RateLimitRule,
} from '../core/rate-limit/rate-limiter.service.js';
import { AUTH_KIND, type AuthKind } from './auth.decorators.js';

/** The decision of the bucket taken earlier in this request, so that the headers can describe both. */
const EARLIER_DECISION = Symbol('consoleRateLimitDecision');

type LimitedRequest = Request & { [EARLIER_DECISION]?: RateLimitDecision | null };

/** One of the console's buckets: which caller it counts, at what rate; null to let the request through. */
@Injectable()
abstract class ConsoleRateLimit implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiterService,
    protected readonly config: AppConfig,
  ) {}

  protected abstract bucketOf(req: Request): { bucket: string; rule: RateLimitRule } | null;

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.reflector.getAllAndOverride<AuthKind | undefined>(AUTH_KIND, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (kind !== 'console') return true;
    const req = context.switchToHttp().getRequest<LimitedRequest>();
    const target = this.bucketOf(req);
    if (!target) return true;
    const decision = await this.limiter.take(target.bucket, target.rule);
    const earlier = req[EARLIER_DECISION] ?? null;
    req[EARLIER_DECISION] = decision;
    enforceRateLimit(context.switchToHttp().getResponse<Response>(), [earlier, decision]);
    return true;
  }
}

/**
 * Console routes, step 1 of 2 (registered before the AuthGuard): a token bucket per client address
 * (CONSOLE_ADDRESS_RATE_LIMIT_*), taken before the session is looked up, so a flood of made-up session
 * cookies from one address is refused without a database query each. The address is `req.ip`, which
 * follows TRUST_PROXY, an IPv6 one counted by its /64 as every per-address limit (audit 3, finding 10).
 */
@Injectable()
export class ConsoleAddressRateLimitGuard extends ConsoleRateLimit {
  protected bucketOf(req: Request) {
    const rule = {
      perSecond: this.config.consoleAddressRateLimitPerSecond,
      burst: this.config.consoleAddressRateLimitBurst,
    };
    return { bucket: `console-address:${clientAddress(req)}`, rule };
  }
}

/**
 * Console routes, step 2 of 2 (after the AuthGuard): a token bucket per session (CONSOLE_RATE_LIMIT_*), so
 * one signed-in browser or script cannot monopolise the service. The RateLimit-* headers describe whichever
 * of the two buckets is closer to refusing.
 */
@Injectable()
export class ConsoleSessionRateLimitGuard extends ConsoleRateLimit {
  protected bucketOf(req: Request) {
    if (!req.operator) return null;
    return {
      bucket: `console-session:${req.operator.sessionId}`,
      rule: { perSecond: this.config.consoleRateLimitPerSecond, burst: this.config.consoleRateLimitBurst },
    };
  }
}
