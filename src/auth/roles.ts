import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { ApiErrors } from '../core/http/openapi.js';

/**
 * An operator's role in its organization, from most to least trusted (docs/security.md, "Roles"): owners do
 * everything (operators, invitations, password-reset links); admins manage business accounts, key pairs,
 * campaigns and blocked users; members read and send from the console.
 */
export type OperatorRole = 'owner' | 'admin' | 'member';
export const OPERATOR_ROLES: readonly OperatorRole[] = ['owner', 'admin', 'member'];

const RANK: Record<OperatorRole, number> = { member: 0, admin: 1, owner: 2 };

/** True when `role` is `minimum` or above it. */
export function hasRole(role: OperatorRole, minimum: OperatorRole): boolean {
  return RANK[role] >= RANK[minimum];
}

export const MINIMUM_ROLE = 'minimumRole';
export const ROLE_MESSAGE = 'minimumRoleMessage';

const WHO: Record<OperatorRole, string> = { owner: 'owners', admin: 'owners and admins', member: 'operators' };

export const roleRefusal = (minimum: OperatorRole) => `Only ${WHO[minimum]} of the organization can do this`;

/**
 * The least role a console route needs (on the controller, or on a method to override it). The guard reads the
 * role from the session's operator row on every request, so a change of role applies at the caller's next
 * request. Every @ConsoleAuth route must carry one: the guard refuses a console route without it (secure by
 * default), and test/e2e/console-roles.e2e-spec.ts checks each route × role. The document shows the role as
 * `x-minimum-role` and the 403.
 */
export const Roles = (minimum: OperatorRole, refusal = roleRefusal(minimum)) =>
  applyDecorators(
    SetMetadata(MINIMUM_ROLE, minimum),
    SetMetadata(ROLE_MESSAGE, refusal),
    ApiExtension('x-minimum-role', minimum),
    ...(minimum === 'member' ? [] : [ApiErrors({ 403: refusal })]),
  );
