import { Injectable } from '@nestjs/common';
import { AuditService } from '../../audit/audit.service.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import type { OperatorRole } from '../../auth/roles.js';
import { AppConfig } from '../../core/config/app-config.js';
import { randomToken, sha256Hex } from '../../core/crypto/tokens.js';
import { Conflict, Forbidden, NotFound } from '../../core/errors/domain-errors.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import type { CreatedInvitationView, InvitationView } from './dto/invitation.dto.js';
import { InvitationsRepository, type InvitationRow } from './invitations.repository.js';
import { SIGNUP_CLOSED } from './signup-mode.js';

export const INVITATION_NOT_FOUND = 'Invitation not found';
export const OWNERS_ONLY = 'Only owners of the organization can manage invitations';
export const SIGNUP_PATH = '/console/signup';
const TOKEN_BYTES = 32;

/**
 * Owners (the controller's @Roles('owner')) invite operators into their organization with a one-time link: the token is shown once, only its
 * SHA-256 is kept, it expires after INVITATION_TTL_SECONDS and is used up by the signup that accepts it.
 */
@Injectable()
export class InvitationsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly invitations: InvitationsRepository,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {}

  async create(operator: ConsoleScope, email: string, role: OperatorRole): Promise<CreatedInvitationView> {
    if (this.config.signupMode === 'closed') throw new Forbidden(SIGNUP_CLOSED);
    // Whether the email is registered is not told: the answer is the same (the invitation cannot be accepted
    // by an email that is taken, as signup refuses it). Owners see their own operators in GET /organization/members.
    const token = randomToken(TOKEN_BYTES);
    const invitation = await this.uow.run(async () => {
      const now = new Date();
      const pending = await this.invitations.countPendingLocked(operator.organizationId, now);
      // One pending invitation per email (under the same lock): a second link for it would be a second way in.
      const same = (await this.invitations.listPending(operator.organizationId, now)).find((i) => i.email === email);
      if (same) {
        throw new Conflict(
          `An invitation for ${email} is already pending (id ${same.id}, until ${same.expiresAt.toISOString()}); revoke it (DELETE /invitations/${same.id}) to send a new link`,
        );
      }
      if (pending >= this.config.invitationsMaxPending) {
        throw new Conflict(
          `At most ${this.config.invitationsMaxPending} invitations may be pending at once; revoke some (DELETE /invitations/{id}) or wait until they are used or expire`,
        );
      }
      const created = await this.invitations.create(operator.organizationId, {
        email,
        role,
        tokenHash: sha256Hex(token),
        invitedById: operator.operatorId,
        expiresAt: new Date(Date.now() + this.config.invitationTtlSeconds * 1000),
      });
      await this.audit.record(operator, 'invitation.created', { type: 'invitation', id: created.id }, { email, role });
      return created;
    });
    return { ...toView(invitation), token, path: `${SIGNUP_PATH}?invite=${encodeURIComponent(token)}` };
  }

  async listPending(operator: ConsoleScope): Promise<InvitationView[]> {
    return (await this.invitations.listPending(operator.organizationId, new Date())).map(toView);
  }

  async revoke(operator: ConsoleScope, id: string): Promise<InvitationView> {
    const invitation = await this.invitations.findOwned(operator.organizationId, id);
    if (!invitation) throw new NotFound(INVITATION_NOT_FOUND);
    await this.uow.run(async () => {
      if (await this.invitations.revoke(operator.organizationId, id, new Date())) {
        await this.audit.record(
          operator,
          'invitation.revoked',
          { type: 'invitation', id },
          { email: invitation.email },
        );
      }
    });
    return toView(invitation);
  }
}

function toView(invitation: InvitationRow): InvitationView {
  return {
    id: invitation.id,
    email: invitation.email,
    role: invitation.role as OperatorRole,
    invitedBy: invitation.invitedBy.email,
    expiresAt: invitation.expiresAt.toISOString(),
    createdAt: invitation.createdAt.toISOString(),
  };
}
