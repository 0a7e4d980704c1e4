/**
 * Platform administrators run the service itself (not one tenant's account): operators whose stored
 * `platform_admin` flag is set. They alone see what every tenant shares, such as the queues (Bull Board).
 * The flag is granted and revoked only out of band (`npm run platform-admin -- grant <email>` on a machine with
 * the database's credentials), never derived from an email: emails are not verified, and anyone may register
 * or be invited with any address.
 */
export function isPlatformAdmin(operator: { platformAdmin: boolean }): boolean {
  return operator.platformAdmin === true;
}
