import { Injectable } from '@nestjs/common';
import type { PhoneNumber } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { connectionOf, planned, statement, type Tx } from '../../core/prisma/sql.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';
import { skipTake } from '../../core/http/pagination.js';

/** A number as the upstream platform lists it, in our column names. */
export type SyncedPhoneNumber = Pick<
  PhoneNumber,
  'phoneNumberId' | 'displayPhoneNumber' | 'verifiedName' | 'qualityRating' | 'status' | 'codeVerificationStatus' | 'nameStatus' | 'platformType' | 'throughputLevel'
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

const sendState = statement(
  'phone_number_send_state',
  `SELECT status, removed_at AS "removedAt", throughput_level AS "throughputLevel" FROM phone_numbers WHERE business_account_id = $1::uuid AND phone_number_id = $2`,
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
 * An update of numbers found by display number (digits) within a business account (wabaId), from a JSON array of
 * records (`columns`: their own fields). Locks the numbers first, in id order (a CTE with ORDER BY … FOR UPDATE),
 * so two chunks touching the same numbers never wait on each other in a cycle; an update older than the last one
 * applied (`guard`, set to the record's `at`) changes nothing.
 */
function updateByDisplayNumber(columns: string, guard: string, set: string) {
  return planned(
    `WITH v AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS v("wabaId" text, "displayDigits" text, ${columns}, at timestamptz)
     ), locked AS (
       SELECT p.id, v.* FROM phone_numbers p JOIN business_accounts b ON b.id = p.business_account_id
         JOIN v ON v."wabaId" = b.waba_id AND regexp_replace(p.display_phone_number, '[^0-9]', '', 'g') = v."displayDigits"
        WHERE p.${guard} IS NULL OR p.${guard} <= v.at
        ORDER BY p.id FOR UPDATE OF p
     )
     UPDATE phone_numbers p SET ${set}, ${guard} = l.at FROM locked l WHERE p.id = l.id`,
  );
}

const applyQuality = updateByDisplayNumber(
  `"messagingLimit" text, flag text, "qualityRating" text, "throughputLevel" text`,
  'quality_updated_at',
  `messaging_limit = coalesce(l."messagingLimit", p.messaging_limit),
   status = CASE l.flag WHEN 'FLAGGED' THEN 'FLAGGED'
                        WHEN 'UNFLAGGED' THEN CASE WHEN p.status = 'FLAGGED' THEN 'CONNECTED' ELSE p.status END
                        ELSE p.status END,
   quality_rating = coalesce(l."qualityRating", p.quality_rating),
   throughput_level = coalesce(l."throughputLevel", p.throughput_level)`,
);

const applyNames = updateByDisplayNumber(
  `"nameStatus" text, "verifiedName" text`,
  'name_updated_at',
  `name_status = l."nameStatus", verified_name = coalesce(l."verifiedName", p.verified_name)`,
);

/** Owns `phone_numbers`. Every statement is scoped to one business account, its first argument. */
@Injectable()
export class PhoneNumbersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** One page of the account's numbers, current ones first, then removed ones; by display number. And how many there are. */
  async page(businessAccountId: string, query: { page: number; limit: number }): Promise<{ rows: PhoneNumber[]; total: number }> {
    const db = clientOf(this.prisma);
    const [rows, total] = await Promise.all([
      db.phoneNumber.findMany({
        where: { businessAccountId },
        orderBy: [{ removedAt: { sort: 'desc', nulls: 'first' } }, { displayPhoneNumber: 'asc' }, { id: 'asc' }],
        ...skipTake(query),
      }),
      db.phoneNumber.count({ where: { businessAccountId } }),
    ]);
    return { rows, total };
  }

  /**
   * Makes the stored numbers what the upstream listed: listed ones upserted (and no longer removed), the
   * others marked removed (kept: messages refer to them). Run it inside a unit of work: all or nothing.
   */
  async replaceAll(businessAccountId: string, numbers: SyncedPhoneNumber[], syncedAt: Date): Promise<SyncCounts> {
    const db = clientOf(this.prisma);
    const existing = await db.phoneNumber.findMany({ where: { businessAccountId }, select: { id: true, phoneNumberId: true, removedAt: true } });
    const known = new Map(existing.map((p) => [p.phoneNumberId, p.id]));
    let added = 0;
    for (const number of numbers) {
      const id = known.get(number.phoneNumberId);
      const data = { ...number, removedAt: null, syncedAt };
      if (id) await db.phoneNumber.update({ where: { id }, data });
      else await db.phoneNumber.create({ data: { ...data, businessAccountId } });
      if (!id) added++;
    }
    const seen = new Set(numbers.map((n) => n.phoneNumberId));
    const gone = existing.filter((p) => !seen.has(p.phoneNumberId) && !p.removedAt).map((p) => p.id);
    if (gone.length) await db.phoneNumber.updateMany({ where: { businessAccountId, id: { in: gone } }, data: { removedAt: syncedAt } });
    return { added, updated: numbers.length - added, removed: gone.length };
  }

  /** The send path's read (SQL on the pool: it runs on every cache miss of a send); null when never synced. */
  async sendState(businessAccountId: string, phoneNumberId: string): Promise<NumberSendState | null> {
    const { rows } = await this.prisma.pool.query<NumberSendState>(sendState([businessAccountId, phoneNumberId]));
    return rows[0] ?? null;
  }

  /**
   * The worker's phone_number_quality_update webhooks, in its transaction, one statement per chunk (at most one
   * update per number: the caller folds a chunk's updates of a number in time order). Scoped by wabaId.
   */
  async applyQualityUpdates(tx: Tx, updates: NumberQualityUpdate[]): Promise<void> {
    if (updates.length > 0) await connectionOf(tx).query(applyQuality([JSON.stringify(updates)]));
  }

  /** The worker's phone_number_name_update webhooks (at most one per number: the newest of the chunk). */
  async applyNameDecisions(tx: Tx, decisions: NumberNameDecision[]): Promise<void> {
    if (decisions.length > 0) await connectionOf(tx).query(applyNames([JSON.stringify(decisions)]));
  }
}
