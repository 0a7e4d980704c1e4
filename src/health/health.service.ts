import { Injectable } from '@nestjs/common';
import { ApiError } from '../core/http/api-error.js';
import { PrismaService } from '../core/prisma/prisma.service.js';
import { RedisService } from '../core/redis/redis.service.js';

export interface Readiness {
  status: 'ready';
  checks: { postgres: 'up'; redis: 'up' };
}

@Injectable()
export class HealthService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  async readiness(): Promise<Readiness> {
    const [postgres, redis] = await Promise.allSettled([
      this.prisma.ping(2000),
      this.redis.ping(1000),
    ]);
    const errors = [];
    if (postgres.status === 'rejected') errors.push({ field: 'postgres', message: 'PostgreSQL is unreachable' });
    if (redis.status === 'rejected') errors.push({ field: 'redis', message: 'Redis is unreachable' });
    if (errors.length > 0) {
      throw new ApiError(503, `Service Unavailable: ${errors.map((e) => e.field).join(', ')} down`, { errors });
    }
    return { status: 'ready', checks: { postgres: 'up', redis: 'up' } };
  }
}
