import { Injectable } from '@nestjs/common';
import type { Session } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';

export type SessionWithOperator = Session & {
  operator: { id: string; organizationId: string; email: string; role: string; platformAdmin: boolean; removedAt: Date | null };
};

/** Owns `sessions`. Sessions are found by the hash of their token only; the token itself is never stored. */
@Injectable()
export class SessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(operatorId: string, session: { tokenHash: string; expiresAt: Date; lastSeenAt: Date }): Promise<void> {
    await clientOf(this.prisma).session.create({ data: { operatorId, ...session } });
  }

  /** The session with this token hash and who it belongs to (joined: one statement per console request). */
  findByTokenHash(tokenHash: string): Promise<SessionWithOperator | null> {
    return clientOf(this.prisma).session.findUnique({
      where: { tokenHash },
      include: { operator: { select: { id: true, organizationId: true, email: true, role: true, platformAdmin: true, removedAt: true } } },
    });
  }

  findById(id: string): Promise<Session | null> {
    return clientOf(this.prisma).session.findUnique({ where: { id } });
  }

  async touch(id: string, at: Date): Promise<void> {
    await clientOf(this.prisma).session.update({ where: { id }, data: { lastSeenAt: at } });
  }

  /** Revokes every live session of the operator, but `except` (the caller's own); how many it ended. */
  async revokeAllOf(operatorId: string, at: Date, except?: string): Promise<number> {
    const { count } = await clientOf(this.prisma).session.updateMany({
      where: { operatorId, revokedAt: null, ...(except ? { NOT: { id: except } } : {}) },
      data: { revokedAt: at },
    });
    return count;
  }

  async revoke(id: string, at: Date): Promise<void> {
    await clientOf(this.prisma).session.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
  }

  /**
   * Deletes up to `limit` sessions that can no longer authenticate as of `now`: past their absolute expiry,
   * unused since `idleSince`, or revoked. Returns how many.
   */
  async deleteEnded(at: { now: Date; idleSince: Date }, limit: number): Promise<number> {
    const { rowCount } = await this.prisma.pool.query(
      `DELETE FROM sessions WHERE id IN (
         SELECT id FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2 OR revoked_at <= $1 LIMIT $3)`,
      [at.now, at.idleSince, limit],
    );
    return rowCount ?? 0;
  }
}
