import { Injectable } from '@nestjs/common';
import type { Invitation } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';
import type { OperatorRole } from '../operators/operators.repository.js';

export type InvitationRow = Invitation & { invitedBy: { email: string } };

const WITH_INVITER = { invitedBy: { select: { email: true } } } as const;
/** The console lists at most this many pending invitations (an organization invites a handful of people). */
const LIST_LIMIT = 100;

/**
 * Owns `invitations`. Found by the hash of their token only (the token is never stored); everything else is
 * scoped by the organization. `claim` is the one statement that makes an invitation single-use.
 */
@Injectable()
export class InvitationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(
    organizationId: string,
    invitation: { email: string; role: OperatorRole; tokenHash: string; invitedById: string; expiresAt: Date },
  ): Promise<InvitationRow> {
    return clientOf(this.prisma).invitation.create({ data: { organizationId, ...invitation }, include: WITH_INVITER });
  }

  /** The invitation carrying this token, whichever organization it is of: the token is its own scope. */
  findByTokenHash(tokenHash: string): Promise<Invitation | null> {
    return clientOf(this.prisma).invitation.findUnique({ where: { tokenHash } });
  }

  /** Marks the invitation used by `operatorId`; false when it was used, revoked or expired meanwhile. */
  async claim(id: string, operatorId: string, at: Date): Promise<boolean> {
    const { count } = await clientOf(this.prisma).invitation.updateMany({
      where: { id, acceptedAt: null, revokedAt: null, expiresAt: { gt: at } },
      data: { acceptedAt: at, acceptedById: operatorId },
    });
    return count === 1;
  }

  /** Not used, not revoked, not expired; newest first. */
  listPending(organizationId: string, now: Date): Promise<InvitationRow[]> {
    return clientOf(this.prisma).invitation.findMany({
      where: { organizationId, acceptedAt: null, revokedAt: null, expiresAt: { gt: now } },
      include: WITH_INVITER,
      orderBy: { createdAt: 'desc' },
      take: LIST_LIMIT,
    });
  }

  /**
   * Pending invitations of the organization, counted under a transaction-scoped lock of its invitations, so two
   * concurrent creations cannot both see room for one more (call inside a unit of work).
   */
  async countPendingLocked(organizationId: string, now: Date): Promise<number> {
    const client = clientOf(this.prisma);
    await client.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${`invitations:${organizationId}`}))::text`;
    return client.invitation.count({ where: { organizationId, acceptedAt: null, revokedAt: null, expiresAt: { gt: now } } });
  }

  findOwned(organizationId: string, id: string): Promise<InvitationRow | null> {
    return clientOf(this.prisma).invitation.findFirst({ where: { id, organizationId }, include: WITH_INVITER });
  }

  /** Revokes a pending invitation; false when it was already used or revoked. */
  async revoke(organizationId: string, id: string, at: Date): Promise<boolean> {
    const { count } = await clientOf(this.prisma).invitation.updateMany({ where: { id, organizationId, acceptedAt: null, revokedAt: null }, data: { revokedAt: at } });
    return count === 1;
  }
}
