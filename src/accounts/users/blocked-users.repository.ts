import { Injectable } from '@nestjs/common';
import { skipTake } from '../../core/http/pagination.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { connectionOf, statement, type Tx } from '../../core/prisma/sql.js';
import { clientOf } from '../../core/prisma/unit-of-work.js';

export interface StoredBlockedUser {
  phoneNumberId: string;
  user: string;
  waId: string | null;
  blockedById: string | null;
  createdAt: Date;
}

const isBlocked = statement(
  'blocked_user_exists',
  `SELECT EXISTS (SELECT 1 FROM blocked_users WHERE business_account_id = $1::uuid AND phone_number_id = $2 AND ("user" = $3 OR wa_id = $3)) AS blocked`,
);

const blockedAmong = statement(
  'blocked_users_among',
  `SELECT "user", wa_id AS "waId" FROM blocked_users WHERE business_account_id = $1::uuid AND phone_number_id = $2 AND ("user" = ANY($3::text[]) OR wa_id = ANY($3::text[]))`,
);

/**
 * The one owner of `blocked_users`: the users blocked on each phone number (Meta's block_users), as blocked through
 * the console. Read by the send path (a send to a blocked user is refused before Meta) and the console.
 */
@Injectable()
export class BlockedUsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Whether `user` (phone digits or BSUID, as given or as Meta resolved it) is blocked on this number. */
  async isBlocked(businessAccountId: string, phoneNumberId: string, user: string): Promise<boolean> {
    const { rows } = await this.prisma.pool.query<{ blocked: boolean }>(isBlocked([businessAccountId, phoneNumberId, user]));
    return rows[0]?.blocked ?? false;
  }

  /** Which of these users are blocked on the number (as given or as Meta resolved them): a campaign chunk's one read, in its transaction. */
  async blockedAmong(tx: Tx, businessAccountId: string, phoneNumberId: string, users: string[]): Promise<Set<string>> {
    if (users.length === 0) return new Set();
    const { rows } = await connectionOf(tx).query<{ user: string; waId: string | null }>(blockedAmong([businessAccountId, phoneNumberId, users]));
    return new Set(rows.flatMap((r) => (r.waId ? [r.user, r.waId] : [r.user])));
  }

  /** Records blocks Meta confirmed (a block again keeps the first time). In the caller's unit of work. */
  async add(businessAccountId: string, phoneNumberId: string, users: { user: string; waId: string | null }[], blockedById: string | null): Promise<void> {
    if (users.length === 0) return;
    await clientOf(this.prisma).blockedUser.createMany({
      data: users.map((u) => ({ businessAccountId, phoneNumberId, user: u.user, waId: u.waId, blockedById })),
      skipDuplicates: true,
    });
  }

  /** Forgets a block (by the user as given or as Meta resolved it); how many rows it removed. */
  async remove(businessAccountId: string, phoneNumberId: string, user: string): Promise<number> {
    const { count } = await clientOf(this.prisma).blockedUser.deleteMany({ where: { businessAccountId, phoneNumberId, OR: [{ user }, { waId: user }] } });
    return count;
  }

  /** The number's blocked users, newest first. */
  async page(businessAccountId: string, phoneNumberId: string, page: { page: number; limit: number }): Promise<{ rows: StoredBlockedUser[]; total: number }> {
    const where = { businessAccountId, phoneNumberId };
    const select = { phoneNumberId: true, user: true, waId: true, blockedById: true, createdAt: true };
    const db = clientOf(this.prisma).blockedUser;
    const [rows, total] = await Promise.all([db.findMany({ where, select, orderBy: [{ createdAt: 'desc' }, { user: 'asc' }], ...skipTake(page) }), db.count({ where })]);
    return { rows, total };
  }
}
