import { Injectable } from '@nestjs/common';
import type { Operator } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { clientOf, isUniqueViolation } from '../../core/prisma/unit-of-work.js';

export type OperatorRole = 'owner' | 'member';
export const OPERATOR_ROLES: readonly OperatorRole[] = ['owner', 'member'];

export type OperatorWithOrganization = Operator & { organization: { id: string; name: string } };

const WITH_ORGANIZATION = { organization: { select: { id: true, name: true } } } as const;

/** Owns `operators`. Reads join the operator's organization for its name (one statement per login). */
@Injectable()
export class OperatorsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Null when the email is already registered (the unique index decides between racing signups). */
  async create(organizationId: string, operator: { email: string; passwordHash: string; role: OperatorRole }): Promise<OperatorWithOrganization | null> {
    try {
      return await clientOf(this.prisma).operator.create({ data: { organizationId, ...operator }, include: WITH_ORGANIZATION });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /** Login: by email, across organizations (the email is what identifies an operator). */
  findByEmail(email: string): Promise<OperatorWithOrganization | null> {
    return clientOf(this.prisma).operator.findUnique({ where: { email }, include: WITH_ORGANIZATION });
  }

  findById(id: string): Promise<OperatorWithOrganization | null> {
    return clientOf(this.prisma).operator.findUnique({ where: { id }, include: WITH_ORGANIZATION });
  }

  /** Sets or clears the platform-administrator flag of the operator with this email; false when there is none. */
  async setPlatformAdmin(email: string, platformAdmin: boolean): Promise<boolean> {
    const { count } = await clientOf(this.prisma).operator.updateMany({ where: { email }, data: { platformAdmin } });
    return count > 0;
  }

  /** The platform administrators' emails, sorted. */
  async listPlatformAdmins(): Promise<string[]> {
    const rows = await clientOf(this.prisma).operator.findMany({ where: { platformAdmin: true }, select: { email: true }, orderBy: { email: 'asc' } });
    return rows.map((r) => r.email);
  }

  /** Sets a new password hash, unless the hash changed since it was read (false then). */
  async replacePasswordHash(id: string, from: string, to: string): Promise<boolean> {
    const { count } = await clientOf(this.prisma).operator.updateMany({ where: { id, passwordHash: from }, data: { passwordHash: to } });
    return count === 1;
  }

  /** Replaces a password hash with a stronger one of the same password, unless it changed in the meantime. */
  async upgradePasswordHash(id: string, from: string, to: string): Promise<void> {
    await clientOf(this.prisma).operator.updateMany({ where: { id, passwordHash: from }, data: { passwordHash: to } });
  }
}
