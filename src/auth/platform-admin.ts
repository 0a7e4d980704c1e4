import type { AppConfig } from '../core/config/app-config.js';

/**
 * Platform administrators run the service itself (not one tenant's account): the operators whose email is
 * listed in ADMIN_EMAILS. They alone see what every tenant shares, such as the queues (Bull Board).
 * Compared case-insensitively; an empty list means nobody.
 */
export function isPlatformAdmin(config: Pick<AppConfig, 'adminEmails'>, operator: { email: string }): boolean {
  return config.adminEmails.includes(operator.email.toLowerCase());
}
