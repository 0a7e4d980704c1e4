import { Injectable } from '@nestjs/common';
import { DomainError, InvalidInput, type FieldError } from '../../core/errors/domain-errors.js';
import { SendContextCache } from './send-context.cache.js';
import { SendContextReader, type SendContext } from './send-context.reader.js';
import { AccountHealth } from '../../accounts/health/account-health.js';
import type { ParameterCounts } from '../../accounts/templates/template-parameters.js';
import type { SendMessageDto, TemplateComponentDto } from '../dto/send-message.dto.js';
import { messageType } from '../types/catalogue.js';

const WINDOW_MS = 24 * 3600 * 1000;
/** Authentication templates Meta does not send to a business-scoped user id (by their OTP button's otp_type). */
const NOT_FOR_USER_IDS = new Set(['ONE_TAP', 'ZERO_TAP', 'COPY_CODE']);

/** Which Meta API carries a message: the Cloud API, or the Marketing Messages API (MARKETING templates of onboarded accounts). */
export type UpstreamApi = 'cloud_api' | 'marketing_messages';

/** What the checks decided besides "sendable". */
export interface SendPlan {
  upstreamApi: UpstreamApi;
  /** The number's Meta throughput.level as synced (its pace; STANDARD when unknown). */
  throughputLevel: string | null;
}

/** The field that names the recipient in the request (`to` or `userId`) and its value. */
export function recipientOf(dto: Pick<SendMessageDto, 'to' | 'userId'>): { field: 'to' | 'userId'; value: string } {
  return dto.userId !== undefined ? { field: 'userId', value: dto.userId } : { field: 'to', value: dto.to! };
}

/**
 * Checks made before the upstream platform is called, each refused as InvalidInput naming the field (or
 * SendingRefused when Meta's own state of the account or number forbids the send), so that a send that cannot succeed is refused
 * at once and with a reason instead of failing upstream.
 */
@Injectable()
export class PreSendChecks {
  constructor(
    private readonly contexts: SendContextCache,
    private readonly repository: SendContextReader,
  ) {}

  /**
   * Drops this process's cached state of the account at once, after this process changed it (the token Meta just
   * rejected): the next send here reads it fresh instead of waiting for the change's NOTIFY to come back.
   */
  forget(businessAccountId: string): void {
    this.contexts.invalidate(businessAccountId);
  }

  /**
   * One read for account, number, template and window (usually from the per-process cache); checked in the
   * order account health (AccountHealth: Meta's standing, the number's FLAGGED/RESTRICTED status, the token;
   * 424) → number synced → number CONNECTED → recipient blocked → template (and the recipient's marketing stop) →
   * window. Answers which API carries the message.
   */
  async assertSendable(businessAccountId: string, dto: SendMessageDto): Promise<SendPlan> {
    const template = dto.type === 'template';
    const query = {
      phoneNumberId: dto.phoneNumberId,
      templateName: template ? dto.templateName! : null,
      templateLanguage: template ? dto.templateLanguage! : null,
      recipient: recipientOf(dto).value,
      // The type's window rule (its catalogue file): templates any time (business-initiated), the others within 24 h.
      window: messageType(dto.type).window === 'service_window',
    };
    try {
      return await this.check(businessAccountId, dto, query.window, await this.contexts.get(businessAccountId, query));
    } catch (refusal) {
      if (!(refusal instanceof DomainError)) throw refusal;
      // Refused on what the cache holds: confirmed on the database's state before the caller hears it (the user
      // unblocked or the number reconnected a moment ago, in this process or another, and the cache has not heard).
      const fresh = await this.contexts.get(businessAccountId, query, { fresh: true });
      return this.check(businessAccountId, dto, query.window, fresh);
    }
  }

  private async check(
    businessAccountId: string,
    dto: SendMessageDto,
    windowed: boolean,
    ctx: SendContext,
  ): Promise<SendPlan> {
    const template = dto.type === 'template';
    const recipient = recipientOf(dto);
    // The account's own refusals first (disabled by Meta, a flagged number, a restriction in force, a rejected
    // token): 424 with the reason, the operator or Meta must act.
    const synced = ctx.numberExists && !ctx.numberRemovedAt;
    AccountHealth.assertCanSend(
      ctx.account,
      { phoneNumberId: dto.phoneNumberId, status: synced ? ctx.numberStatus : null },
      { businessInitiated: !windowed },
    );
    if (!synced) {
      throw InvalidInput.of(
        'phoneNumberId',
        'phoneNumberId is not a synced phone number of this business account; sync phone numbers in the console',
      );
    }
    if (ctx.numberStatus && ctx.numberStatus !== 'CONNECTED') {
      throw InvalidInput.of(
        'phoneNumberId',
        `phone number status is ${ctx.numberStatus}; only CONNECTED numbers can send`,
      );
    }
    if (ctx.recipient.blocked) {
      throw InvalidInput.of(
        recipient.field,
        `${recipient.field} is blocked on phone number ${dto.phoneNumberId}: unblock the user in the console to message them; nothing was sent`,
      );
    }
    if (windowed) this.assertWindowOpen(ctx, recipient.field);
    if (!template) return { upstreamApi: 'cloud_api', throughputLevel: ctx.numberThroughputLevel };
    await this.assertTemplate(businessAccountId, dto, ctx);
    const marketing = ctx.templateCategory === 'MARKETING';
    if (marketing && ctx.recipient.marketing === 'stop') {
      throw InvalidInput.of(
        recipient.field,
        `the user stopped marketing messages from this business: MARKETING template ${dto.templateName} was not sent (utility and authentication templates still are; the user can resume them in WhatsApp)`,
      );
    }
    if (recipient.field === 'userId' && ctx.templateOtpType !== null && NOT_FOR_USER_IDS.has(ctx.templateOtpType)) {
      throw InvalidInput.of(
        'templateName',
        `template ${dto.templateName} is a ${ctx.templateOtpType.toLowerCase().replace('_', '-')} authentication template, which the upstream platform does not send to a business-scoped user id: send it to the phone number (to)`,
      );
    }
    return {
      upstreamApi:
        marketing && ctx.account.marketingMessagesStatus === 'ONBOARDED' ? 'marketing_messages' : 'cloud_api',
      throughputLevel: ctx.numberThroughputLevel,
    };
  }

  private async assertTemplate(businessAccountId: string, dto: SendMessageDto, template: SendContext): Promise<void> {
    const name = dto.templateName!;
    const language = dto.templateLanguage!;
    if (!template.templateExists || template.templateRemovedAt) {
      const other = await this.repository.languagesOf(businessAccountId, name);
      if (other.length > 0) {
        throw InvalidInput.of(
          'templateLanguage',
          `template ${name} has no ${language} translation (synced: ${other.join(', ')})`,
        );
      }
      throw InvalidInput.of(
        'templateName',
        `template ${name} (${language}) is not synced for this business account; sync templates in the console`,
      );
    }
    if (template.templateStatus !== 'APPROVED') {
      throw InvalidInput.of(
        'templateName',
        `template ${name} (${language}) is ${template.templateStatus}; only APPROVED templates can be sent`,
      );
    }
    const problems = parameterProblems(
      template.parameterCounts as ParameterCounts,
      template.parameterFormat!,
      dto.components ?? [],
    );
    if (problems.length > 0) throw new InvalidInput(problems);
  }

  private assertWindowOpen(ctx: SendContext, field: 'to' | 'userId'): void {
    if (!ctx.lastInboundAt || ctx.lastInboundAt.getTime() < Date.now() - WINDOW_MS) {
      throw InvalidInput.of(
        field,
        'no message from this recipient to this number in the last 24 h: the customer service window is closed; send a template instead',
      );
    }
  }
}

/** Compares the given components with what the synced template expects; one error per component. */
export function parameterProblems(
  expected: ParameterCounts,
  format: string,
  components: TemplateComponentDto[],
): FieldError[] {
  const problems: FieldError[] = [];
  const given = { header: 0, body: 0, buttons: {} as Record<string, number>, headerTypes: [] as string[] };
  const names = { header: [] as (string | undefined)[], body: [] as (string | undefined)[] };
  for (const c of components) {
    if (c.type === 'header') {
      given.header += c.parameters.length;
      given.headerTypes.push(...c.parameters.map((p) => p.type));
      names.header.push(...c.parameters.map((p) => p.parameter_name));
    } else if (c.type === 'body') {
      given.body += c.parameters.length;
      names.body.push(...c.parameters.map((p) => p.parameter_name));
    } else if (c.index !== undefined) {
      given.buttons[c.index] = (given.buttons[c.index] ?? 0) + c.parameters.length;
    }
  }
  const check = (part: string, want: number, got: number) => {
    if (want !== got)
      problems.push({
        field: 'components',
        message: `${part} expects ${want} parameter${want === 1 ? '' : 's'}, got ${got}`,
      });
  };
  const media = expected.headerFormat?.toLowerCase();
  if (media && (given.header !== 1 || given.headerTypes[0] !== media)) {
    problems.push({
      field: 'components',
      message: `header needs one ${media} parameter (the template's header format is ${expected.headerFormat})`,
    });
  } else check('header', expected.header, given.header);
  check('body', expected.body, given.body);
  for (const index of new Set([...Object.keys(expected.buttons), ...Object.keys(given.buttons)])) {
    check(`button ${index}`, expected.buttons[index] ?? 0, given.buttons[index] ?? 0);
  }
  if (problems.length === 0 && format === 'NAMED') {
    for (const part of ['header', 'body'] as const) {
      const missing = expected.names[part].filter((n) => !names[part].includes(n));
      if (missing.length > 0)
        problems.push({ field: 'components', message: `${part} needs parameter_name ${missing.join(', ')}` });
    }
  }
  // One field, one message: the spec's envelope names each failing field once.
  return problems.length > 1 ? [{ field: 'components', message: problems.map((p) => p.message).join('; ') }] : problems;
}
