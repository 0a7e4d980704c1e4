import { Injectable } from '@nestjs/common';
import type { PhoneNumber } from '../../generated/prisma/client.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { statement } from '../../core/prisma/sql.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';

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
}

const sendState = statement(
  'phone_number_send_state',
  `SELECT status, removed_at AS "removedAt" FROM phone_numbers WHERE business_account_id = $1::uuid AND phone_number_id = $2`,
);

/** Owns `phone_numbers`. Every statement is scoped to one business account, its first argument. */
@Injectable()
export class PhoneNumbersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Current numbers first, then removed ones; by display number. */
  list(businessAccountId: string): Promise<PhoneNumber[]> {
    return clientOf(this.prisma).phoneNumber.findMany({
      where: { businessAccountId },
      orderBy: [{ removedAt: { sort: 'desc', nulls: 'first' } }, { displayPhoneNumber: 'asc' }],
    });
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
}
