import { Injectable } from '@nestjs/common';
import type { Prisma } from '../../../generated/prisma/client.js';
import { isRecord } from '../classify.js';
import type { EffectOutcome, EventEffect, StoredEvent, Tx } from './event-effect.js';

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

/**
 * Meta's decision on a template updates the synced copy, so sends are checked against it without waiting for
 * the next sync: only APPROVED is sendable, so PAUSED, REJECTED or DISABLED stop sends at once. A template
 * that was never synced has nothing to update; the event is still stored. Decisions carry Meta's time
 * (entry.time): one older than the stored status's (a late redelivery, or a sync that read a newer state)
 * is kept as an event but changes nothing.
 */
@Injectable()
export class TemplateStatusEffect implements EventEffect {
  appliesTo(event: StoredEvent): boolean {
    return event.kind === 'template_status' && (event.eventType === 'message_template_status_update' || event.eventType === 'template_category_update');
  }

  async apply(tx: Tx, event: StoredEvent): Promise<EffectOutcome> {
    const v = isRecord(event.raw) ? event.raw : {};
    const name = typeof v.message_template_name === 'string' ? v.message_template_name : null;
    const language = typeof v.message_template_language === 'string' ? v.message_template_language : null;
    if (!name || !language) return 'applied';

    const where: Prisma.TemplateWhereInput = { businessAccount: { wabaId: event.wabaId }, name, language };
    if (event.eventType === 'message_template_status_update') {
      if (typeof v.event !== 'string' || v.event === '') return 'applied';
      const status = templateStatusAfter(v.event);
      if (!status) return 'applied';
      const decidedAt = event.upstreamTimestamp ?? event.createdAt;
      await tx.template.updateMany({
        where: { ...where, OR: [{ statusUpdatedAt: null }, { statusUpdatedAt: { lte: decidedAt } }] },
        data: { status, statusReason: typeof v.reason === 'string' && v.reason !== '' && v.reason !== 'NONE' ? v.reason : null, statusUpdatedAt: decidedAt },
      });
    } else {
      if (typeof v.new_category !== 'string' || v.new_category === '') return 'applied';
      await tx.template.updateMany({ where, data: { category: v.new_category } });
    }
    return 'applied';
  }
}
