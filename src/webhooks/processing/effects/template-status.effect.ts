import { Injectable } from '@nestjs/common';
import { connectionOf, statement, type Tx } from '../../../core/prisma/sql.js';
import { isRecord } from '../classify.js';
import { readyAll, type EffectItem, type EventEffect, type PreparedEffect } from './event-effect.js';

/** Status of a template after Meta's event; null keeps the current status (FLAGGED is a warning only). */
export function templateStatusAfter(event: string): string | null {
  switch (event) {
    case 'REINSTATED':
    case 'UNARCHIVED':
      return 'APPROVED';
    case 'FLAGGED':
      return null;
    default:
      return event;
  }
}

const decide = statement(
  'template_decision',
  `UPDATE templates t SET status = $4, status_reason = $5, status_updated_at = $6, updated_at = now()
     FROM business_accounts b
    WHERE b.id = t.business_account_id AND b.waba_id = $1 AND t.name = $2 AND t.language = $3
      AND (t.status_updated_at IS NULL OR t.status_updated_at <= $6)`,
);
const recategorise = statement(
  'template_category',
  `UPDATE templates t SET category = $4, updated_at = now()
     FROM business_accounts b
    WHERE b.id = t.business_account_id AND b.waba_id = $1 AND t.name = $2 AND t.language = $3`,
);

/**
 * Meta's decision on a template updates the synced copy, so sends are checked against it without waiting for
 * the next sync: only APPROVED is sendable, so PAUSED, REJECTED or DISABLED stop sends at once. A template
 * that was never synced has nothing to update; the event is still stored. Decisions carry Meta's time
 * (entry.time): one older than the stored status's (a late redelivery, or a sync that read a newer state)
 * is kept as an event but changes nothing.
 */
@Injectable()
export class TemplateStatusEffect implements EventEffect {
  appliesTo(item: EffectItem): boolean {
    return item.kind === 'template_status' && (item.eventType === 'message_template_status_update' || item.eventType === 'template_category_update');
  }

  prepare<T extends EffectItem>(tx: Tx, _items: T[]): Promise<PreparedEffect<T>> {
    return Promise.resolve(
      readyAll(async (owned) => {
        // Template by template (key order: concurrent chunks lock templates in the same order), oldest first.
        const changes = owned.map(templateChange).filter((c): c is TemplateChange => c !== null);
        changes.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.at.getTime() - b.at.getTime()));
        const client = connectionOf(tx);
        for (const c of changes) {
          if (c.status !== undefined) await client.query(decide([c.wabaId, c.name, c.language, c.status, c.reason, c.at]));
          else await client.query(recategorise([c.wabaId, c.name, c.language, c.category]));
        }
      }),
    );
  }
}

interface TemplateChange {
  key: string;
  wabaId: string;
  name: string;
  language: string;
  at: Date;
  status?: string;
  reason?: string | null;
  category?: string;
}

function templateChange(item: EffectItem): TemplateChange | null {
  const v = isRecord(item.raw) ? item.raw : {};
  const name = typeof v.message_template_name === 'string' ? v.message_template_name : null;
  const language = typeof v.message_template_language === 'string' ? v.message_template_language : null;
  if (!name || !language) return null;
  const base = { key: `${item.wabaId}\u0000${name}\u0000${language}`, wabaId: item.wabaId, name, language, at: item.upstreamTimestamp ?? item.createdAt ?? new Date() };
  if (item.eventType === 'message_template_status_update') {
    if (typeof v.event !== 'string' || v.event === '') return null;
    const status = templateStatusAfter(v.event);
    if (!status) return null;
    return { ...base, status, reason: typeof v.reason === 'string' && v.reason !== '' && v.reason !== 'NONE' ? v.reason : null };
  }
  if (typeof v.new_category !== 'string' || v.new_category === '') return null;
  return { ...base, category: v.new_category };
}
