import { CredentialRejected } from '../../core/errors/domain-errors.js';
import type { Restriction } from '../standing/account-standing.js';
import { assertStandingAllowsSend } from '../standing/send-refusal.js';

/** What the pre-send check knows of the sending business account (read through the send-context cache). */
export interface AccountSendState {
  credentialsValid: boolean;
  /** The upstream platform's reason for rejecting the token, when it did. */
  credentialsError: string | null;
  /** ban_info.waba_ban_state (account_update webhooks; null: never banned). */
  banState: string | null;
  banDate: string | null;
  /** Restrictions Meta reported (ACCOUNT_RESTRICTION), with their expirations. */
  restrictions: Restriction[];
  /** Meta's marketing_messages_onboarding_status: ONBOARDED sends MARKETING templates through the Marketing Messages API. */
  marketingMessagesStatus: string | null;
}

/** A sending account nothing is known against (no row read: the key lookup vouches for the account). */
export const UNRESTRICTED_ACCOUNT: AccountSendState = {
  credentialsValid: true,
  credentialsError: null,
  banState: null,
  banDate: null,
  restrictions: [],
  marketingMessagesStatus: null,
};

/** What it knows of the sending number: Meta's status as last synced (or set by a webhook). */
export interface NumberHealth {
  phoneNumberId: string;
  status: string | null;
}

/**
 * "May this account send from this number?": the one place that says no before any upstream call, each
 * refusal a domain error naming its cause (424: the operator or Meta has to act). Pure, so the send path calls
 * it on every send at no cost. In order: Meta's standing (a disabled account, a FLAGGED/RESTRICTED number, a
 * restriction in force for this kind of message: see send-refusal.ts), then the stored token (rejected by
 * Meta when last checked or used).
 */
export const AccountHealth = {
  assertCanSend(
    account: AccountSendState,
    number: NumberHealth,
    send: { businessInitiated: boolean },
    now = new Date(),
  ): void {
    assertStandingAllowsSend(
      {
        banState: account.banState,
        banDate: account.banDate,
        restrictions: account.restrictions,
        numberStatus: number.status,
      },
      { phoneNumberId: number.phoneNumberId, businessInitiated: send.businessInitiated },
      now,
    );
    if (!account.credentialsValid) {
      throw new CredentialRejected(
        `${account.credentialsError ?? 'rejected when last checked'}; no message was sent from ${number.phoneNumberId}`,
      );
    }
  },
};
