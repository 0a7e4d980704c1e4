import { Injectable } from '@nestjs/common';
import { AuditService } from '../../audit/audit.service.js';
import { ApiKeyAuthenticator } from '../../auth/api-keys/api-key.authenticator.js';
import { ApiKeysRepository } from '../../auth/api-keys/api-keys.repository.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import type { OperatorRole } from '../../auth/roles.js';
import { SessionsService } from '../../auth/sessions/sessions.service.js';
import { AppConfig } from '../../core/config/app-config.js';
import { randomToken, sha256Hex } from '../../core/crypto/tokens.js';
import { Conflict, Forbidden, InvalidInput, NotFound } from '../../core/errors/domain-errors.js';
import { toPage, type Page } from '../../core/rows/page.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { InvitationsRepository } from '../invitations/invitations.repository.js';
import { mayInvite } from '../invitations/signup-mode.js';
import { OperatorsRepository, type Operator } from '../operators/operators.repository.js';
import { PasswordResetsRepository } from '../operators/password-resets.repository.js';
import type { MemberView, PasswordResetLinkView, RemovedMemberView } from './dto/members.dto.js';

export const MEMBER_NOT_FOUND = 'Operator not found';
export const LAST_OWNER = 'An organization keeps at least one owner: make another operator owner first';
export const RESET_PATH = '/console/reset-password';
export const PLATFORM_ADMIN_MANAGED_OUT_OF_BAND =
  'Platform administrators are managed only from the command line (npm run platform-admin): their role, removal and password resets are not available in the console';

const TOKEN_BYTES = 32;

/**
 * The operator lifecycle of an organization (audit 2, finding 3): who is in it, their roles, removal, and the
 * one-time password-reset links owners issue (the operator uses one through OperatorsService.resetPassword). Who may
 * call what is the controllers' @Roles; the last-owner rule is here, counted under a lock of the organization's
 * operators so two owners cannot demote each other at once.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly operators: OperatorsRepository,
    private readonly resets: PasswordResetsRepository,
    private readonly invitations: InvitationsRepository,
    private readonly keys: ApiKeysRepository,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly sessions: SessionsService,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {}

  async list(organizationId: string, query: { page: number; limit: number }): Promise<Page<MemberView>> {
    const { rows, total } = await this.operators.pageMembers(organizationId, query);
    return toPage(rows.map(toView), total, query);
  }

  async changeRole(scope: ConsoleScope, id: string, role: OperatorRole): Promise<MemberView> {
    return this.uow.run(async () => {
      const member = await this.getManageableMember(scope.organizationId, id);
      if (member.role === role) return toView(member);
      if (member.role === 'owner' && (await this.operators.countOwnersLocked(scope.organizationId)) <= 1)
        throw new Conflict(LAST_OWNER);
      const updated = await this.operators.setRole(scope.organizationId, id, role);
      if (!updated) throw new NotFound(MEMBER_NOT_FOUND);
      // Demoted below the inviting role: the invitations it sent would still make people owners (audit 3, finding 5).
      const invitationsRevoked =
        mayInvite(member.role as OperatorRole) && !mayInvite(role)
          ? await this.invitations.revokeAllSentBy(scope.organizationId, id, new Date())
          : 0;
      await this.audit.record(
        scope,
        'operator.role_changed',
        { type: 'operator', id },
        { email: member.email, from: member.role, to: role, ...(invitationsRevoked ? { invitationsRevoked } : {}) },
      );
      return toView(updated);
    });
  }

  /**
   * Removes the operator: every session of it ends at once, its unused reset links, the pending invitations it sent
   * and (unless `keepKeys`) the key pairs it created too.
   */
  async remove(scope: ConsoleScope, id: string, opts: { keepKeys?: boolean } = {}): Promise<RemovedMemberView> {
    const removed = await this.uow.run(async () => {
      const member = await this.getManageableMember(scope.organizationId, id);
      if (member.role === 'owner' && (await this.operators.countOwnersLocked(scope.organizationId)) <= 1)
        throw new Conflict(LAST_OWNER);
      const at = new Date();
      if (!(await this.operators.markRemoved(scope.organizationId, id, at))) throw new NotFound(MEMBER_NOT_FOUND);
      const sessionsEnded = await this.sessions.revokeAllOf(id);
      await this.resets.revokeAllOf(scope.organizationId, id, at);
      const invitationsRevoked = await this.invitations.revokeAllSentBy(scope.organizationId, id, at);
      // The key pairs it made are revoked with it unless kept on purpose (audit 3, finding 9).
      const keys = await this.keys.revokeAllCreatedBy(scope.organizationId, id, opts.keepKeys ? null : at);
      await this.audit.record(
        scope,
        'operator.removed',
        { type: 'operator', id },
        {
          email: member.email,
          role: member.role,
          sessionsEnded,
          invitationsRevoked,
          [opts.keepKeys ? 'keysKept' : 'keysRevoked']: keys.map((k) => k.id),
        },
      );
      return { member, at, sessionsEnded, keys };
    });
    if (!opts.keepKeys) for (const key of removed.keys) this.authenticator.invalidate(key.accessKey);
    const keys = removed.keys.map((k) => ({ id: k.id, name: k.name }));
    return {
      ...toView(removed.member),
      removedAt: removed.at.toISOString(),
      sessionsEnded: removed.sessionsEnded,
      keysRevoked: opts.keepKeys ? [] : keys,
      keysKept: opts.keepKeys ? keys : [],
    };
  }

  /** A one-time link that sets a new password for the operator; earlier unused links of it stop working. */
  async issuePasswordReset(scope: ConsoleScope, id: string): Promise<PasswordResetLinkView> {
    if (id === scope.operatorId) throw InvalidInput.of('id', 'use POST /auth/password to change your own password');
    const token = randomToken(TOKEN_BYTES);
    const expiresAt = new Date(Date.now() + this.config.passwordResetTtlSeconds * 1000);
    await this.uow.run(async () => {
      const member = await this.getManageableMember(scope.organizationId, id);
      await this.resets.revokeAllOf(scope.organizationId, id, new Date());
      const reset = await this.resets.create(scope.organizationId, {
        operatorId: id,
        tokenHash: sha256Hex(token),
        issuedById: scope.operatorId,
        expiresAt,
      });
      await this.audit.record(
        scope,
        'operator.password_reset_issued',
        { type: 'operator', id },
        { email: member.email, resetId: reset.id, expiresAt: expiresAt.toISOString() },
      );
    });
    return {
      operatorId: id,
      token,
      path: `${RESET_PATH}?token=${encodeURIComponent(token)}`,
      expiresAt: expiresAt.toISOString(),
    };
  }

  /**
   * An operator of the organization an owner may manage: a platform administrator is not one (audit 3, finding 4).
   * Its flag opens every tenant's queues, so an owner that could reset its password, change its role or remove it
   * could take it over; the command line (`npm run platform-admin -- revoke`) lifts the flag first.
   */
  private async getManageableMember(organizationId: string, id: string): Promise<Operator> {
    const member = await this.operators.findMember(organizationId, id);
    if (!member) throw new NotFound(MEMBER_NOT_FOUND);
    if (member.platformAdmin) throw new Forbidden(PLATFORM_ADMIN_MANAGED_OUT_OF_BAND);
    return member;
  }
}

function toView(operator: Operator): MemberView {
  return {
    id: operator.id,
    email: operator.email,
    role: operator.role as OperatorRole,
    lastSignInAt: operator.lastLoginAt?.toISOString() ?? null,
    createdAt: operator.createdAt.toISOString(),
  };
}
