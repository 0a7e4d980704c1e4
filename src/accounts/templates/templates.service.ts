import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../../auth/request-scope.js';
import type { UpstreamTemplate } from '../../upstream/upstream.types.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { AccountSync } from '../business-accounts/account-sync.js';
import { BusinessAccountsRepository } from '../business-accounts/business-accounts.repository.js';
import { countParameters, type ParameterCounts, type UpstreamTemplateComponent } from './template-parameters.js';
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
  ) {}

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
  const components = (t.components ?? []) as UpstreamTemplateComponent[];
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
