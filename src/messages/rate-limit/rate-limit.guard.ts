import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../../core/config/app-config.js';
import { enforceRateLimit, RateLimiterService } from '../../core/rate-limit/rate-limiter.service.js';

/**
 * Per key-pair rate limit on the API-key routes. Runs after the global AuthGuard (so the key is known) and
 * sets RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset on every answer, Retry-After on 429.
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
    const decision = await this.limiter.take(req.apiKey.apiKeyId, { perSecond: this.config.rateLimitPerSecond, burst: this.config.rateLimitBurst });
    enforceRateLimit(context.switchToHttp().getResponse<Response>(), [decision]);
    return true;
  }
}
