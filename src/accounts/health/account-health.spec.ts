import { CredentialRejected } from '../../core/errors/domain-errors.js';
import { AccountHealth } from './account-health.js';

describe('AccountHealth.assertCanSend', () => {
  const number = { phoneNumberId: '402000000000011', status: 'CONNECTED' };

  it('lets an account whose token is valid send', () => {
    expect(() => AccountHealth.assertCanSend({ credentialsValid: true, credentialsError: null }, number)).not.toThrow();
  });

  it("refuses an account whose token the upstream rejected, naming Meta's reason and the number", () => {
    let thrown: unknown;
    try {
      AccountHealth.assertCanSend({ credentialsValid: false, credentialsError: 'Error validating access token: Session has expired (190)' }, number);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CredentialRejected);
    expect((thrown as Error).message).toContain('Session has expired (190)');
    expect((thrown as Error).message).toContain('402000000000011');
    expect((thrown as Error).message).toMatch(/reconnect it with a new token/);
  });

  it('refuses with a generic reason when none was stored', () => {
    expect(() => AccountHealth.assertCanSend({ credentialsValid: false, credentialsError: null }, number)).toThrow(/rejected when last checked/);
  });
});
