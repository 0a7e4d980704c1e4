import { Injectable } from '@nestjs/common';
import type { Prisma, Template } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { connectionOf, statement, type Tx } from '../../core/prisma/sql.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';
import { skipTake } from '../../core/http/pagination.js';
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

/** What a send needs to know of a template: its status, whether removed, and the parameters it expects. */
export interface TemplateSendState {
  status: string;
  removedAt: Date | null;
  parameterCounts: unknown;
  parameterFormat: string;
  category: string | null;
  /** The OTP button's otp_type of an authentication template (ONE_TAP, ZERO_TAP, COPY_CODE); null otherwise. */
  otpType: string | null;
}

const sendState = statement(
  'template_send_state',
  `SELECT status, removed_at AS "removedAt", parameter_counts AS "parameterCounts", parameter_format AS "parameterFormat", category,
          (SELECT b->>'otp_type'
             FROM jsonb_array_elements(CASE jsonb_typeof(components) WHEN 'array' THEN components ELSE '[]' END) c,
                  jsonb_array_elements(CASE jsonb_typeof(c->'buttons') WHEN 'array' THEN c->'buttons' ELSE '[]' END) b
            WHERE b->>'type' = 'OTP' LIMIT 1) AS "otpType"
     FROM templates WHERE business_account_id = $1::uuid AND name = $2 AND language = $3`,
);
const languages = statement(
  'template_languages',
  `SELECT language FROM templates WHERE business_account_id = $1::uuid AND name = $2 AND removed_at IS NULL ORDER BY language`,
);

/** Meta's decision on a template, from a webhook (by business account wabaId, name and language). */
export interface TemplateDecision {
  wabaId: string;
  name: string;
  language: string;
  /** Meta's time of the decision: one older than the stored status's (or category's) changes nothing. */
  at: Date;
  status?: string;
  reason?: string | null;
  category?: string;
  /** message_template_quality_update: GREEN, YELLOW, RED or UNKNOWN. */
  qualityScore?: string;
}

const decide = statement(
  'template_decision',
  `UPDATE templates t SET status = $4, status_reason = $5, status_updated_at = $6, updated_at = now()
     FROM business_accounts b
    WHERE b.id = t.business_account_id AND b.waba_id = $1 AND t.name = $2 AND t.language = $3
      AND (t.status_updated_at IS NULL OR t.status_updated_at <= $6)`,
);
/** One attribute of a template set from a webhook ($4) at Meta's time ($5), unless a newer one was set already. */
const setByWebhook = (name: string, column: string, guard: string) =>
  statement(
    name,
    `UPDATE templates t SET ${column} = $4, ${guard} = $5, updated_at = now()
       FROM business_accounts b
      WHERE b.id = t.business_account_id AND b.waba_id = $1 AND t.name = $2 AND t.language = $3
        AND (t.${guard} IS NULL OR t.${guard} <= $5)`,
  );
const recategorise = setByWebhook('template_category', 'category', 'category_updated_at');
const requalify = setByWebhook('template_quality', 'quality_score', 'quality_updated_at');

/**
 * Owns `templates`. Every statement is scoped to one business account, its first argument (webhook decisions:
 * the account's wabaId, in the worker's transaction, on node-postgres).
 */
@Injectable()
export class TemplatesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** One page of the account's templates (by name, then language) and how many match. */
  async page(businessAccountId: string, query: { page: number; limit: number; status?: string; name?: string }): Promise<{ rows: Template[]; total: number }> {
    const where = { businessAccountId, status: query.status, name: query.name };
    const db = clientOf(this.prisma);
    const [rows, total] = await Promise.all([
      db.template.findMany({ where, orderBy: [{ name: 'asc' }, { language: 'asc' }, { id: 'asc' }], ...skipTake(query) }),
      db.template.count({ where }),
    ]);
    return { rows, total };
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
        categoryUpdatedAt: statusReadAt,
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

  /**
   * Applies Meta's decisions in the caller's transaction, template by template in key order (concurrent
   * chunks lock templates in the same order), oldest first. A template never synced has nothing to update.
   */
  async applyDecisions(tx: Tx, decisions: TemplateDecision[]): Promise<void> {
    const key = (d: TemplateDecision) => `${d.wabaId}\u0000${d.name}\u0000${d.language}`;
    const ordered = [...decisions].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.at.getTime() - b.at.getTime()));
    const client = connectionOf(tx);
    for (const d of ordered) {
      if (d.status !== undefined) await client.query(decide([d.wabaId, d.name, d.language, d.status, d.reason ?? null, d.at]));
      else if (d.category !== undefined) await client.query(recategorise([d.wabaId, d.name, d.language, d.category, d.at]));
      else if (d.qualityScore !== undefined) await client.query(requalify([d.wabaId, d.name, d.language, d.qualityScore, d.at]));
    }
  }

  /** The send path's read (SQL on the pool: it runs on every cache miss of a send); null when never synced. */
  async sendState(businessAccountId: string, name: string, language: string): Promise<TemplateSendState | null> {
    const { rows } = await this.prisma.pool.query<TemplateSendState>(sendState([businessAccountId, name, language]));
    return rows[0] ?? null;
  }

  /** The languages a template is synced in (not removed). */
  async languagesOf(businessAccountId: string, name: string): Promise<string[]> {
    const { rows } = await this.prisma.pool.query<{ language: string }>(languages([businessAccountId, name]));
    return rows.map((r) => r.language);
  }
}
