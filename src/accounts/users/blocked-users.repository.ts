import { Injectable } from '@nestjs/common';
import { Db, type Tx } from '../../core/db/db.js';
import { prepared } from '../../core/db/statement.js';
import { skipTake } from '../../core/rows/page.js';
import { unnest } from '../../core/db/pg.js';
import { changeColumns, distinctChanges, type UserIdChange } from './user-id-change.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

export interface StoredBlockedUser {
  phoneNumberId: string;
  user: string;
  waId: string | null;
  blockedById: string | null;
  createdAt: Date;
}

/** The send path's check (every send to a user not cached): a named prepared statement. */
const isBlocked = prepared(
  'blocked_user_exists',
  (db, p: { businessAccountId: string; phoneNumberId: string; user: string }) =>
    db.selectNoFrom((eb) =>
      eb
        .exists(
          eb
            .selectFrom('blocked_users')
            .select(eb.lit(1).as('one'))
            .where('business_account_id', '=', p.businessAccountId)
            .where('phone_number_id', '=', p.phoneNumberId)
            .where((w) => w.or([w('user', '=', p.user), w('wa_id', '=', p.user)])),
        )
        .$castTo<boolean>()
        .as('blocked'),
    ),
);

const blockedAmong = prepared(
  'blocked_users_among',
  (db, p: { businessAccountId: string; phoneNumberId: string; users: string[] }) =>
    db
      .selectFrom('blocked_users')
      .select(['user', 'wa_id as waId'])
      .where('business_account_id', '=', p.businessAccountId)
      .where('phone_number_id', '=', p.phoneNumberId)
      .where((eb) =>
        eb.or([eb('user', '=', eb.fn.any(eb.val(p.users))), eb('wa_id', '=', eb.fn.any(eb.val(p.users)))]),
      ),
);

/** A block of a previous address (as given or as Meta resolved it), on any number of the account, also blocks the next. */
const followUsers = prepared('blocked_users_follow_users', (db, p: { waba: string[]; old: string[]; nu: string[] }) =>
  db
    .insertInto('blocked_users')
    .columns(['business_account_id', 'phone_number_id', 'user', 'wa_id', 'blocked_by_id', 'created_at'])
    .expression(
      db
        .selectFrom(unnest('u', { waba: 'text', old: 'text', nu: 'text' }, p))
        .innerJoin('business_accounts as b', 'b.waba_id', 'u.waba')
        .innerJoin('blocked_users as k', (j) =>
          j
            .onRef('k.business_account_id', '=', 'b.id')
            .on((eb) => eb.or([eb('k.user', '=', eb.ref('u.old')), eb('k.wa_id', '=', eb.ref('u.old'))])),
        )
        .distinctOn(['b.id', 'k.phone_number_id', 'u.nu'])
        .select((eb) => [
          'b.id',
          'k.phone_number_id',
          'u.nu',
          eb.val<string | null>(null).as('wa_id'),
          'k.blocked_by_id',
          'k.created_at',
        ])
        .$narrowType<{ nu: string }>()
        .orderBy('b.id')
        .orderBy('k.phone_number_id')
        .orderBy('u.nu')
        .orderBy('k.created_at'),
    )
    .onConflict((oc) => oc.doNothing()),
);

/**
 * The one owner of `blocked_users`: the users blocked on each phone number (Meta's block_users), as blocked through
 * the console. Read by the send path (a send to a blocked user is refused before Meta) and the console.
 */
@Injectable()
export class BlockedUsersRepository {
  constructor(private readonly db: Db) {}

  /** Whether `user` (phone digits or BSUID, as given or as Meta resolved it) is blocked on this number. */
  async isBlocked(businessAccountId: string, phoneNumberId: string, user: string): Promise<boolean> {
    const { rows } = await this.db.exec(isBlocked, { businessAccountId, phoneNumberId, user });
    return rows[0]?.blocked ?? false;
  }

  /** Which of these users are blocked on the number (as given or as Meta resolved them): a campaign chunk's one read, in its transaction. */
  async blockedAmong(tx: Tx, businessAccountId: string, phoneNumberId: string, users: string[]): Promise<Set<string>> {
    if (users.length === 0) return new Set();
    const { rows } = await this.db.exec(blockedAmong, { businessAccountId, phoneNumberId, users }, tx);
    return new Set(rows.flatMap((r) => (r.waId ? [r.user, r.waId] : [r.user])));
  }

  /** Each previous address's blocks follow the user to its next one (Meta's user id and number changes). */
  async followUsers(tx: Tx, changes: UserIdChange[]): Promise<void> {
    const distinct = distinctChanges(changes);
    if (distinct.length > 0) await this.db.exec(followUsers, changeColumns(distinct), tx);
  }

  /** Records blocks Meta confirmed (a block again keeps the first time). In the caller's unit of work. */
  @GenerateSql({ params: [Sample.UUID, Sample.PHONE, [{ user: Sample.PHONE, waId: Sample.PHONE }], Sample.UUID2] })
  async add(
    businessAccountId: string,
    phoneNumberId: string,
    users: { user: string; waId: string | null }[],
    blockedById: string | null,
  ): Promise<void> {
    if (users.length === 0) return;
    await this.db
      .on()
      .insertInto('blocked_users')
      .values(
        users.map((u) => ({
          business_account_id: businessAccountId,
          phone_number_id: phoneNumberId,
          user: u.user,
          wa_id: u.waId,
          blocked_by_id: blockedById,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** Forgets a block (by the user as given or as Meta resolved it); how many rows it removed. */
  @GenerateSql({ params: [Sample.UUID, Sample.PHONE, Sample.PHONE] })
  async remove(businessAccountId: string, phoneNumberId: string, user: string): Promise<number> {
    const { numDeletedRows } = await this.db
      .on()
      .deleteFrom('blocked_users')
      .where('business_account_id', '=', businessAccountId)
      .where('phone_number_id', '=', phoneNumberId)
      .where((eb) => eb.or([eb('user', '=', user), eb('wa_id', '=', user)]))
      .executeTakeFirstOrThrow();
    return Number(numDeletedRows);
  }

  /** The contact's blocks on the account's numbers (as given, or as Meta resolved it). */
  @GenerateSql({ params: [Sample.UUID, [Sample.PHONE]] })
  async ofContact(businessAccountId: string, addresses: string[]): Promise<StoredBlockedUser[]> {
    return this.db
      .on()
      .selectFrom('blocked_users')
      .select([
        'phone_number_id as phoneNumberId',
        'user',
        'wa_id as waId',
        'blocked_by_id as blockedById',
        'created_at as createdAt',
      ])
      .where('business_account_id', '=', businessAccountId)
      .where((eb) =>
        eb.or([eb('user', '=', eb.fn.any(eb.val(addresses))), eb('wa_id', '=', eb.fn.any(eb.val(addresses)))]),
      )
      .orderBy('created_at')
      .execute();
  }

  /** Deletes the contact's blocks here (Meta's block list is not changed); returns how many. */
  @GenerateSql({ params: [Sample.TX, Sample.UUID, [Sample.PHONE]] })
  async eraseContact(tx: Tx, businessAccountId: string, addresses: string[]): Promise<number> {
    const { numDeletedRows } = await this.db
      .on(tx)
      .deleteFrom('blocked_users')
      .where('business_account_id', '=', businessAccountId)
      .where((eb) =>
        eb.or([eb('user', '=', eb.fn.any(eb.val(addresses))), eb('wa_id', '=', eb.fn.any(eb.val(addresses)))]),
      )
      .executeTakeFirstOrThrow();
    return Number(numDeletedRows);
  }

  /** The number's blocked users, newest first. */
  @GenerateSql({ params: [Sample.UUID, Sample.PHONE, Sample.PAGE] })
  async page(
    businessAccountId: string,
    phoneNumberId: string,
    page: { page: number; limit: number },
  ): Promise<{ rows: StoredBlockedUser[]; total: number }> {
    const blocked = this.db
      .on()
      .selectFrom('blocked_users')
      .where('business_account_id', '=', businessAccountId)
      .where('phone_number_id', '=', phoneNumberId);
    const { skip, take } = skipTake(page);
    const [rows, counted] = await Promise.all([
      blocked
        .select([
          'phone_number_id as phoneNumberId',
          'user',
          'wa_id as waId',
          'blocked_by_id as blockedById',
          'created_at as createdAt',
        ])
        .orderBy('created_at', 'desc')
        .orderBy('user')
        .limit(take)
        .offset(skip)
        .execute(),
      blocked.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: counted.n };
  }
}
