import { Injectable } from '@nestjs/common';
import type { Prisma, Template } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';
import type { SyncCounts } from '../phone-numbers/phone-numbers.repository.js';
import type { ParameterCounts, UpstreamTemplateComponent } from './template-parameters.js';

/** A template as the upstream platform lists it, in our column names. Keyed by (name, language). */
export interface SyncedTemplate {
  upstreamId: string;
  name: string;
  language: string;
  status: string;
  category: string | null;
  parameterFormat: string;
  components: UpstreamTemplateComponent[];
  parameterCounts: ParameterCounts;
}

/** Owns `templates`. Every statement is scoped to one business account, its first argument. */
@Injectable()
export class TemplatesRepository {
  constructor(private readonly prisma: PrismaService) {}

  list(businessAccountId: string, filter: { status?: string; name?: string } = {}): Promise<Template[]> {
    return clientOf(this.prisma).template.findMany({
      where: { businessAccountId, status: filter.status, name: filter.name },
      orderBy: [{ name: 'asc' }, { language: 'asc' }],
    });
  }

  /**
   * Makes the stored templates what the upstream listed (one entry per name and language): listed ones
   * upserted with their status decided at `statusReadAt`, the others marked removed. Run it inside a unit
   * of work: all or nothing.
   */
  async replaceAll(businessAccountId: string, templates: SyncedTemplate[], syncedAt: Date, statusReadAt: Date): Promise<SyncCounts> {
    const db = clientOf(this.prisma);
    const existing = await db.template.findMany({ where: { businessAccountId }, select: { id: true, name: true, language: true, removedAt: true } });
    const keyOf = (t: { name: string; language: string }) => `${t.name}\u0000${t.language}`;
    const known = new Map(existing.map((t) => [keyOf(t), t.id]));
    let added = 0;
    for (const template of templates) {
      const id = known.get(keyOf(template));
      const data = {
        ...template,
        components: template.components as unknown as Prisma.InputJsonValue,
        parameterCounts: template.parameterCounts as unknown as Prisma.InputJsonValue,
        statusReason: null,
        statusUpdatedAt: statusReadAt,
        removedAt: null,
        syncedAt,
      };
      if (id) await db.template.update({ where: { id }, data });
      else await db.template.create({ data: { ...data, businessAccountId } });
      if (!id) added++;
    }
    const seen = new Set(templates.map(keyOf));
    const gone = existing.filter((t) => !seen.has(keyOf(t)) && !t.removedAt).map((t) => t.id);
    if (gone.length) await db.template.updateMany({ where: { businessAccountId, id: { in: gone } }, data: { removedAt: syncedAt } });
    return { added, updated: templates.length - added, removed: gone.length };
  }
}
