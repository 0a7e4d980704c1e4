import { Injectable } from '@nestjs/common';
import type { PasswordReset } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';

/**
 * Owns `password_resets`. Found by the hash of their token only (the token is never stored); `claim` is the one
 * statement that makes a link single-use.
 */
@Injectable()
export class PasswordResetsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(organizationId: string, reset: { operatorId: string; tokenHash: string; issuedById: string; expiresAt: Date }): Promise<PasswordReset> {
    return clientOf(this.prisma).passwordReset.create({ data: { organizationId, ...reset } });
  }

  /** The link carrying this token, whichever organization it is of: the token is its own scope. */
  findByTokenHash(tokenHash: string): Promise<PasswordReset | null> {
    return clientOf(this.prisma).passwordReset.findUnique({ where: { tokenHash } });
  }

  /** Marks the link used; false when it was used, revoked or expired meanwhile (of two racing uses, one wins). */
  async claim(id: string, at: Date): Promise<boolean> {
    const { count } = await clientOf(this.prisma).passwordReset.updateMany({
      where: { id, usedAt: null, revokedAt: null, expiresAt: { gt: at } },
      data: { usedAt: at },
    });
    return count === 1;
  }

  /** Revokes every unused link of the operator (a newer link replaces them; a removal ends them). */
  async revokeAllOf(organizationId: string, operatorId: string, at: Date): Promise<number> {
    const { count } = await clientOf(this.prisma).passwordReset.updateMany({
      where: { organizationId, operatorId, usedAt: null, revokedAt: null },
      data: { revokedAt: at },
    });
    return count;
  }
}
