import { Injectable } from '@nestjs/common';
import { BusinessAccountsRepository } from '../../accounts/business-accounts/business-accounts.repository.js';
import { UNRESTRICTED_ACCOUNT, type AccountSendState } from '../../accounts/health/account-health.js';
import { PhoneNumbersRepository } from '../../accounts/phone-numbers/phone-numbers.repository.js';
import { TemplatesRepository } from '../../accounts/templates/templates.repository.js';
import { BlockedUsersRepository } from '../../accounts/users/blocked-users.repository.js';
import {
  MarketingPreferencesRepository,
  type MarketingPreferenceValue,
} from '../../accounts/users/marketing-preferences.repository.js';
import { ConversationWindowsRepository } from '../conversation-windows.repository.js';

/** What the pre-send checks need (missing rows read as nulls). */
export interface SendContext {
  /** The sending business account's credentials and standing with Meta (a missing row reads as unrestricted: the key lookup vouches for it). */
  account: AccountSendState;
  numberExists: boolean;
  numberStatus: string | null;
  numberRemovedAt: Date | null;
  /** Meta's throughput.level of the number (STANDARD, HIGH, …): its pace. */
  numberThroughputLevel: string | null;
  templateExists: boolean;
  templateStatus: string | null;
  templateRemovedAt: Date | null;
  parameterCounts: unknown;
  parameterFormat: string | null;
  /** MARKETING, UTILITY or AUTHENTICATION, as synced (or changed by a template_category_update webhook). */
  templateCategory: string | null;
  /** An authentication template's OTP button type (ONE_TAP, ZERO_TAP, COPY_CODE), which Meta refuses for user ids. */
  templateOtpType: string | null;
  /** The recipient on this number: blocked, and its latest marketing preference. */
  recipient: RecipientState;
  lastInboundAt: Date | null;
}

export interface RecipientState {
  blocked: boolean;
  marketing: MarketingPreferenceValue | null;
}

export interface SendContextQuery {
  phoneNumberId: string;
  templateName: string | null;
  templateLanguage: string | null;
  /** The recipient: phone digits (`to`) or business-scoped user id (`userId`). */
  recipient: string;
  /** Whether the 24 h window is needed (every type but templates). */
  window: boolean;
}

/**
 * LISTEN/NOTIFY channel on which every change to `business_accounts`, `phone_numbers`, `templates`, `blocked_users`
 * or `marketing_preferences` names its business account.
 */
export const SEND_CONTEXT_CHANNEL = 'send_context';

/**
 * The pre-send read, from the owners of the tables it needs: the account (`business_accounts`), the number
 * (`phone_numbers`) and the template (`templates`) of the accounts domain, and the 24 h window
 * (`conversation_windows`), read in parallel. The triggers of migrations 20261124090000_send_context_notify
 * and 20261124150000_account_subscription_credentials NOTIFY `send_context` on every change to those three
 * accounts-domain tables (see SendContextCache).
 */
@Injectable()
export class SendContextReader {
  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly numbers: PhoneNumbersRepository,
    private readonly templates: TemplatesRepository,
    private readonly windows: ConversationWindowsRepository,
    private readonly blocked: BlockedUsersRepository,
    private readonly preferences: MarketingPreferencesRepository,
  ) {}

  async read(businessAccountId: string, q: SendContextQuery): Promise<SendContext> {
    const [part, recipient] = await Promise.all([
      this.readParts(businessAccountId, q),
      this.readRecipient(businessAccountId, q, { marketing: q.templateName !== null }),
    ]);
    return { ...part, ...recipient };
  }

  /** The account, number and template part (the same for every recipient). */
  async readParts(
    businessAccountId: string,
    q: SendContextQuery,
  ): Promise<Omit<SendContext, 'recipient' | 'lastInboundAt'>> {
    const [account, number, template] = await Promise.all([
      this.accounts.sendState(businessAccountId),
      this.numbers.sendState(businessAccountId, q.phoneNumberId),
      q.templateName !== null && q.templateLanguage !== null
        ? this.templates.sendState(businessAccountId, q.templateName, q.templateLanguage)
        : null,
    ]);
    return {
      account: account ?? UNRESTRICTED_ACCOUNT,
      numberExists: number !== null,
      numberStatus: number?.status ?? null,
      numberRemovedAt: number?.removedAt ?? null,
      numberThroughputLevel: number?.throughputLevel ?? null,
      templateExists: template !== null,
      templateStatus: template?.status ?? null,
      templateRemovedAt: template?.removedAt ?? null,
      parameterCounts: template?.parameterCounts ?? null,
      parameterFormat: template?.parameterFormat ?? null,
      templateCategory: template?.category ?? null,
      templateOtpType: template?.otpType ?? null,
    };
  }

  /**
   * The recipient's part: blocked on the number, its marketing preference (only when `marketing`: a MARKETING
   * template may be sent) and, when the query needs it, its 24 h window.
   */
  async readRecipient(
    businessAccountId: string,
    q: SendContextQuery,
    opts: { marketing: boolean },
  ): Promise<Pick<SendContext, 'recipient' | 'lastInboundAt'>> {
    const [blocked, marketing, lastInboundAt] = await Promise.all([
      this.blocked.isBlocked(businessAccountId, q.phoneNumberId, q.recipient),
      opts.marketing ? this.preferences.valueOf(businessAccountId, q.recipient) : null,
      q.window ? this.windows.lastInboundAt(q.phoneNumberId, q.recipient) : null,
    ]);
    return { recipient: { blocked, marketing }, lastInboundAt };
  }

  /** The languages a template is synced in (to name the missing translation in a refusal). */
  languagesOf(businessAccountId: string, templateName: string): Promise<string[]> {
    return this.templates.languagesOf(businessAccountId, templateName);
  }
}
