import { Inject, Injectable } from '@nestjs/common';
import { TemplatesRepository, type TemplateDecision } from '../../../accounts/templates/templates.repository.js';
import type { Tx } from '../../../core/db/db.js';
import { isRecord } from '../../../events/classify.js';
import type { TemplateDecisions } from '../processing.ports.js';
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

/** The template fields that change the synced copy; the others (components updates, unknown ones) are stored only. */
const APPLIED_FIELDS = new Set([
  'message_template_status_update',
  'template_category_update',
  'message_template_quality_update',
]);

/**
 * Meta's decision on a template (its status, category or quality score) updates the synced copy, so sends are checked against it without waiting for
 * the next sync: only APPROVED is sendable, so PAUSED, REJECTED or DISABLED stop sends at once. A template
 * that was never synced has nothing to update; the event is still stored. Decisions carry Meta's time
 * (entry.time): one older than the stored status's (a late redelivery, or a sync that read a newer state)
 * is kept as an event but changes nothing.
 */
@Injectable()
export class TemplateStatusEffect implements EventEffect {
  constructor(@Inject(TemplatesRepository) private readonly templates: TemplateDecisions) {}

  appliesTo(item: EffectItem): boolean {
    return item.kind === 'template_status' && APPLIED_FIELDS.has(item.eventType);
  }

  prepare<T extends EffectItem>(tx: Tx, _items: T[]): Promise<PreparedEffect<T>> {
    return Promise.resolve(
      readyAll((owned) =>
        this.templates.applyDecisions(
          tx,
          owned.map(decisionOf).filter((d): d is TemplateDecision => d !== null),
        ),
      ),
    );
  }
}

function decisionOf(item: EffectItem): TemplateDecision | null {
  const v = isRecord(item.raw) ? item.raw : {};
  const name = typeof v.message_template_name === 'string' ? v.message_template_name : null;
  const language = typeof v.message_template_language === 'string' ? v.message_template_language : null;
  if (!name || !language) return null;
  const base = { wabaId: item.wabaId, name, language, at: item.upstreamTimestamp ?? item.createdAt ?? new Date() };
  if (item.eventType === 'message_template_status_update') {
    if (typeof v.event !== 'string' || v.event === '') return null;
    const status = templateStatusAfter(v.event);
    if (!status) return null;
    return {
      ...base,
      status,
      reason: typeof v.reason === 'string' && v.reason !== '' && v.reason !== 'NONE' ? v.reason : null,
    };
  }
  if (item.eventType === 'message_template_quality_update') {
    if (typeof v.new_quality_score !== 'string' || v.new_quality_score === '') return null;
    return { ...base, qualityScore: v.new_quality_score };
  }
  if (typeof v.new_category !== 'string' || v.new_category === '') return null;
  return { ...base, category: v.new_category };
}
