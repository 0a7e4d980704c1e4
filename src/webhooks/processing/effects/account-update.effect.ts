import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger } from '../../../core/logging/app-logger.js';
import type { EffectOutcome, EventEffect, StoredEvent, Tx } from './event-effect.js';

/**
 * Account-level changes (restrictions, reviews, quality, unknown fields) change nothing we store beyond the
 * event itself; they are logged so that operators see them in the worker's log as well as in the console.
 */
@Injectable()
export class AccountUpdateEffect implements EventEffect {
  constructor(@Inject(APP_LOGGER) private readonly logger: AppLogger) {}

  appliesTo(event: StoredEvent): boolean {
    return event.kind === 'account_update';
  }

  async apply(_tx: Tx, event: StoredEvent): Promise<EffectOutcome> {
    this.logger.info({ eventId: event.id, wabaId: event.wabaId, eventType: event.eventType, raw: event.raw }, 'account-level webhook event');
    return 'applied';
  }
}
