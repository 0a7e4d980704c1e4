import { SendingRefused } from '../../core/errors/domain-errors.js';
import { activeRestrictions, type Restriction } from './account-standing.js';

/** What the send path knows of the account's and the number's standing with Meta (from the send-context read). */
export interface SendStanding {
  /** ban_info.waba_ban_state of the account (null: never banned). */
  banState: string | null;
  banDate: string | null;
  restrictions: Restriction[];
  /** Meta's status of the sending number (sync or phone_number_quality_update); null when unknown. */
  numberStatus: string | null;
}

/** Number statuses Meta reports for a number it stopped from sending. */
const BLOCKED_NUMBER_STATUSES = new Set(['FLAGGED', 'RESTRICTED']);

/**
 * Meta's own state forbids this send: refused before anything is stored or sent upstream (424, naming the
 * reason), instead of a failed message Meta would reject anyway. A disabled (banned) account sends nothing; a
 * number Meta reports as FLAGGED or RESTRICTED sends nothing; an account restriction in force stops what it
 * names: business-initiated messages (templates) or replies in the customer service window (the other types).
 * Called through AccountHealth.assertCanSend, the accounts domain's one pre-send check.
 */
export function assertStandingAllowsSend(
  standing: SendStanding,
  send: { phoneNumberId: string; businessInitiated: boolean },
  now = new Date(),
): void {
  if (standing.banState === 'DISABLE') {
    throw new SendingRefused(
      `Meta disabled this business account (ban state DISABLE${standing.banDate ? ` since ${standing.banDate}` : ''}); nothing can be sent until it is reinstated`,
    );
  }
  if (standing.numberStatus !== null && BLOCKED_NUMBER_STATUSES.has(standing.numberStatus)) {
    throw new SendingRefused(
      `Meta reports phone number ${send.phoneNumberId} as ${standing.numberStatus}; it cannot send until Meta lifts it`,
      [{ field: 'phoneNumberId', message: `phone number status is ${standing.numberStatus}` }],
    );
  }
  const restriction = send.businessInitiated
    ? 'RESTRICTED_BIZ_INITIATED_MESSAGING'
    : 'RESTRICTED_CUSTOMER_INITIATED_MESSAGING';
  const active = activeRestrictions(standing.restrictions, now).find((r) => r.type === restriction);
  if (active) {
    const what = send.businessInitiated
      ? 'business-initiated messages (templates)'
      : 'messages in the customer service window';
    throw new SendingRefused(
      `Meta restricted this business account from ${what} (${restriction}${active.expiration ? ` until ${active.expiration}` : ''})`,
    );
  }
}
