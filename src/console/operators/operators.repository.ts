import { Injectable } from '@nestjs/common';
import type { Operator } from '../../generated/prisma/client.js';
import { skipTake } from '../../core/http/pagination.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { clientOf, isUniqueViolation } from '../../core/prisma/unit-of-work.js';
import type { OperatorRole } from '../../auth/roles.js';

export { OPERATOR_ROLES, type OperatorRole } from '../../auth/roles.js';

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

  /** Sets or clears the platform-administrator flag of the operator with this email; false when there is none (or it was removed). */
  async setPlatformAdmin(email: string, platformAdmin: boolean): Promise<boolean> {
    const { count } = await clientOf(this.prisma).operator.updateMany({ where: { email, removedAt: null }, data: { platformAdmin } });
    return count > 0;
  }

  /** The platform administrators' emails, sorted. */
  async listPlatformAdmins(): Promise<string[]> {
    const rows = await clientOf(this.prisma).operator.findMany({ where: { platformAdmin: true }, select: { email: true }, orderBy: { email: 'asc' } });
    return rows.map((r) => r.email);
  }

  /** The organization's operators (removed ones left out), oldest first, as GET /api-keys pages them. */
  async pageMembers(organizationId: string, query: { page: number; limit: number }): Promise<{ rows: Operator[]; total: number }> {
    const where = { organizationId, removedAt: null };
    const db = clientOf(this.prisma);
    const [rows, total] = await Promise.all([
      db.operator.findMany({ where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], ...skipTake(query) }),
      db.operator.count({ where }),
    ]);
    return { rows, total };
  }

  /** An operator of the organization that has not been removed. */
  findMember(organizationId: string, id: string): Promise<Operator | null> {
    return clientOf(this.prisma).operator.findFirst({ where: { id, organizationId, removedAt: null } });
  }

  /** Emails of these operators of the organization (removed ones included: what they made stays attributed). */
  async emailsOf(organizationId: string, ids: string[]): Promise<Map<string, string>> {
    if (!ids.length) return new Map();
    const rows = await clientOf(this.prisma).operator.findMany({ where: { organizationId, id: { in: ids } }, select: { id: true, email: true } });
    return new Map(rows.map((r) => [r.id, r.email]));
  }

  /**
   * The organization's owners (not removed), counted under a transaction-scoped lock of its operators' roles, so two
   * owners demoting or removing each other at once cannot both see another owner left (call inside a unit of work).
   */
  async countOwnersLocked(organizationId: string): Promise<number> {
    const client = clientOf(this.prisma);
    await client.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${`operators:${organizationId}`}))::text`;
    return client.operator.count({ where: { organizationId, role: 'owner', removedAt: null } });
  }

  /** Sets the role of a (not removed) operator of the organization; null when there is none. */
  async setRole(organizationId: string, id: string, role: OperatorRole): Promise<Operator | null> {
    const { count } = await clientOf(this.prisma).operator.updateMany({ where: { id, organizationId, removedAt: null }, data: { role } });
    return count ? this.findMember(organizationId, id) : null;
  }

  /** Removes an operator from the organization (it can never sign in again; the row stays); false when already removed. */
  async markRemoved(organizationId: string, id: string, at: Date): Promise<boolean> {
    const { count } = await clientOf(this.prisma).operator.updateMany({ where: { id, organizationId, removedAt: null }, data: { removedAt: at } });
    return count === 1;
  }

  async recordLogin(id: string, at: Date): Promise<void> {
    await clientOf(this.prisma).operator.update({ where: { id }, data: { lastLoginAt: at } });
  }

  /** Sets a new password hash, unless the hash changed since it was read (false then). */
  async replacePasswordHash(id: string, from: string, to: string): Promise<boolean> {
    const { count } = await clientOf(this.prisma).operator.updateMany({ where: { id, passwordHash: from }, data: { passwordHash: to } });
    return count === 1;
  }

  /** Sets a new password hash whatever the current one (a password-reset link). */
  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    await clientOf(this.prisma).operator.update({ where: { id }, data: { passwordHash } });
  }

  /** Replaces a password hash with a stronger one of the same password, unless it changed in the meantime. */
  async upgradePasswordHash(id: string, from: string, to: string): Promise<void> {
    await clientOf(this.prisma).operator.updateMany({ where: { id, passwordHash: from }, data: { passwordHash: to } });
  }
}
