import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { SlotQuota } from './slot-quota.js';

/** Long polls waiting at once in one API process, all feeds and tenants together: the backstop. */
export const MAX_LONG_POLLS = 1000;

/** Who waits: the organization and the caller's session (a console session; for a key-pair feed, the key). */
export type LongPollOwner = { organization: string; session: string };

/**
 * The waiting slots of every long poll of this process (the events feed, and any other feed that waits: the
 * conversations' messages feed takes its slots here too), in fair shares: per organization
 * (`LONG_POLLS_PER_ORGANIZATION`) and per session (`LONG_POLLS_PER_SESSION`), with MAX_LONG_POLLS as the backstop.
 * One budget for all feeds, so a second feed does not double what a tenant may hold. Past a share: 429 + Retry-After
 * to that owner only.
 */
@Injectable()
export class LongPollShares extends SlotQuota<keyof LongPollOwner> {
  constructor(config: AppConfig) {
    super({
      total: MAX_LONG_POLLS,
      per: { organization: config.longPollsPerOrganization, session: config.longPollsPerSession },
      what: 'long polls',
    });
  }
}
