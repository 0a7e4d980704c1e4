import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../../core/config/app-config.js';
import { enforceRateLimit, RateLimiterService } from '../../core/rate-limit/rate-limiter.service.js';

/**
 * Rate limits on the API-key routes: a bucket per key pair and, beside it, one per business account, both
 * evaluated (a token from each or from neither), so more key pairs on one account do not add up to more
 * throughput. Runs after the global AuthGuard (so the key is known) and sets RateLimit-Limit /
 * RateLimit-Remaining / RateLimit-Reset (of the bucket closer to refusing) on every answer, Retry-After on 429.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly limiter: RateLimiterService,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    if (!req.apiKey) return true;
    const decisions = await this.limiter.takeAll(`account:${req.apiKey.businessAccountId}`, [
      {
        bucket: req.apiKey.apiKeyId,
        rule: { perSecond: this.config.rateLimitPerSecond, burst: this.config.rateLimitBurst },
      },
      {
        bucket: `account:${req.apiKey.businessAccountId}`,
        rule: { perSecond: this.config.accountRateLimitPerSecond, burst: this.config.accountRateLimitBurst },
      },
    ]);
    enforceRateLimit(context.switchToHttp().getResponse<Response>(), decisions);
    return true;
  }
}
