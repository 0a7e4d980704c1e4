import { CredentialRejected } from '../../core/errors/domain-errors.js';

/** What the pre-send check knows of the sending business account (read through the send-context cache). */
export interface AccountSendState {
  credentialsValid: boolean;
  /** The upstream platform's reason for rejecting the token, when it did. */
  credentialsError: string | null;
}

/** What it knows of the sending number: Meta's status as last synced (or set by a webhook). */
export interface NumberHealth {
  phoneNumberId: string;
  status: string | null;
}

/**
 * "May this account send from this number?": the one place that says no before any upstream call, each
 * refusal a domain error naming its cause (424: the operator has to act). Pure, so the send path calls it on
 * every send at no cost; the number's own state is for number-level refusals (Meta's FLAGGED / RESTRICTED).
 */
export const AccountHealth = {
  assertCanSend(account: AccountSendState, number: NumberHealth): void {
    if (!account.credentialsValid) {
      throw new CredentialRejected(`${account.credentialsError ?? 'rejected when last checked'}; no message was sent from ${number.phoneNumberId}`);
    }
  },
};
