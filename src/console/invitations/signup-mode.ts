import { hasRole, type OperatorRole } from '../../auth/roles.js';

/**
 * SIGNUP_MODE=closed: nobody signs up, with an invitation or without, so no invitation is issued either. Here,
 * below the signup (console/operators accepts invitations), because both refuse with it.
 */
export const SIGNUP_CLOSED = 'Signup is closed';

/**
 * The least role that may invite (the invitations controller's @Roles). An operator moved below it, or removed, loses
 * its pending invitations, and an invitation whose sender is no longer one is refused (audit 3, finding 5).
 */
export const INVITING_ROLE: OperatorRole = 'owner';

export const mayInvite = (role: OperatorRole): boolean => hasRole(role, INVITING_ROLE);
