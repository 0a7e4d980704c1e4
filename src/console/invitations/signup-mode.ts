/**
 * SIGNUP_MODE=closed: nobody signs up, with an invitation or without, so no invitation is issued either. Here,
 * below the signup (console/operators accepts invitations), because both refuse with it.
 */
export const SIGNUP_CLOSED = 'Signup is closed';
