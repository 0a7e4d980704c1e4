import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { AppConfig } from '../../core/config/app-config.js';
import { TooManyAttempts } from '../../core/errors/domain-errors.js';
import { APP_LOGGER } from '../../core/logging/app-logger.js';
import { RedisService } from '../../core/redis/redis.service.js';

/**
 * Repeated failed logins are refused for a while (per email and per client address), across API processes.
 * If Redis is unreachable the throttle fails open: logins still work, and the outage shows in readiness.
 */
@Injectable()
export class LoginThrottle {
  constructor(
    private readonly redis: RedisService,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  private keys(email: string, ip: string): string[] {
    return [`${this.config.queuePrefix}:login-fail:email:${email}`, `${this.config.queuePrefix}:login-fail:ip:${ip}`];
  }

  async assertAllowed(email: string, ip: string): Promise<void> {
    try {
      const keys = this.keys(email, ip);
      const counts = await this.redis.client.mget(...keys);
      // The per-address limit is looser: an office behind one NAT should not lock itself out.
      const limits = [this.config.loginMaxFailures, this.config.loginMaxFailures * 4];
      for (let i = 0; i < keys.length; i++) {
        if (Number(counts[i] ?? 0) >= limits[i]!) {
          const ttl = await this.redis.client.ttl(keys[i]!);
          throw new TooManyAttempts('Too many failed login attempts; try again later', Math.max(ttl, 1));
        }
      }
    } catch (error) {
      if (error instanceof TooManyAttempts) throw error;
      this.logger.warn({ err: error }, 'login throttle unavailable');
    }
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    try {
      const pipeline = this.redis.client.multi();
      for (const key of this.keys(email, ip)) pipeline.incr(key).expire(key, this.config.loginWindowSeconds, 'NX');
      await pipeline.exec();
    } catch (error) {
      this.logger.warn({ err: error }, 'login throttle unavailable');
    }
  }

  async reset(email: string): Promise<void> {
    await this.redis.client.del(this.keys(email, '')[0]!).catch(() => undefined);
  }
}
