import type { AuditService } from '../../audit/audit.service.js';
import type { SessionsService } from '../../auth/sessions/sessions.service.js';
import type { AppConfig } from '../../core/config/app-config.js';
import type { UnitOfWork } from '../../core/db/unit-of-work.js';
import type { AttemptBudget } from '../../core/redis/attempt-budget.js';
import type { OrganizationsRepository } from '../../organizations/organizations.repository.js';
import type { InvitationsRepository } from '../invitations/invitations.repository.js';
import type { LoginThrottle } from './login-throttle.js';
import type { OperatorsRepository } from './operators.repository.js';
import type { PasswordHasher } from './password-hasher.js';
import type { PasswordResetsRepository } from './password-resets.repository.js';

/*
 * What OperatorsService uses of each collaborator: the methods they call, picked
 * from the real classes, which therefore implement them by construction. Nest still injects the real classes
 * (`@Inject(Class)`); the service tier (test/service/operators.service.spec.ts) runs the service, with the real
 * LoginThrottle and PasswordHasher (their own ports are beside them), over the in-memory stand-ins of
 * test/utils/in-memory, which implement the same types.
 */

export type OperatorsUnitOfWork = Pick<UnitOfWork, 'run'>;
export type NewOrganizations = Pick<OrganizationsRepository, 'create'>;
export type OperatorRows = Pick<
  OperatorsRepository,
  | 'create'
  | 'findByEmail'
  | 'findById'
  | 'findMember'
  | 'recordLogin'
  | 'replacePasswordHash'
  | 'setPasswordHash'
  | 'upgradePasswordHash'
>;
export type InvitationClaims = Pick<InvitationsRepository, 'findByTokenHash' | 'claim'>;
export type ResetLinks = Pick<PasswordResetsRepository, 'findByTokenHash' | 'claim' | 'revokeAllOf'>;
export type OperatorSessions = Pick<SessionsService, 'issue' | 'revokeAllOf'>;
export type LoginAttempts = Pick<LoginThrottle, 'begin'>;
export type SignupBudget = Pick<AttemptBudget, 'take'>;
export type Passwords = Pick<PasswordHasher, 'hash' | 'verify'>;
export type OperatorAudit = Pick<AuditService, 'record' | 'recordForOrganization'>;
export type SignupConfig = Pick<
  AppConfig,
  'signupMode' | 'queuePrefix' | 'signupMaxPerAddress' | 'signupWindowSeconds'
>;
