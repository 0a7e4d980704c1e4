import { Injectable } from '@nestjs/common';
import { skipTake } from '../../core/http/pagination.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { connectionOf, planned, statement, type Tx } from '../../core/prisma/sql.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';

export type MarketingPreferenceValue = 'stop' | 'resume';

/** Where a preference came from: Meta's user_preferences webhook, or its 131050 failure of a marketing message. */
export type MarketingPreferenceSource = 'user_preferences' | 'error_131050';

/** A preference learnt from a webhook: the business account by its wabaId (the webhook's tenant), the user by phone digits or BSUID. */
export interface MarketingPreferenceChange {
  wabaId: string;
  user: string;
  value: MarketingPreferenceValue;
  source: MarketingPreferenceSource;
  detail: string | null;
  /** Meta's time; an older change than the stored one changes nothing. */
  at: Date;
}

export interface StoredMarketingPreference {
  user: string;
  value: string;
  source: string;
  detail: string | null;
  updatedAt: Date;
}

/**
 * One row per (account, user), in key order (a statement may not touch a row twice; concurrent chunks lock in the
 * same order). The account is found by wabaId; an unknown wabaId stores nothing.
 */
const record = planned(
  `INSERT INTO marketing_preferences (business_account_id, "user", value, source, detail, updated_at)
   SELECT b.id, u.usr, u.val, u.src, u.det, u.at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS u(waba, usr, val, src, det, at)
     JOIN business_accounts b ON b.waba_id = u.waba
    ORDER BY b.id, u.usr
   ON CONFLICT (business_account_id, "user") DO UPDATE
     SET value = EXCLUDED.value, source = EXCLUDED.source, detail = EXCLUDED.detail, updated_at = EXCLUDED.updated_at
     WHERE marketing_preferences.updated_at <= EXCLUDED.updated_at`,
);

const valueOf = statement(
  'marketing_preference_of',
  `SELECT value FROM marketing_preferences WHERE business_account_id = $1::uuid AND "user" = $2`,
);

const stoppedAmong = statement(
  'marketing_stopped_among',
  `SELECT "user" FROM marketing_preferences WHERE business_account_id = $1::uuid AND "user" = ANY($2::text[]) AND value = 'stop'`,
);

/**
 * The one owner of `marketing_preferences`: the latest marketing preference (stop or resume) of each user of a
 * business account. Written by the worker (user_preferences webhooks, 131050 failures), read by the send path
 * (a MARKETING template to a user who stopped is refused) and the console.
 */
@Injectable()
export class MarketingPreferencesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Stores these changes in the caller's transaction, one statement; per user the newest by Meta's time wins. */
  async record(tx: Tx, changes: MarketingPreferenceChange[]): Promise<void> {
    const newest = new Map<string, MarketingPreferenceChange>();
    for (const c of changes) {
      const key = `${c.wabaId}\u0000${c.user}`;
      const seen = newest.get(key);
      if (!seen || c.at >= seen.at) newest.set(key, c);
    }
    if (newest.size === 0) return;
    const rows = [...newest.values()];
    const column = <K extends keyof MarketingPreferenceChange>(k: K) => rows.map((r) => r[k]);
    await connectionOf(tx).query(record([column('wabaId'), column('user'), column('value'), column('source'), column('detail'), column('at')]));
  }

  /** The user's latest preference (`stop`, `resume`), or null when none is known. */
  async valueOf(businessAccountId: string, user: string): Promise<MarketingPreferenceValue | null> {
    const { rows } = await this.prisma.pool.query<{ value: MarketingPreferenceValue }>(valueOf([businessAccountId, user]));
    return rows[0]?.value ?? null;
  }

  /** Which of these users (phone digits or BSUIDs) stopped marketing messages: a campaign chunk's one read, in its transaction. */
  async stoppedAmong(tx: Tx, businessAccountId: string, users: string[]): Promise<Set<string>> {
    if (users.length === 0) return new Set();
    const { rows } = await connectionOf(tx).query<{ user: string }>(stoppedAmong([businessAccountId, users]));
    return new Set(rows.map((r) => r.user));
  }

  /** The account's preferences, newest first; `value` filters. */
  async page(businessAccountId: string, filter: { value?: string; user?: string }, page: { page: number; limit: number }): Promise<{ rows: StoredMarketingPreference[]; total: number }> {
    const where = { businessAccountId, value: filter.value, user: filter.user };
    const select = { user: true, value: true, source: true, detail: true, updatedAt: true };
    const db = clientOf(this.prisma).marketingPreference;
    const [rows, total] = await Promise.all([db.findMany({ where, select, orderBy: [{ updatedAt: 'desc' }, { user: 'asc' }], ...skipTake(page) }), db.count({ where })]);
    return { rows, total };
  }
}
