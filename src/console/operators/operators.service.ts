import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { AuditService } from '../../audit/audit.service.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { SessionsService, type IssuedSession } from '../../auth/sessions/sessions.service.js';
import { AppConfig } from '../../core/config/app-config.js';
import { sha256Hex } from '../../core/crypto/tokens.js';
import {
  Conflict,
  Forbidden,
  InvalidInput,
  NotFound,
  TemporarilyUnavailable,
  TooManyAttempts,
  Unauthenticated,
} from '../../core/errors/domain-errors.js';
import { APP_LOGGER } from '../../core/logging/app-logger.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { AttemptBudget } from '../../core/redis/attempt-budget.js';
import { InvitationsRepository } from '../invitations/invitations.repository.js';
import { mayInvite, SIGNUP_CLOSED } from '../invitations/signup-mode.js';
import { OrganizationsRepository } from '../../organizations/organizations.repository.js';
import type { LoginDto, SignupDto } from './dto/signup.dto.js';
import type { OperatorView } from './dto/operator.response.js';
import { LoginThrottle, THROTTLE_UNAVAILABLE_RETRY_SECONDS } from './login-throttle.js';
import { OperatorsRepository, type OperatorRole, type OperatorWithOrganization } from './operators.repository.js';
import { PasswordHasher } from './password-hasher.js';
import { PasswordResetsRepository } from './password-resets.repository.js';
import type {
  InvitationClaims,
  LoginAttempts,
  NewOrganizations,
  OperatorAudit,
  OperatorRows,
  OperatorSessions,
  OperatorsUnitOfWork,
  Passwords,
  ResetLinks,
  SignupBudget,
  SignupConfig,
} from './operators.ports.js';

export const INVALID_CREDENTIALS = 'Invalid email or password';
export const EMAIL_TAKEN = 'An operator with this email already exists';
export const SIGNUP_INVITE_ONLY =
  'Signup is by invitation only: ask an owner of your organization for an invitation link';
export const TOO_MANY_SIGNUPS = 'Too many signups from this address; try again later';
const INVALID_LINK = 'password-reset link is not valid (unknown, used, revoked or expired); ask an owner for a new one';

@Injectable()
export class OperatorsService {
  constructor(
    @Inject(UnitOfWork) private readonly uow: OperatorsUnitOfWork,
    @Inject(OrganizationsRepository) private readonly organizations: NewOrganizations,
    @Inject(OperatorsRepository) private readonly operators: OperatorRows,
    @Inject(InvitationsRepository) private readonly invitations: InvitationClaims,
    @Inject(PasswordResetsRepository) private readonly resets: ResetLinks,
    @Inject(SessionsService) private readonly sessions: OperatorSessions,
    @Inject(LoginThrottle) private readonly throttle: LoginAttempts,
    @Inject(AttemptBudget) private readonly budget: SignupBudget,
    @Inject(PasswordHasher) private readonly passwords: Passwords,
    @Inject(AuditService) private readonly audit: OperatorAudit,
    @Inject(AppConfig) private readonly config: SignupConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Public signup from `address`, as SIGNUP_MODE allows: with an invitation token the operator joins the
   * inviting organization with the invitation's role (open and invite modes); without one a new organization
   * is created with the operator as its owner (open mode only). Limited per address (SIGNUP_MAX_PER_ADDRESS).
   */
  async signup(dto: SignupDto, address: string): Promise<OperatorView> {
    if (this.config.signupMode === 'closed') throw new Forbidden(SIGNUP_CLOSED);
    if (this.config.signupMode === 'invite' && dto.inviteToken === undefined) throw new Forbidden(SIGNUP_INVITE_ONLY);
    await this.takeSignupAttempt(address);
    return dto.inviteToken === undefined
      ? this.createOrganization({
          email: dto.email,
          password: dto.password,
          organizationName: dto.organizationName ?? '',
        })
      : this.acceptInvitation(dto.inviteToken, { email: dto.email, password: dto.password });
  }

  /** An organization and its first operator (its owner), both or neither. Also the seed's way in. */
  async createOrganization(input: {
    email: string;
    password: string;
    organizationName: string;
  }): Promise<OperatorView> {
    const passwordHash = await this.passwords.hash(input.password);
    const operator = await this.uow.run(async () => {
      const organization = await this.organizations.create(input.organizationName.trim());
      return this.createOperator(organization.id, { email: input.email, passwordHash, role: 'owner' });
    });
    return toView(operator);
  }

  private async acceptInvitation(token: string, input: { email: string; password: string }): Promise<OperatorView> {
    const invitation = await this.invitations.findByTokenHash(sha256Hex(token));
    const now = new Date();
    const problem =
      !invitation || invitation.revokedAt
        ? 'invitation is not valid (unknown or revoked)'
        : invitation.acceptedAt
          ? 'invitation has already been used'
          : invitation.expiresAt <= now
            ? 'invitation has expired; ask for a new one'
            : undefined;
    if (problem || !invitation) throw InvalidInput.of('inviteToken', problem ?? 'invitation is not valid');
    if (invitation.email !== input.email) throw InvalidInput.of('email', 'email does not match the invitation');
    const passwordHash = await this.passwords.hash(input.password);
    const operator = await this.uow.run(async () => {
      // The inviter must still be allowed to invite (audit 3, finding 5): removing or demoting it revokes what it
      // sent, and this check, inside the transaction that claims the invitation, covers invitations of older builds.
      const inviter = await this.operators.findMember(invitation.organizationId, invitation.invitedById);
      if (!inviter || !mayInvite(inviter.role as OperatorRole))
        throw InvalidInput.of('inviteToken', 'invitation is not valid (its sender can no longer invite)');
      const created = await this.createOperator(invitation.organizationId, {
        email: input.email,
        passwordHash,
        role: invitation.role as OperatorRole,
      });
      // The claim is conditional: of two acceptances racing with one token, one commits and the other rolls back.
      if (!(await this.invitations.claim(invitation.id, created.id, new Date()))) {
        throw InvalidInput.of('inviteToken', 'invitation has already been used');
      }
      await this.audit.record(
        sessionless(created),
        'invitation.accepted',
        { type: 'invitation', id: invitation.id },
        { email: created.email, role: created.role },
      );
      return created;
    });
    return toView(operator);
  }

  private async createOperator(
    organizationId: string,
    input: { email: string; passwordHash: string; role: OperatorRole },
  ): Promise<OperatorWithOrganization> {
    const created = await this.operators.create(organizationId, input);
    if (!created) throw new Conflict(EMAIL_TAKEN, [{ field: 'email', message: 'email is already registered' }]);
    return created;
  }

  private async takeSignupAttempt(address: string): Promise<void> {
    let result;
    try {
      result = await this.budget.take(
        [{ key: `${this.config.queuePrefix}:signup:ip:${address}`, limit: this.config.signupMaxPerAddress }],
        this.config.signupWindowSeconds,
      );
    } catch (error) {
      // Closed, like the login throttle: an uncounted signup is what the limit is there to prevent.
      this.logger.warn({ err: error }, 'signup limit unavailable; refusing the signup');
      throw new TemporarilyUnavailable(
        'Signup is temporarily unavailable; try again shortly',
        THROTTLE_UNAVAILABLE_RETRY_SECONDS,
      );
    }
    if (!result.taken) throw new TooManyAttempts(TOO_MANY_SIGNUPS, result.retryAfterSeconds);
  }

  /**
   * The attempt is counted before the password is verified (see LoginThrottle), so a burst cannot verify
   * more passwords than the budgets allow. A hash weaker than today's parameters is replaced on success.
   */
  async login(dto: LoginDto, address: string): Promise<{ operator: OperatorView; session: IssuedSession }> {
    const attempt = await this.throttle.begin(dto.email, address);
    const found = await this.operators.findByEmail(dto.email);
    // A removed operator is an unknown email: verified against the dummy hash, same answer, same time.
    const operator = found && !found.removedAt ? found : null;
    const { valid, needsRehash } = await this.passwords.verify(dto.password, operator?.passwordHash);
    if (!operator || !valid) {
      // A wrong password for an operator is in its organization's audit log (audit 3, finding 10); an unknown email
      // belongs to no organization.
      if (operator)
        await this.audit.recordForOrganization(
          operator.organizationId,
          'operator.sign_in_failed',
          { type: 'operator', id: operator.id },
          { email: operator.email, address },
        );
      throw new Unauthenticated(INVALID_CREDENTIALS);
    }
    await attempt.succeeded();
    await this.operators.recordLogin(operator.id, new Date());
    await this.audit.record(
      sessionless(operator),
      'operator.signed_in',
      { type: 'operator', id: operator.id },
      { address },
    );
    if (needsRehash) {
      await this.operators.upgradePasswordHash(
        operator.id,
        operator.passwordHash,
        await this.passwords.hash(dto.password),
      );
    }
    return { operator: toView(operator), session: await this.sessions.issue(operator.id) };
  }

  /**
   * The signed-in operator changes its password: the current one is verified (counted by the login throttle like a
   * login, so a stolen session cannot guess it faster than a login could), and every other session of the operator
   * ends at once; the caller's own stays signed in.
   */
  async changePassword(
    scope: ConsoleScope,
    currentPassword: string,
    newPassword: string,
    address: string,
  ): Promise<{ sessionsEnded: number }> {
    const attempt = await this.throttle.begin(scope.email, address);
    const operator = await this.operators.findById(scope.operatorId);
    const { valid } = await this.passwords.verify(currentPassword, operator?.passwordHash);
    if (!operator || !valid) throw InvalidInput.of('currentPassword', 'currentPassword is not the current password');
    await attempt.succeeded();
    if (newPassword === currentPassword)
      throw InvalidInput.of('newPassword', 'newPassword must differ from the current password');
    const hash = await this.passwords.hash(newPassword);
    return this.uow.run(async () => {
      if (!(await this.operators.replacePasswordHash(operator.id, operator.passwordHash, hash)))
        throw new Conflict('The password was changed meanwhile; sign in again');
      const sessionsEnded = await this.sessions.revokeAllOf(operator.id, scope.sessionId);
      // A reset link issued before would undo the change (audit 3, finding 7).
      const resetLinksRevoked = await this.resets.revokeAllOf(operator.organizationId, operator.id, new Date());
      await this.audit.record(
        scope,
        'operator.password_changed',
        { type: 'operator', id: operator.id },
        { sessionsEnded, resetLinksRevoked },
      );
      return { sessionsEnded };
    });
  }

  /**
   * Consumes a reset link (no session: the token is the credential): sets the new password and ends every session
   * of the operator. The claim is conditional, so of two uses racing with one token one commits.
   */
  async resetPassword(token: string, newPassword: string): Promise<{ sessionsEnded: number }> {
    const reset = await this.resets.findByTokenHash(sha256Hex(token));
    if (!reset || reset.usedAt || reset.revokedAt || reset.expiresAt <= new Date())
      throw InvalidInput.of('token', INVALID_LINK);
    const passwordHash = await this.passwords.hash(newPassword);
    return this.uow.run(async () => {
      if (!(await this.resets.claim(reset.id, new Date()))) throw InvalidInput.of('token', INVALID_LINK);
      const member = await this.operators.findMember(reset.organizationId, reset.operatorId);
      if (!member) throw InvalidInput.of('token', INVALID_LINK);
      await this.operators.setPasswordHash(member.id, passwordHash);
      await this.resets.revokeAllOf(member.organizationId, member.id, new Date());
      const sessionsEnded = await this.sessions.revokeAllOf(member.id);
      await this.audit.record(
        sessionless(member),
        'operator.password_reset',
        { type: 'operator', id: member.id },
        { resetId: reset.id, sessionsEnded },
      );
      return { sessionsEnded };
    });
  }

  /** "Sign out everywhere": every session of the operator ends, the caller's own included. */
  async signOutEverywhere(scope: ConsoleScope): Promise<{ sessionsEnded: number }> {
    return this.uow.run(async () => {
      const sessionsEnded = await this.sessions.revokeAllOf(scope.operatorId);
      await this.audit.record(
        scope,
        'operator.signed_out_everywhere',
        { type: 'operator', id: scope.operatorId },
        { sessionsEnded },
      );
      return { sessionsEnded };
    });
  }

  async me(operatorId: string): Promise<OperatorView> {
    const operator = await this.operators.findById(operatorId);
    if (!operator) throw new NotFound('Operator not found');
    return toView(operator);
  }
}

function toView(operator: OperatorWithOrganization): OperatorView {
  return {
    id: operator.id,
    email: operator.email,
    role: operator.role as OperatorRole,
    organization: { id: operator.organization.id, name: operator.organization.name },
    createdAt: operator.createdAt.toISOString(),
  };
}

/** The audit log's actor for an operator acting without a session: accepting an invitation, using a reset link. */
function sessionless(operator: { id: string; organizationId: string; email: string; role: string }): ConsoleScope {
  return {
    operatorId: operator.id,
    organizationId: operator.organizationId,
    email: operator.email,
    sessionId: '',
    role: operator.role as OperatorRole,
    platformAdmin: false,
  };
}
