import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Expression, ExpressionBuilder } from 'kysely';
import { columns } from '../../core/db/database.js';
import { Db, type Tx } from '../../core/db/db.js';
import { jsonRecords } from '../../core/db/pg.js';
import type { Row } from '../../core/db/rows.js';
import { prepared } from '../../core/db/statement.js';
import { skipTake } from '../../core/rows/page.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

export type PhoneNumber = Row<'phone_numbers'>;

/** A number as the upstream platform lists it, in our column names. */
export type SyncedPhoneNumber = Pick<
  PhoneNumber,
  | 'phoneNumberId'
  | 'displayPhoneNumber'
  | 'verifiedName'
  | 'qualityRating'
  | 'status'
  | 'codeVerificationStatus'
  | 'nameStatus'
  | 'platformType'
  | 'throughputLevel'
>;

export interface SyncCounts {
  added: number;
  updated: number;
  removed: number;
}

/** What a send needs to know of its number: whether it is synced (and not removed) and Meta's status. */
export interface NumberSendState {
  status: string | null;
  removedAt: Date | null;
  /** Meta's throughput.level (STANDARD, HIGH, …): the number's pace (messages/pacing). */
  throughputLevel: string | null;
}

const sendState = prepared('phone_number_send_state', (db, p: { businessAccountId: string; phoneNumberId: string }) =>
  db
    .selectFrom('phone_numbers')
    .select(['status', 'removed_at as removedAt', 'throughput_level as throughputLevel'])
    .where('business_account_id', '=', p.businessAccountId)
    .where('phone_number_id', '=', p.phoneNumberId),
);

/**
 * What Meta said of a number's quality and limit (phone_number_quality_update), folded per number: webhooks
 * name the number by its display number (digits) within the business account (wabaId), not by its id.
 */
export interface NumberQualityUpdate {
  wabaId: string;
  displayDigits: string;
  /** max_daily_conversations_per_business, else current_limit; null leaves the stored limit. */
  messagingLimit: string | null;
  /** FLAGGED sets the number's status to FLAGGED; UNFLAGGED returns a FLAGGED number to CONNECTED; null leaves it. */
  flag: 'FLAGGED' | 'UNFLAGGED' | null;
  /** null leaves the stored rating. */
  qualityRating: string | null;
  /** HIGH after a THROUGHPUT_UPGRADE event; null leaves the stored level (a sync refreshes it too). */
  throughputLevel: string | null;
  at: Date;
}

/** Meta's display-name decision (phone_number_name_update). */
export interface NumberNameDecision {
  wabaId: string;
  displayDigits: string;
  /** Meta's name_status value after the decision (APPROVED, DECLINED, PENDING_REVIEW, …). */
  nameStatus: string;
  /** The approved name, when Meta approved one. */
  verifiedName: string | null;
  at: Date;
}

/**
 * Webhook updates find the number `p` a record `v` names by its business account's wabaId and the digits of its display
 * number, and lock the numbers first, in id order (a CTE with ORDER BY … FOR UPDATE), so two chunks touching the same
 * numbers never wait on each other in a cycle; an update older than the last one applied (its time guard column)
 * changes nothing.
 */
const DIGITS = { pattern: '[^0-9]', flags: 'g' };

/** A stored display number's digits only (as `displayDigits` of a webhook's decision), for matching the two. */
const digitsOf = <DB, TB extends keyof DB>(eb: ExpressionBuilder<DB, TB>, displayNumber: Expression<string>) =>
  eb.fn<string>('regexp_replace', [displayNumber, eb.val(DIGITS.pattern), eb.val(''), eb.val(DIGITS.flags)]);

const applyQuality = prepared(
  'phone_numbers_apply_quality',
  (db, p: { updates: string }) =>
    db
      .with('locked', (w) =>
        w
          .selectFrom([
            jsonRecords(
              'v',
              {
                wabaId: 'text',
                displayDigits: 'text',
                messagingLimit: 'text',
                flag: 'text',
                qualityRating: 'text',
                throughputLevel: 'text',
                at: 'timestamptz',
              },
              p.updates,
            ),
            'phone_numbers as p',
          ])
          .innerJoin('business_accounts as b', 'b.id', 'p.business_account_id')
          .whereRef('b.waba_id', '=', 'v.wabaId')
          .where((eb) => eb(digitsOf(eb, eb.ref('p.display_phone_number')), '=', eb.ref('v.displayDigits')))
          .where((eb) =>
            eb.or([eb('p.quality_updated_at', 'is', null), eb('p.quality_updated_at', '<=', eb.ref('v.at'))]),
          )
          .select(['p.id', 'v.messagingLimit', 'v.flag', 'v.qualityRating', 'v.throughputLevel', 'v.at'])
          .orderBy('p.id')
          .forUpdate('p'),
      )
      .updateTable('phone_numbers as p')
      .from('locked as l')
      .set((eb) => ({
        messaging_limit: eb.fn.coalesce('l.messagingLimit', 'p.messaging_limit'),
        status: eb
          .case('l.flag')
          .when('FLAGGED')
          .then('FLAGGED')
          .when('UNFLAGGED')
          .then(eb.case().when('p.status', '=', 'FLAGGED').then('CONNECTED').else(eb.ref('p.status')).end())
          .else(eb.ref('p.status'))
          .end(),
        quality_rating: eb.fn.coalesce('l.qualityRating', 'p.quality_rating'),
        throughput_level: eb.fn.coalesce('l.throughputLevel', 'p.throughput_level'),
        quality_updated_at: eb.ref('l.at'),
      }))
      .whereRef('p.id', '=', 'l.id'),
  { planned: true },
);

const applyNames = prepared(
  'phone_numbers_apply_names',
  (db, p: { decisions: string }) =>
    db
      .with('locked', (w) =>
        w
          .selectFrom([
            jsonRecords(
              'v',
              { wabaId: 'text', displayDigits: 'text', nameStatus: 'text', verifiedName: 'text', at: 'timestamptz' },
              p.decisions,
            ),
            'phone_numbers as p',
          ])
          .innerJoin('business_accounts as b', 'b.id', 'p.business_account_id')
          .whereRef('b.waba_id', '=', 'v.wabaId')
          .where((eb) => eb(digitsOf(eb, eb.ref('p.display_phone_number')), '=', eb.ref('v.displayDigits')))
          .where((eb) => eb.or([eb('p.name_updated_at', 'is', null), eb('p.name_updated_at', '<=', eb.ref('v.at'))]))
          .select(['p.id', 'v.nameStatus', 'v.verifiedName', 'v.at'])
          .orderBy('p.id')
          .forUpdate('p'),
      )
      .updateTable('phone_numbers as p')
      .from('locked as l')
      .set((eb) => ({
        name_status: eb.ref('l.nameStatus'),
        verified_name: eb.fn.coalesce('l.verifiedName', 'p.verified_name'),
        name_updated_at: eb.ref('l.at'),
      }))
      .whereRef('p.id', '=', 'l.id'),
  { planned: true },
);

/** Owns `phone_numbers`. Every statement is scoped to one business account, its first argument. */
@Injectable()
export class PhoneNumbersRepository {
  constructor(private readonly db: Db) {}

  /** One page of the account's numbers, current ones first, then removed ones; by display number. And how many there are. */
  @GenerateSql({ params: [Sample.UUID, Sample.PAGE] })
  async page(
    businessAccountId: string,
    query: { page: number; limit: number },
  ): Promise<{ rows: PhoneNumber[]; total: number }> {
    const numbers = this.db.on().selectFrom('phone_numbers').where('business_account_id', '=', businessAccountId);
    const { skip, take } = skipTake(query);
    const [rows, counted] = await Promise.all([
      numbers
        .select(columns.phone_numbers)
        .orderBy('removed_at', (o) => o.desc().nullsFirst())
        .orderBy('display_phone_number')
        .orderBy('id')
        .limit(take)
        .offset(skip)
        .execute(),
      numbers.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: counted.n };
  }

  /**
   * Makes the stored numbers what the upstream listed: listed ones upserted (and no longer removed), the
   * others marked removed (kept: messages refer to them). Run it inside a unit of work: all or nothing.
   */
  @GenerateSql(
    { name: 'none listed', params: [Sample.UUID, [], Sample.DATE] },
    {
      name: 'one listed, one gone',
      rows: [{ id: Sample.UUID2, phone_number_id: '15550000002', removed_at: null }],
      params: [
        Sample.UUID,
        [
          {
            phoneNumberId: Sample.PHONE,
            displayPhoneNumber: Sample.PHONE,
            verifiedName: Sample.STRING,
            qualityRating: 'GREEN',
            status: 'CONNECTED',
            codeVerificationStatus: 'VERIFIED',
            nameStatus: 'APPROVED',
            platformType: 'CLOUD_API',
            throughputLevel: 'STANDARD',
          },
        ],
        Sample.DATE,
      ],
    },
  )
  async replaceAll(businessAccountId: string, numbers: SyncedPhoneNumber[], syncedAt: Date): Promise<SyncCounts> {
    const db = this.db.on();
    const existing = await db
      .selectFrom('phone_numbers')
      .select(['id', 'phone_number_id', 'removed_at'])
      .where('business_account_id', '=', businessAccountId)
      .execute();
    const known = new Set(existing.map((p) => p.phone_number_id));
    if (numbers.length > 0) {
      await db
        .insertInto('phone_numbers')
        .values(
          // One row per number (a statement may not change a row twice): the last listed wins, as it would one by one.
          [...new Map(numbers.map((n) => [n.phoneNumberId, n])).values()].map((n) => ({
            id: randomUUID(),
            business_account_id: businessAccountId,
            phone_number_id: n.phoneNumberId,
            display_phone_number: n.displayPhoneNumber,
            verified_name: n.verifiedName,
            quality_rating: n.qualityRating,
            status: n.status,
            code_verification_status: n.codeVerificationStatus,
            name_status: n.nameStatus,
            platform_type: n.platformType,
            throughput_level: n.throughputLevel,
            removed_at: null,
            synced_at: syncedAt,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['business_account_id', 'phone_number_id']).doUpdateSet((eb) => ({
            display_phone_number: eb.ref('excluded.display_phone_number'),
            verified_name: eb.ref('excluded.verified_name'),
            quality_rating: eb.ref('excluded.quality_rating'),
            status: eb.ref('excluded.status'),
            code_verification_status: eb.ref('excluded.code_verification_status'),
            name_status: eb.ref('excluded.name_status'),
            platform_type: eb.ref('excluded.platform_type'),
            throughput_level: eb.ref('excluded.throughput_level'),
            removed_at: null,
            synced_at: eb.ref('excluded.synced_at'),
          })),
        )
        .execute();
    }
    const seen = new Set(numbers.map((n) => n.phoneNumberId));
    const gone = existing.filter((p) => !seen.has(p.phone_number_id) && !p.removed_at).map((p) => p.id);
    if (gone.length)
      await db
        .updateTable('phone_numbers')
        .set({ removed_at: syncedAt })
        .where('business_account_id', '=', businessAccountId)
        .where('id', 'in', gone)
        .execute();
    const added = numbers.filter((n) => !known.has(n.phoneNumberId)).length;
    return { added, updated: numbers.length - added, removed: gone.length };
  }

  /** The send path's read (a named prepared statement: it runs on every cache miss of a send); null when never synced. */
  async sendState(businessAccountId: string, phoneNumberId: string): Promise<NumberSendState | null> {
    const { rows } = await this.db.exec(sendState, { businessAccountId, phoneNumberId });
    return rows[0] ?? null;
  }

  /**
   * The worker's phone_number_quality_update webhooks, in its transaction, one statement per chunk (at most one
   * update per number: the caller folds a chunk's updates of a number in time order). Scoped by wabaId.
   */
  async applyQualityUpdates(tx: Tx, updates: NumberQualityUpdate[]): Promise<void> {
    if (updates.length > 0) await this.db.exec(applyQuality, { updates: JSON.stringify(updates) }, tx);
  }

  /** The worker's phone_number_name_update webhooks (at most one per number: the newest of the chunk). */
  async applyNameDecisions(tx: Tx, decisions: NumberNameDecision[]): Promise<void> {
    if (decisions.length > 0) await this.db.exec(applyNames, { decisions: JSON.stringify(decisions) }, tx);
  }
}
