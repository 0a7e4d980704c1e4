import { Injectable } from '@nestjs/common';
import type { Organization } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';

/** Owns `organizations`. */
@Injectable()
export class OrganizationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(name: string): Promise<Organization> {
    return clientOf(this.prisma).organization.create({ data: { name } });
  }
}
