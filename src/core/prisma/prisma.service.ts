import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../../generated/prisma/client.js';
import { AppConfig } from '../config/app-config.js';

/** The one Prisma client of a process, on node-postgres through the driver adapter (no native engine). */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(config: AppConfig) {
    super({
      adapter: new PrismaPg({
        connectionString: config.databaseUrl,
        max: config.databasePoolSize,
        // Fail fast when PostgreSQL is down, so that callers (readiness, the webhook receiver) can answer 503.
        connectionTimeoutMillis: 3000,
        idleTimeoutMillis: 30000,
      }),
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}
