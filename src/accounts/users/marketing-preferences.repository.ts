import { Injectable } from '@nestjs/common';
import type { OnConflictBuilder } from 'kysely';
import type { Database } from '../../core/db/database.js';
import { Db, type Tx } from '../../core/db/db.js';
import { unnest } from '../../core/db/pg.js';
import { prepared } from '../../core/db/statement.js';
import { skipTake } from '../../core/rows/page.js';
import { changeColumns, distinctChanges, type UserIdChange } from './user-id-change.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

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
 * On a stored (account, user): the incoming preference replaces it when it is newer, or (`same or newer`, what Meta
 * reports) of the same moment too: the later report of one second wins.
 */
const replacedBy = (when: 'newer' | 'same or newer') => (oc: OnConflictBuilder<Database, 'marketing_preferences'>) =>
  oc
    .columns(['business_account_id', 'user'])
    .doUpdateSet((eb) => ({
      value: eb.ref('excluded.value'),
      source: eb.ref('excluded.source'),
      detail: eb.ref('excluded.detail'),
      updated_at: eb.ref('excluded.updated_at'),
    }))
    .whereRef('marketing_preferences.updated_at', when === 'newer' ? '<' : '<=', 'excluded.updated_at');

/**
 * One row per (account, user), in key order (a statement may not touch a row twice; concurrent chunks lock in the
 * same order). The account is found by wabaId; an unknown wabaId stores nothing.
 */
const record = prepared(
  'marketing_preferences_record',
  (db, p: { waba: string[]; usr: string[]; val: string[]; src: string[]; det: (string | null)[]; at: Date[] }) =>
    db
      .insertInto('marketing_preferences')
      .columns(['business_account_id', 'user', 'value', 'source', 'detail', 'updated_at'])
      .expression(
        db
          .selectFrom(
            unnest('u', { waba: 'text', usr: 'text', val: 'text', src: 'text', det: 'text', at: 'timestamptz' }, p),
          )
          .innerJoin('business_accounts as b', 'b.waba_id', 'u.waba')
          .select(['b.id', 'u.usr', 'u.val', 'u.src', 'u.det', 'u.at'])
          .$narrowType<{ usr: string; val: string; src: string; at: Date }>()
          .orderBy('b.id')
          .orderBy('u.usr'),
      )
      .onConflict(replacedBy('same or newer')),
  { planned: true },
);

/** The preference of each previous address is the next one's too, unless the next one has a newer one. */
const followUsers = prepared(
  'marketing_preferences_follow_users',
  (db, p: { waba: string[]; old: string[]; nu: string[] }) =>
    db
      .insertInto('marketing_preferences')
      .columns(['business_account_id', 'user', 'value', 'source', 'detail', 'updated_at'])
      .expression(
        db
          .selectFrom(unnest('u', { waba: 'text', old: 'text', nu: 'text' }, p))
          .innerJoin('business_accounts as b', 'b.waba_id', 'u.waba')
          .innerJoin('marketing_preferences as m', (j) =>
            j.onRef('m.business_account_id', '=', 'b.id').onRef('m.user', '=', 'u.old'),
          )
          .distinctOn(['b.id', 'u.nu'])
          .select(['b.id', 'u.nu', 'm.value', 'm.source', 'm.detail', 'm.updated_at'])
          .$narrowType<{ nu: string }>()
          .orderBy('b.id')
          .orderBy('u.nu')
          .orderBy('m.updated_at', 'desc'),
      )
      .onConflict(replacedBy('newer')),
);

const valueOf = prepared('marketing_preference_of', (db, p: { businessAccountId: string; user: string }) =>
  db
    .selectFrom('marketing_preferences')
    .select('value')
    .where('business_account_id', '=', p.businessAccountId)
    .where('user', '=', p.user),
);

const stoppedAmong = prepared('marketing_stopped_among', (db, p: { businessAccountId: string; users: string[] }) =>
  db
    .selectFrom('marketing_preferences')
    .select('user')
    .where('business_account_id', '=', p.businessAccountId)
    .where((eb) => eb('user', '=', eb.fn.any(eb.val(p.users))))
    .where('value', '=', 'stop'),
);

/**
 * The one owner of `marketing_preferences`: the latest marketing preference (stop or resume) of each user of a
 * business account. Written by the worker (user_preferences webhooks, 131050 failures), read by the send path
 * (a MARKETING template to a user who stopped is refused) and the console.
 */
@Injectable()
export class MarketingPreferencesRepository {
  constructor(private readonly db: Db) {}

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
    await this.db.exec(
      record,
      {
        waba: column('wabaId'),
        usr: column('user'),
        val: column('value'),
        src: column('source'),
        det: column('detail'),
        at: column('at'),
      },
      tx,
    );
  }

  /** Each previous address's preference follows the user to its next one (Meta's user id and number changes). */
  async followUsers(tx: Tx, changes: UserIdChange[]): Promise<void> {
    const distinct = distinctChanges(changes);
    if (distinct.length > 0) await this.db.exec(followUsers, changeColumns(distinct), tx);
  }

  /** The user's latest preference (`stop`, `resume`), or null when none is known. */
  async valueOf(businessAccountId: string, user: string): Promise<MarketingPreferenceValue | null> {
    const { rows } = await this.db.exec(valueOf, { businessAccountId, user });
    return (rows[0]?.value as MarketingPreferenceValue | undefined) ?? null;
  }

  /** Which of these users (phone digits or BSUIDs) stopped marketing messages: a campaign chunk's one read, in its transaction. */
  async stoppedAmong(tx: Tx, businessAccountId: string, users: string[]): Promise<Set<string>> {
    if (users.length === 0) return new Set();
    const { rows } = await this.db.exec(stoppedAmong, { businessAccountId, users }, tx);
    return new Set(rows.map((r) => r.user));
  }

  /** The contact's preferences on the account. */
  @GenerateSql({ params: [Sample.UUID, [Sample.PHONE]] })
  async ofContact(businessAccountId: string, addresses: string[]): Promise<StoredMarketingPreference[]> {
    return this.db
      .on()
      .selectFrom('marketing_preferences')
      .select(['user', 'value', 'source', 'detail', 'updated_at as updatedAt'])
      .where('business_account_id', '=', businessAccountId)
      .where((eb) => eb('user', '=', eb.fn.any(eb.val(addresses))))
      .orderBy('updated_at')
      .execute();
  }

  /** Deletes the contact's preferences on the account; returns how many. */
  @GenerateSql({ params: [Sample.TX, Sample.UUID, [Sample.PHONE]] })
  async eraseContact(tx: Tx, businessAccountId: string, addresses: string[]): Promise<number> {
    const { numDeletedRows } = await this.db
      .on(tx)
      .deleteFrom('marketing_preferences')
      .where('business_account_id', '=', businessAccountId)
      .where((eb) => eb('user', '=', eb.fn.any(eb.val(addresses))))
      .executeTakeFirstOrThrow();
    return Number(numDeletedRows);
  }

  /** The account's preferences, newest first; `value` filters. */
  @GenerateSql(
    { name: 'no filter', params: [Sample.UUID, {}, Sample.PAGE] },
    { name: 'every filter', params: [Sample.UUID, { value: 'stop', user: Sample.PHONE }, Sample.PAGE] },
  )
  async page(
    businessAccountId: string,
    filter: { value?: string; user?: string },
    page: { page: number; limit: number },
  ): Promise<{ rows: StoredMarketingPreference[]; total: number }> {
    let preferences = this.db
      .on()
      .selectFrom('marketing_preferences')
      .where('business_account_id', '=', businessAccountId);
    if (filter.value !== undefined) preferences = preferences.where('value', '=', filter.value);
    if (filter.user !== undefined) preferences = preferences.where('user', '=', filter.user);
    const { skip, take } = skipTake(page);
    const [rows, counted] = await Promise.all([
      preferences
        .select(['user', 'value', 'source', 'detail', 'updated_at as updatedAt'])
        .orderBy('updated_at', 'desc')
        .orderBy('user')
        .limit(take)
        .offset(skip)
        .execute(),
      preferences.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: counted.n };
  }
}
