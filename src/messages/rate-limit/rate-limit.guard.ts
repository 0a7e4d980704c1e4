import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from '../../core/http/api-error.js';
import { RateLimiterService } from './rate-limiter.service.js';

export const RATE_LIMIT_EXCEEDED = 'Rate limit exceeded';

/**
 * Per key-pair rate limit on the API-key routes. Runs after the global AuthGuard (so the key is known) and
 * sets RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset on every answer, Retry-After on 429.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(private readonly limiter: RateLimiterService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    if (!req.apiKey) return true;
    const decision = await this.limiter.take(req.apiKey.apiKeyId);
    if (!decision) return true;
    res.setHeader('RateLimit-Limit', String(decision.limit));
    res.setHeader('RateLimit-Remaining', String(decision.remaining));
    res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
    if (!decision.allowed) {
      throw new ApiError(429, RATE_LIMIT_EXCEEDED, { headers: { 'Retry-After': String(decision.retryAfterSeconds) } });
    }
    return true;
  }
}
