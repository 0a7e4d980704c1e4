import { CredentialRejected, SendingRefused } from '../../core/errors/domain-errors.js';
import { AccountHealth, UNRESTRICTED_ACCOUNT, type AccountSendState } from './account-health.js';

describe('AccountHealth.assertCanSend', () => {
  const number = { phoneNumberId: '402000000000011', status: 'CONNECTED' };
  const template = { businessInitiated: true };
  const account = (over: Partial<AccountSendState>): AccountSendState => ({ ...UNRESTRICTED_ACCOUNT, ...over });

  it('lets an account whose token is valid send', () => {
    expect(() => AccountHealth.assertCanSend(account({}), number, template)).not.toThrow();
  });

  it("refuses an account whose token the upstream rejected, naming Meta's reason and the number", () => {
    let thrown: unknown;
    try {
      AccountHealth.assertCanSend(
        account({
          credentialsValid: false,
          credentialsError: 'Error validating access token: Session has expired (190)',
        }),
        number,
        template,
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CredentialRejected);
    expect((thrown as Error).message).toContain('Session has expired (190)');
    expect((thrown as Error).message).toContain('402000000000011');
    expect((thrown as Error).message).toMatch(/reconnect it with a new token/);
  });

  it('refuses with a generic reason when none was stored', () => {
    expect(() =>
      AccountHealth.assertCanSend(account({ credentialsValid: false, credentialsError: null }), number, template),
    ).toThrow(/rejected when last checked/);
  });

  it("puts Meta's standing first: a disabled account or a flagged number is refused as such, even with a rejected token", () => {
    const rejected = { credentialsValid: false, credentialsError: 'Session has expired (190)' };
    expect(() => AccountHealth.assertCanSend(account({ ...rejected, banState: 'DISABLE' }), number, template)).toThrow(
      SendingRefused,
    );
    expect(() => AccountHealth.assertCanSend(account(rejected), { ...number, status: 'FLAGGED' }, template)).toThrow(
      /FLAGGED/,
    );
    // A restriction stops only what it names: business-initiated (templates) here, not replies in the window.
    const restricted = account({ restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: null }] });
    expect(() => AccountHealth.assertCanSend(restricted, number, template)).toThrow(SendingRefused);
    expect(() => AccountHealth.assertCanSend(restricted, number, { businessInitiated: false })).not.toThrow();
  });
});
