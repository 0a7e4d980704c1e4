import { Injectable } from '@nestjs/common';
import { Db } from '../core/db/db.js';
import { TemporarilyUnavailable } from '../core/errors/domain-errors.js';
import { RedisService } from '../core/redis/redis.service.js';

export interface Readiness {
  status: 'ready';
  checks: { postgres: 'up'; redis: 'up' };
}

@Injectable()
export class HealthService {
  private shuttingDown = false;

  constructor(
    private readonly db: Db,
    private readonly redis: RedisService,
  ) {}

  /** From the first moment of a shutdown readiness fails, so that load balancers stop sending new requests. */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  async readiness(): Promise<Readiness> {
    if (this.shuttingDown) {
      throw new TemporarilyUnavailable('Service Unavailable: shutting down', undefined, [
        { field: 'process', message: 'The process is shutting down' },
      ]);
    }
    const [postgres, redis] = await Promise.allSettled([this.db.ping(2000), this.redis.ping(1000)]);
    const errors = [];
    if (postgres.status === 'rejected') errors.push({ field: 'postgres', message: 'PostgreSQL is unreachable' });
    if (redis.status === 'rejected') errors.push({ field: 'redis', message: 'Redis is unreachable' });
    if (errors.length > 0) {
      throw new TemporarilyUnavailable(
        `Service Unavailable: ${errors.map((e) => e.field).join(', ')} down`,
        undefined,
        errors,
      );
    }
    return { status: 'ready', checks: { postgres: 'up', redis: 'up' } };
  }
}
