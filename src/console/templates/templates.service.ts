import { Injectable } from '@nestjs/common';
import type { Prisma, Template } from '../../generated/prisma/client.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { SecretBox } from '../../core/crypto/secret-box.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import type { UpstreamTemplate } from '../../upstream/upstream.types.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { AuditService } from '../audit/audit.service.js';
import { BusinessAccountsRepository } from '../business-accounts/business-accounts.repository.js';
import { consoleUpstreamError } from '../upstream-errors.js';
import { countParameters, type ParameterCounts, type UpstreamTemplateComponent } from './template-parameters.js';

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
  sendable: boolean;
  removed: boolean;
  syncedAt: string;
  updatedAt: string;
}

export interface TemplateSyncResult {
  counts: { added: number; updated: number; removed: number; total: number; approved: number };
  lastSyncedAt: string;
}

@Injectable()
export class TemplatesService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly accounts: BusinessAccountsRepository,
    private readonly upstream: WhatsAppClient,
    private readonly secrets: SecretBox,
    private readonly audit: AuditService,
  ) {}

  /** All pages first, then one transaction: upsert by (account, name, language); gone upstream → marked removed. */
  async sync(operator: ConsoleScope, wabaId: string): Promise<TemplateSyncResult> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    // What the listing says is at least as new as this: a status webhook decided before it changes nothing.
    // Whole seconds, like Meta's entry.time: a decision within the same second still applies.
    const readFrom = new Date(Math.floor(Date.now() / 1000) * 1000);
    const fetched = await this.upstream.listTemplates(this.secrets.decrypt(account.accessTokenEncrypted), wabaId).catch(consoleUpstreamError);
    const syncedAt = new Date();
    const counts = await this.prisma.$transaction(async (tx) => {
      const existing = await tx.template.findMany({ where: { businessAccountId: account.id }, select: { id: true, name: true, language: true, removedAt: true } });
      const known = new Map(existing.map((t) => [`${t.name}\u0000${t.language}`, t]));
      const seen = new Set<string>();
      let added = 0;
      let updated = 0;
      for (const template of fetched) {
        const key = `${template.name}\u0000${template.language}`;
        if (seen.has(key)) continue; // the upstream listed it twice across pages; the first wins
        seen.add(key);
        const data = { ...fromUpstream(template, syncedAt), statusUpdatedAt: readFrom };
        const current = known.get(key);
        if (current) {
          await tx.template.update({ where: { id: current.id }, data });
          updated++;
        } else {
          await tx.template.create({ data: { ...data, businessAccountId: account.id, name: template.name, language: template.language } });
          added++;
        }
      }
      const gone = existing.filter((t) => !seen.has(`${t.name}\u0000${t.language}`) && !t.removedAt).map((t) => t.id);
      if (gone.length) await tx.template.updateMany({ where: { id: { in: gone } }, data: { removedAt: syncedAt } });
      await tx.businessAccount.update({ where: { id: account.id }, data: { templatesSyncedAt: syncedAt } });
      const result = { added, updated, removed: gone.length, total: seen.size, approved: fetched.filter((t) => t.status === 'APPROVED').length };
      await this.audit.record(tx, operator, 'templates.synced', { type: 'business_account', id: wabaId }, result);
      return result;
    });
    return { counts, lastSyncedAt: syncedAt.toISOString() };
  }

  async list(organizationId: string, wabaId: string, filter: { status?: string; name?: string }): Promise<TemplateView[]> {
    const account = await this.accounts.getOwned(organizationId, wabaId);
    const rows = await this.prisma.template.findMany({
      where: { businessAccountId: account.id, status: filter.status, name: filter.name },
      orderBy: [{ name: 'asc' }, { language: 'asc' }],
    });
    return rows.map(toView);
  }
}

function fromUpstream(t: UpstreamTemplate, syncedAt: Date) {
  const components = (t.components ?? []) as UpstreamTemplateComponent[];
  return {
    upstreamId: String(t.id),
    status: t.status,
    category: t.category ?? null,
    parameterFormat: t.parameter_format ?? 'POSITIONAL',
    components: components as unknown as Prisma.InputJsonValue,
    parameterCounts: countParameters(components) as unknown as Prisma.InputJsonValue,
    statusReason: null,
    removedAt: null,
    syncedAt,
  };
}

export function toView(t: Template): TemplateView {
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
    sendable: t.status === 'APPROVED' && !t.removedAt,
    removed: t.removedAt !== null,
    syncedAt: t.syncedAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}
