import { Injectable } from '@nestjs/common';
import { BusinessAccountsRepository } from '../../accounts/business-accounts/business-accounts.repository.js';
import { UNRESTRICTED_ACCOUNT, type AccountSendState } from '../../accounts/health/account-health.js';
import { PhoneNumbersRepository } from '../../accounts/phone-numbers/phone-numbers.repository.js';
import { TemplatesRepository } from '../../accounts/templates/templates.repository.js';
import { ConversationWindowsRepository } from '../conversation-windows.repository.js';

/** What the pre-send checks need (missing rows read as nulls). */
export interface SendContext {
  /** The sending business account's credentials and standing with Meta (a missing row reads as unrestricted: the key lookup vouches for it). */
  account: AccountSendState;
  numberExists: boolean;
  numberStatus: string | null;
  numberRemovedAt: Date | null;
  templateExists: boolean;
  templateStatus: string | null;
  templateRemovedAt: Date | null;
  parameterCounts: unknown;
  parameterFormat: string | null;
  lastInboundAt: Date | null;
}

export interface SendContextQuery {
  phoneNumberId: string;
  templateName: string | null;
  templateLanguage: string | null;
  /** The recipient, for the 24 h window (text messages); null for templates. */
  to: string | null;
}

/** LISTEN/NOTIFY channel on which every change to `business_accounts`, `phone_numbers` or `templates` names its business account. */
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
  ) {}

  async read(businessAccountId: string, q: SendContextQuery): Promise<SendContext> {
    const [account, number, template, lastInboundAt] = await Promise.all([
      this.accounts.sendState(businessAccountId),
      this.numbers.sendState(businessAccountId, q.phoneNumberId),
      q.templateName !== null && q.templateLanguage !== null ? this.templates.sendState(businessAccountId, q.templateName, q.templateLanguage) : null,
      q.to !== null ? this.windows.lastInboundAt(q.phoneNumberId, q.to) : null,
    ]);
    return {
      account: account ?? UNRESTRICTED_ACCOUNT,
      numberExists: number !== null,
      numberStatus: number?.status ?? null,
      numberRemovedAt: number?.removedAt ?? null,
      templateExists: template !== null,
      templateStatus: template?.status ?? null,
      templateRemovedAt: template?.removedAt ?? null,
      parameterCounts: template?.parameterCounts ?? null,
      parameterFormat: template?.parameterFormat ?? null,
      lastInboundAt,
    };
  }

  /** The languages a template is synced in (to name the missing translation in a refusal). */
  languagesOf(businessAccountId: string, templateName: string): Promise<string[]> {
    return this.templates.languagesOf(businessAccountId, templateName);
  }
}
