import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../auth/request-scope.js';
import { AuditService } from '../audit/audit.service.js';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import { AccountHealth } from '../accounts/health/account-health.js';
import type { ParameterCounts } from '../accounts/templates/template-parameters.js';
import { AppConfig } from '../core/config/app-config.js';
import { Conflict, InvalidInput, NotFound, TooManyAttempts, type FieldError } from '../core/errors/domain-errors.js';
import { toPage, type Page } from '../core/rows/page.js';
import { isRowId } from '../core/rows/row-id.js';
import { UnitOfWork } from '../core/db/unit-of-work.js';
import type { TemplateComponentDto } from '../messages/dto/send-message.dto.js';
import { parameterProblems } from '../messages/send/pre-send-checks.js';
import { SendContextReader } from '../messages/send/send-context.reader.js';
import { CampaignQueue } from './campaign-queue.js';
import { checkRecipients, MAX_RECIPIENT_ERRORS } from './campaign-recipients.js';
import {
  CampaignRecipientsRepository,
  type RecipientRow,
  type RecipientStatus,
} from './campaign-recipients.repository.js';
import { CampaignsRepository, type CampaignRow, type CampaignStatus } from './campaigns.repository.js';
import type { CampaignCountsView, CampaignRecipientView, CampaignView, CreateCampaignDto } from './campaign.dto.js';

export const CAMPAIGN_NOT_FOUND = 'Campaign not found';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Campaigns for operators (console session): created with every recipient checked first (nothing stored or sent
 * from a refused one), then run by the worker; paused, resumed, cancelled, failed recipients retried. Every change
 * commits with its audit entry. Another organization's account or campaign is not found (404).
 */
@Injectable()
export class CampaignsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: BusinessAccountsRepository,
    private readonly campaigns: CampaignsRepository,
    private readonly recipients: CampaignRecipientsRepository,
    private readonly contexts: SendContextReader,
    private readonly audit: AuditService,
    private readonly queue: CampaignQueue,
    private readonly config: AppConfig,
  ) {}

  /**
   * Issue 37, finding 3: an organization's share of the campaign workers. At most CAMPAIGNS_RUNNING_PER_ORGANIZATION
   * of its campaigns run at once (one more: 409), and the campaigns it creates in any 24 hours hold at most
   * CAMPAIGN_RECIPIENTS_PER_DAY_PER_ORGANIZATION recipients (past it: 429). Counted under the organization's lock,
   * in the unit of work that starts the campaign.
   */
  private async assertQuota(organizationId: string, adding: number): Promise<void> {
    const use = await this.campaigns.quotaUseLocked(organizationId, new Date(Date.now() - DAY_MS));
    const running = this.config.campaignsRunningPerOrganization;
    if (use.running >= running)
      throw new Conflict(
        `The organization already has ${use.running} campaigns running, its limit (CAMPAIGNS_RUNNING_PER_ORGANIZATION=${running}): pause, cancel or wait for one to end`,
      );
    const perDay = this.config.campaignRecipientsPerDayPerOrganization;
    if (adding > 0 && use.recipients + adding > perDay)
      throw new TooManyAttempts(
        `Campaign recipients over the organization's daily quota (CAMPAIGN_RECIPIENTS_PER_DAY_PER_ORGANIZATION=${perDay}): ${use.recipients} in the last 24 hours, ${adding} more asked`,
        3600,
      );
  }

  async create(operator: ConsoleScope, wabaId: string, dto: CreateCampaignDto): Promise<CampaignView> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const { recipients, errors } = checkRecipients(dto.recipients);
    const ctx = await this.contexts.readParts(account.id, {
      phoneNumberId: dto.phoneNumberId,
      templateName: dto.templateName,
      templateLanguage: dto.templateLanguage,
      recipient: '',
      window: false,
    });
    const synced = ctx.numberExists && !ctx.numberRemovedAt;
    // The account's own refusals (Meta's standing, a flagged number, a rejected token): 424, as a send.
    AccountHealth.assertCanSend(
      ctx.account,
      { phoneNumberId: dto.phoneNumberId, status: synced ? ctx.numberStatus : null },
      { businessInitiated: true },
    );
    const refusals: FieldError[] = [];
    if (!synced)
      refusals.push({
        field: 'phoneNumberId',
        message:
          'phoneNumberId is not a synced phone number of this business account; sync phone numbers in the console',
      });
    else if (ctx.numberStatus && ctx.numberStatus !== 'CONNECTED')
      refusals.push({
        field: 'phoneNumberId',
        message: `phone number status is ${ctx.numberStatus}; only CONNECTED numbers can send`,
      });
    const templateOk = ctx.templateExists && !ctx.templateRemovedAt && ctx.templateStatus === 'APPROVED';
    if (!ctx.templateExists || ctx.templateRemovedAt) {
      const languages = await this.contexts.languagesOf(account.id, dto.templateName);
      refusals.push(
        languages.length > 0
          ? {
              field: 'templateLanguage',
              message: `template ${dto.templateName} has no ${dto.templateLanguage} translation (synced: ${languages.join(', ')})`,
            }
          : {
              field: 'templateName',
              message: `template ${dto.templateName} (${dto.templateLanguage}) is not synced for this business account; sync templates in the console`,
            },
      );
    } else if (!templateOk) {
      refusals.push({
        field: 'templateName',
        message: `template ${dto.templateName} (${dto.templateLanguage}) is ${ctx.templateStatus}; only APPROVED templates can be sent`,
      });
    }
    if (templateOk)
      errors.push(
        ...this.parameterErrors(
          ctx.parameterCounts as ParameterCounts,
          ctx.parameterFormat!,
          dto.recipients,
          errors.length,
        ),
      );
    if (refusals.length > 0 || errors.length > 0) throw new InvalidInput([...refusals, ...errors]);

    const marketing = ctx.templateCategory === 'MARKETING';
    const created = await this.uow.run(async () => {
      await this.assertQuota(operator.organizationId, recipients.length);
      const campaign = await this.campaigns.create(account.id, {
        name: dto.name,
        phoneNumberId: dto.phoneNumberId,
        templateName: dto.templateName,
        templateLanguage: dto.templateLanguage,
        templateCategory: ctx.templateCategory,
        upstreamApi:
          marketing && ctx.account.marketingMessagesStatus === 'ONBOARDED' ? 'marketing_messages' : 'cloud_api',
        total: recipients.length,
        createdById: operator.operatorId,
      });
      await this.recipients.insertAll(campaign.id, recipients);
      await this.audit.record(
        operator,
        'campaign.started',
        { type: 'campaign', id: String(campaign.id) },
        { wabaId, name: campaign.name, templateName: campaign.templateName, total: campaign.total },
      );
      return campaign;
    });
    await this.queue.enqueue(created.id, created.run);
    return this.view(wabaId, created);
  }

  async list(
    organizationId: string,
    wabaId: string,
    query: { page: number; limit: number },
  ): Promise<Page<CampaignView>> {
    const account = await this.accounts.getOwned(organizationId, wabaId);
    const { rows, total } = await this.campaigns.page(account.id, account.heldSince, query);
    return toPage(
      rows.map((c) => toView(wabaId, c, null)),
      total,
      query,
    );
  }

  async get(organizationId: string, wabaId: string, id: number): Promise<CampaignView> {
    const { campaign } = await this.owned(organizationId, wabaId, id);
    return this.view(wabaId, campaign);
  }

  async recipientsOf(
    organizationId: string,
    wabaId: string,
    id: number,
    query: { page: number; limit: number; status?: RecipientStatus },
  ): Promise<Page<CampaignRecipientView>> {
    const { campaign } = await this.owned(organizationId, wabaId, id);
    const { rows, total } = await this.recipients.page(campaign.id, query.status, query);
    return toPage(rows.map(toRecipientView), total, query);
  }

  /** Running → paused: nothing is claimed (or sent) after this commits, beyond the sends already in flight. */
  async pause(operator: ConsoleScope, wabaId: string, id: number): Promise<CampaignView> {
    return this.transition(operator, wabaId, id, ['running'], 'paused', 'campaign.paused');
  }

  async resume(operator: ConsoleScope, wabaId: string, id: number): Promise<CampaignView> {
    const view = await this.transition(operator, wabaId, id, ['paused'], 'running', 'campaign.resumed');
    return view;
  }

  /** Running or paused → cancelled: recipients not claimed yet are cancelled in the same transaction. */
  async cancel(operator: ConsoleScope, wabaId: string, id: number): Promise<CampaignView> {
    return this.transition(operator, wabaId, id, ['running', 'paused'], 'cancelled', 'campaign.cancelled', (c) =>
      this.recipients.cancelPending(c.id),
    );
  }

  /**
   * Recipients whose latest message failed are sent again (a new message each). A running or completed campaign runs
   * again (a new run: the current runner, if any, hands over); a paused one keeps them pending until resumed.
   */
  async retryFailed(operator: ConsoleScope, wabaId: string, id: number): Promise<CampaignView & { requeued: number }> {
    const { campaign } = await this.owned(operator.organizationId, wabaId, id);
    if (campaign.status === 'cancelled') throw new Conflict('Campaign is cancelled: its recipients are not sent again');
    let requeued = 0;
    const updated = await this.uow.run(async () => {
      // A completed campaign runs again: one more running.
      if (campaign.status === 'completed') await this.assertQuota(operator.organizationId, 0);
      const current =
        campaign.status === 'paused'
          ? await this.campaigns.transition(campaign.businessAccountId, campaign.id, ['paused'], 'paused')
          : await this.campaigns.transition(
              campaign.businessAccountId,
              campaign.id,
              ['running', 'completed'],
              'running',
            );
      if (!current) throw new Conflict('Campaign changed meanwhile (cancelled?): try again');
      requeued = await this.recipients.requeueFailed(current.id);
      await this.audit.record(
        operator,
        'campaign.retried',
        { type: 'campaign', id: String(current.id) },
        { wabaId, requeued },
      );
      return current;
    });
    if (updated.status === 'running') await this.queue.enqueue(updated.id, updated.run);
    return { ...(await this.view(wabaId, updated)), requeued };
  }

  private async transition(
    operator: ConsoleScope,
    wabaId: string,
    id: number,
    from: readonly CampaignStatus[],
    to: CampaignStatus,
    action: 'campaign.paused' | 'campaign.resumed' | 'campaign.cancelled',
    also?: (c: CampaignRow) => Promise<unknown>,
  ): Promise<CampaignView> {
    const { campaign } = await this.owned(operator.organizationId, wabaId, id);
    const updated = await this.uow.run(async () => {
      if (to === 'running') await this.assertQuota(operator.organizationId, 0);
      const changed = await this.campaigns.transition(campaign.businessAccountId, campaign.id, from, to);
      if (!changed) return null;
      await also?.(changed);
      await this.audit.record(
        operator,
        action,
        { type: 'campaign', id: String(changed.id) },
        { wabaId, name: changed.name },
      );
      return changed;
    });
    if (!updated) {
      const now = (await this.campaigns.find(campaign.businessAccountId, campaign.id)) ?? campaign;
      throw new Conflict(
        `Campaign is ${now.status}: only a ${from.join(' or ')} campaign can be ${to === 'running' ? 'resumed' : to}`,
      );
    }
    if (updated.status === 'running') await this.queue.enqueue(updated.id, updated.run);
    return this.view(wabaId, updated);
  }

  private async owned(organizationId: string, wabaId: string, id: number): Promise<{ campaign: CampaignRow }> {
    const account = await this.accounts.getOwned(organizationId, wabaId);
    const campaign = isRowId(id) ? await this.campaigns.find(account.id, id, account.heldSince) : null;
    if (!campaign) throw new NotFound(CAMPAIGN_NOT_FOUND);
    return { campaign };
  }

  private async view(wabaId: string, c: CampaignRow): Promise<CampaignView> {
    return toView(wabaId, c, await this.recipients.counts(c.id));
  }

  /** Each recipient's components against the synced template (components cached by value: most files repeat them). */
  private parameterErrors(expected: ParameterCounts, format: string, items: unknown[], already: number): FieldError[] {
    const errors: FieldError[] = [];
    const verdicts = new Map<string, string | null>();
    for (const [i, item] of items.entries()) {
      if (already + errors.length >= MAX_RECIPIENT_ERRORS) break;
      const components = ((item as { components?: unknown } | null)?.components ?? []) as TemplateComponentDto[];
      if (!Array.isArray(components)) continue; // reported by checkRecipients
      const key = JSON.stringify(components);
      let verdict = verdicts.get(key);
      if (verdict === undefined) {
        const problems = parameterProblems(expected, format, components);
        verdict = problems.length > 0 ? problems.map((p) => p.message).join('; ') : null;
        if (verdicts.size < 10_000) verdicts.set(key, verdict);
      }
      if (verdict)
        errors.push({ field: `recipients.${i}.components`, message: `recipients.${i}.components: ${verdict}` });
    }
    return errors;
  }
}

function toView(wabaId: string, c: CampaignRow, counts: CampaignCountsView | null): CampaignView {
  const done = counts
    ? counts.sent + counts.delivered + counts.read + counts.failed + counts.skipped + counts.cancelled
    : null;
  return {
    id: c.id,
    wabaId,
    name: c.name,
    phoneNumberId: c.phoneNumberId,
    templateName: c.templateName,
    templateLanguage: c.templateLanguage,
    templateCategory: c.templateCategory,
    upstreamApi: c.upstreamApi,
    status: c.status,
    statusReason: c.statusReason,
    total: c.total,
    counts,
    progress: done === null ? null : c.total === 0 ? 1 : Math.round((done / c.total) * 10_000) / 10_000,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
    completedAt: c.completedAt?.toISOString() ?? null,
  };
}

function toRecipientView(r: RecipientRow): CampaignRecipientView {
  return {
    position: r.position,
    to: r.to,
    userId: r.userId,
    status: r.status,
    attempts: r.attempts,
    messageId: r.messageId,
    upstreamMessageId: r.upstreamMessageId,
    skipReason: r.skipReason,
    error:
      r.errorCode !== null || r.errorTitle !== null
        ? { code: r.errorCode, title: r.errorTitle, detail: r.errorDetail, category: r.errorCategory }
        : null,
  };
}
