import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger } from '../../../core/logging/app-logger.js';
import type { Tx } from '../../../core/prisma/sql.js';
import { readyAll, type EffectItem, type EventEffect, type PreparedEffect } from './event-effect.js';

/**
 * Account-level changes (restrictions, reviews, quality, unknown fields) change nothing we store beyond the
 * event itself; they are logged so that operators see them in the worker's log as well as in the console.
 */
@Injectable()
export class AccountUpdateEffect implements EventEffect {
  constructor(@Inject(APP_LOGGER) private readonly logger: AppLogger) {}

  appliesTo(item: EffectItem): boolean {
    return item.kind === 'account_update';
  }

  prepare<T extends EffectItem>(_tx: Tx, _items: T[]): Promise<PreparedEffect<T>> {
    return Promise.resolve(
      readyAll(async (owned) => {
        // The payload can hold personal data (names, phone numbers): it is stored on the event, and logged only at debug.
        for (const e of owned) {
          this.logger.info({ wabaId: e.wabaId, eventType: e.eventType }, 'account-level webhook event');
          this.logger.debug({ wabaId: e.wabaId, raw: e.raw }, 'account-level webhook payload');
        }
      }),
    );
  }
}
