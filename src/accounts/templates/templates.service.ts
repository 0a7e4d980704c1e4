import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { AuditService } from '../../audit/audit.service.js';
import { Conflict, InvalidInput, NotFound, UpstreamRejected } from '../../core/errors/domain-errors.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { UpstreamError } from '../../upstream/upstream.error.js';
import type { UpstreamTemplate, UpstreamTemplateComponent } from '../../upstream/upstream.types.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { AccountCredentials } from '../business-accounts/account-credentials.js';
import { AccountSync } from '../business-accounts/account-sync.js';
import { BusinessAccountsRepository, type BusinessAccount } from '../business-accounts/business-accounts.repository.js';
import { checkTemplateComponents, type ParameterFormat } from './template-definition.js';
import { countParameters, type ParameterCounts } from './template-parameters.js';
import { TemplatesRepository, type SyncedTemplate, type Template } from './templates.repository.js';
import { toPage, type Page } from '../../core/rows/page.js';

export interface TemplateView {
  id: string;
  upstreamId: string;
  name: string;
  language: string;
  status: string;
  category: string | null;
  parameterFormat: string;
  components: unknown;
  parameterCounts: ParameterCounts;
  statusReason: string | null;
  /** Meta's quality score (message_template_quality_update): GREEN, YELLOW, RED or UNKNOWN; null until one arrives. */
  qualityScore: string | null;
  sendable: boolean;
  removed: boolean;
  syncedAt: string;
  updatedAt: string;
}

/** A new template as the console submits it (components in Meta's own shape). */
export interface TemplateDraft {
  name: string;
  language: string;
  category: string;
  components: object[];
  parameterFormat?: ParameterFormat;
}

/** An edit: new components and/or a new category. */
export interface TemplateChange {
  components?: object[];
  category?: string;
}

export const TEMPLATE_NOT_FOUND = 'Template not found';
/** Meta's subcode for a name and language that exist already ("Content in this language already exists"). */
const LANGUAGE_EXISTS = 2388024;

/** What a sync answers, the same shape for numbers and templates: what changed, and when (then GET the list). */
export interface TemplateSyncResult {
  counts: { added: number; updated: number; removed: number; total: number; approved: number };
  syncedAt: string;
}

@Injectable()
export class TemplatesService {
  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly templates: TemplatesRepository,
    private readonly upstream: WhatsAppClient,
    private readonly syncs: AccountSync,
    private readonly credentials: AccountCredentials,
    private readonly uow: UnitOfWork,
    private readonly audit: AuditService,
  ) {}

  /**
   * Submits a new template to Meta (`POST /{waba-id}/message_templates`) once it passes Meta's rules here, then
   * stores it as Meta answered (PENDING until the review webhook) with its audit entry. Nothing is stored when
   * Meta refuses it.
   */
  async create(operator: ConsoleScope, wabaId: string, draft: TemplateDraft): Promise<TemplateView> {
    const format = draft.parameterFormat ?? 'POSITIONAL';
    const problems = checkTemplateComponents(draft.components, draft.category, format);
    if (problems.length > 0) throw new InvalidInput(problems);
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const created = await this.upstream
      .createTemplate(this.credentials.open(account), wabaId, {
        name: draft.name,
        language: draft.language,
        category: draft.category,
        ...(draft.parameterFormat ? { parameter_format: draft.parameterFormat } : {}),
        components: draft.components,
      })
      .catch(templateFailure(`${draft.name} (${draft.language})`));
    const components = draft.components as UpstreamTemplateComponent[];
    const row = await this.uow.run(async () => {
      const stored = await this.templates.insertCreated(
        account.id,
        {
          upstreamId: created.id,
          name: draft.name,
          language: draft.language,
          status: created.status,
          category: created.category,
          parameterFormat: format,
          components,
          parameterCounts: countParameters(components),
        },
        reviewClock(),
      );
      await this.audit.record(operator, 'template.created', target(stored), {
        name: stored.name,
        language: stored.language,
        category: stored.category,
        upstreamId: stored.upstreamId,
      });
      return stored;
    });
    return toView(row);
  }

  /** Edits a template at Meta (`POST /{template-id}`); stored, it is PENDING again until Meta's review. */
  async edit(operator: ConsoleScope, wabaId: string, id: string, change: TemplateChange): Promise<TemplateView> {
    if (change.components === undefined && change.category === undefined)
      throw InvalidInput.of('components', 'give components, category or both to edit a template');
    const { account, template } = await this.owned(operator, wabaId, id);
    const category = change.category ?? template.category ?? '';
    const format: ParameterFormat = template.parameterFormat === 'NAMED' ? 'NAMED' : 'POSITIONAL';
    if (change.components !== undefined) {
      const problems = checkTemplateComponents(change.components, category, format);
      if (problems.length > 0) throw new InvalidInput(problems);
    }
    await this.upstream
      .editTemplate(this.credentials.open(account), template.upstreamId, change)
      .catch(templateFailure(`${template.name} (${template.language})`));
    const components = change.components as UpstreamTemplateComponent[] | undefined;
    const row = await this.uow.run(async () => {
      const edited = await this.templates.markEdited(
        account.id,
        id,
        {
          components,
          parameterCounts: components && countParameters(components),
          category: change.category,
        },
        reviewClock(),
      );
      if (!edited) throw new NotFound(TEMPLATE_NOT_FOUND);
      await this.audit.record(operator, 'template.edited', target(edited), {
        name: edited.name,
        language: edited.language,
        changed: [...(change.components ? ['components'] : []), ...(change.category ? ['category'] : [])],
      });
      return edited;
    });
    return toView(row);
  }

  /** Deletes this language of a template at Meta (`DELETE …/message_templates?name=&hsm_id=`); kept here, removed. */
  async remove(operator: ConsoleScope, wabaId: string, id: string): Promise<TemplateView> {
    const { account, template } = await this.owned(operator, wabaId, id);
    await this.upstream
      .deleteTemplate(this.credentials.open(account), wabaId, template.name, template.upstreamId)
      .catch(templateFailure(`${template.name} (${template.language})`));
    const row = await this.uow.run(async () => {
      const removed = await this.templates.markRemoved(account.id, id, new Date());
      if (!removed) throw new NotFound(TEMPLATE_NOT_FOUND);
      await this.audit.record(operator, 'template.deleted', target(removed), {
        name: removed.name,
        language: removed.language,
        upstreamId: removed.upstreamId,
      });
      return removed;
    });
    return toView(row);
  }

  /** The organization's connected account and its template (not removed), or NotFound. */
  private async owned(
    operator: ConsoleScope,
    wabaId: string,
    id: string,
  ): Promise<{ account: BusinessAccount; template: Template }> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const template = await this.templates.get(account.id, id);
    if (!template || template.removedAt) throw new NotFound(TEMPLATE_NOT_FOUND);
    return { account, template };
  }

  /** All or nothing: upsert by (account, name, language); gone upstream → marked removed. */
  async sync(operator: ConsoleScope, wabaId: string): Promise<TemplateSyncResult> {
    // What the listing says is at least as new as this: a status webhook decided before it changes nothing.
    // Whole seconds, like Meta's entry.time: a decision within the same second still applies.
    const readFrom = new Date(Math.floor(Date.now() / 1000) * 1000);
    const { counts, syncedAt } = await this.syncs.run(
      operator,
      wabaId,
      'templates',
      (token) => this.upstream.listTemplates(token, wabaId),
      async (account, fetched, syncedAt) => {
        const listed = firstOfEach(fetched.map(fromUpstream));
        const changed = await this.templates.replaceAll(account.id, listed, syncedAt, readFrom);
        return { ...changed, total: listed.length, approved: fetched.filter((t) => t.status === 'APPROVED').length };
      },
    );
    return { counts, syncedAt: syncedAt.toISOString() };
  }

  async list(
    organizationId: string,
    wabaId: string,
    query: { page: number; limit: number; status?: string; name?: string },
  ): Promise<Page<TemplateView>> {
    const account = await this.accounts.getOwned(organizationId, wabaId);
    const { rows, total } = await this.templates.page(account.id, query);
    return toPage(rows.map(toView), total, query);
  }
}

/** The upstream may list a template twice across pages; the first wins. */
function firstOfEach(templates: SyncedTemplate[]): SyncedTemplate[] {
  const seen = new Set<string>();
  return templates.filter((t) => {
    const key = `${t.name}\u0000${t.language}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function fromUpstream(t: UpstreamTemplate): SyncedTemplate {
  const components = t.components ?? [];
  return {
    upstreamId: String(t.id),
    name: t.name,
    language: t.language,
    status: t.status,
    category: t.category ?? null,
    parameterFormat: t.parameter_format ?? 'POSITIONAL',
    components,
    parameterCounts: countParameters(components),
  };
}

function toView(t: Template): TemplateView {
  return {
    id: t.id,
    upstreamId: t.upstreamId,
    name: t.name,
    language: t.language,
    status: t.status,
    category: t.category,
    parameterFormat: t.parameterFormat,
    components: t.components,
    parameterCounts: t.parameterCounts as unknown as ParameterCounts,
    statusReason: t.statusReason,
    qualityScore: t.qualityScore,
    sendable: t.status === 'APPROVED' && !t.removedAt,
    removed: t.removedAt !== null,
    syncedAt: t.syncedAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

const target = (t: Template) => ({ type: 'template', id: t.id });

/**
 * The time a create or an edit decides the template's status at: the whole second, like Meta's webhook times
 * (entry.time), so that the review webhook that follows, even within the same second, applies.
 */
function reviewClock(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}

/**
 * Meta's refusal of a template call, said clearly: a name and language that exist already → 409; any other refusal
 * of the request as sent → 422 with Meta's own words (error_user_msg); credentials, limits and outages as for
 * every upstream call (424, 429, 502).
 */
function templateFailure(which: string): (error: unknown) => never {
  return (error) => {
    if (!(error instanceof UpstreamError)) throw error;
    if (error.code === 100 && error.subcode === LANGUAGE_EXISTS)
      throw new Conflict(`The template ${which} exists already at Meta: edit it, or choose another name or language`);
    if (error.errorClass === 'permanent')
      throw new UpstreamRejected(`${error.detail ? `${error.detail} ` : ''}(${error.reason})`, `the template ${which}`);
    throw error.toDomainError();
  };
}
