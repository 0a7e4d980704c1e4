import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { OperatorRole } from '../../auth/roles.js';
import { columns } from '../../core/db/database.js';
import { Db } from '../../core/db/db.js';
import { lockForTransaction } from '../../core/db/advisory-lock.js';
import { columnsOf, type Row } from '../../core/db/rows.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

export type Invitation = Row<'invitations'>;
export type InvitationRow = Invitation & { invitedBy: { email: string } };

/** The console lists at most this many pending invitations (an organization invites a handful of people). */
const LIST_LIMIT = 100;

/**
 * Owns `invitations`. Found by the hash of their token only (the token is never stored); everything else is
 * scoped by the organization. `claim` is the one statement that makes an invitation single-use.
 */
@Injectable()
export class InvitationsRepository {
  constructor(private readonly db: Db) {}

  @GenerateSql({
    params: [
      Sample.UUID,
      {
        email: Sample.EMAIL,
        role: 'member',
        tokenHash: Sample.STRING,
        invitedById: Sample.UUID2,
        expiresAt: Sample.DATE,
      },
    ],
  })
  async create(
    organizationId: string,
    invitation: { email: string; role: OperatorRole; tokenHash: string; invitedById: string; expiresAt: Date },
  ): Promise<InvitationRow> {
    const { id } = await this.db
      .on()
      .insertInto('invitations')
      .values({
        id: randomUUID(),
        organization_id: organizationId,
        email: invitation.email,
        role: invitation.role,
        token_hash: invitation.tokenHash,
        invited_by_id: invitation.invitedById,
        expires_at: invitation.expiresAt,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const created = await this.findOwned(organizationId, id);
    if (!created) throw new Error(`invitation ${id} not found right after its insert`);
    return created;
  }

  /** The invitation carrying this token, whichever organization it is of: the token is its own scope. */
  @GenerateSql({ params: [Sample.STRING] })
  async findByTokenHash(tokenHash: string): Promise<Invitation | null> {
    return (
      (await this.db
        .on()
        .selectFrom('invitations')
        .select(columns.invitations)
        .where('token_hash', '=', tokenHash)
        .executeTakeFirst()) ?? null
    );
  }

  /** Marks the invitation used by `operatorId`; false when it was used, revoked or expired meanwhile. */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  async claim(id: string, operatorId: string, at: Date): Promise<boolean> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('invitations')
      .set({ accepted_at: at, accepted_by_id: operatorId })
      .where('id', '=', id)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', at)
      .executeTakeFirstOrThrow();
    return numUpdatedRows === 1n;
  }

  /** Not used, not revoked, not expired; newest first. */
  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async listPending(organizationId: string, now: Date): Promise<InvitationRow[]> {
    const rows = await this.withInviter()
      .where('i.organization_id', '=', organizationId)
      .where('i.accepted_at', 'is', null)
      .where('i.revoked_at', 'is', null)
      .where('i.expires_at', '>', now)
      .orderBy('i.created_at', 'desc')
      .limit(LIST_LIMIT)
      .execute();
    return rows.map(withInviter);
  }

  /**
   * Pending invitations of the organization, counted under a transaction-scoped lock of its invitations, so two
   * concurrent creations cannot both see room for one more (call inside a unit of work).
   */
  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async countPendingLocked(organizationId: string, now: Date): Promise<number> {
    const db = this.db.on();
    await lockForTransaction(db, `invitations:${organizationId}`);
    const { n } = await db
      .selectFrom('invitations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return n;
  }

  @GenerateSql({ params: [Sample.UUID, Sample.UUID2] })
  async findOwned(organizationId: string, id: string): Promise<InvitationRow | null> {
    const row = await this.withInviter()
      .where('i.id', '=', id)
      .where('i.organization_id', '=', organizationId)
      .executeTakeFirst();
    return row ? withInviter(row) : null;
  }

  /** Revokes a pending invitation; false when it was already used or revoked. */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  async revoke(organizationId: string, id: string, at: Date): Promise<boolean> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('invitations')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return numUpdatedRows === 1n;
  }

  /** Revokes every pending invitation `invitedById` sent (its removal or demotion); how many. */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  async revokeAllSentBy(organizationId: string, invitedById: string, at: Date): Promise<number> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('invitations')
      .set({ revoked_at: at })
      .where('organization_id', '=', organizationId)
      .where('invited_by_id', '=', invitedById)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(numUpdatedRows);
  }

  /** Invitations (`i`) with the email of who sent each. */
  private withInviter() {
    return this.db
      .on()
      .selectFrom('invitations as i')
      .innerJoin('operators as o', 'o.id', 'i.invited_by_id')
      .select(columnsOf('invitations', 'i'))
      .select('o.email as inviterEmail');
  }
}

function withInviter<R extends { inviterEmail: string }>({
  inviterEmail,
  ...invitation
}: R): Omit<R, 'inviterEmail'> & { invitedBy: { email: string } } {
  return { ...invitation, invitedBy: { email: inviterEmail } };
}
