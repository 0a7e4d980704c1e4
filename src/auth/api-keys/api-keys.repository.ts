import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Db } from '../../core/db/db.js';
import { lockForTransaction } from '../../core/db/advisory-lock.js';
import { columnsOf, type Row } from '../../core/db/rows.js';
import { prepared } from '../../core/db/statement.js';
import { skipTake } from '../../core/rows/page.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

export type ApiKey = Row<'api_keys'>;

/** A key with the wabaId of its business account, as the console shows it. */
export type ApiKeyRow = ApiKey & { businessAccount: { wabaId: string } };

/** What authenticating a key needs: the key and the state of its business account. */
export type ApiKeyWithAccount = ApiKey & {
  businessAccount: {
    id: string;
    wabaId: string;
    disconnectedAt: Date | null;
    accessTokenEncrypted: string;
    heldSince: Date | null;
    readableUntil: Date | null;
  };
};

/** Every request of a key pair not in the authenticator's cache reads it: a named prepared statement. */
const forAuthentication = prepared('api_key_for_authentication', (db, p: { accessKey: string }) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('business_accounts as b', 'b.id', 'k.business_account_id')
    .select(columnsOf('api_keys', 'k'))
    .select([
      'b.waba_id as wabaId',
      'b.disconnected_at as accountDisconnectedAt',
      'b.access_token_encrypted as accountAccessTokenEncrypted',
      'b.held_since as accountHeldSince',
      'b.readable_until as accountReadableUntil',
    ])
    .where('k.access_key', '=', p.accessKey),
);

/**
 * Owns `api_keys`. Reads join the key's business account for its wabaId (and, for authentication, its state):
 * one statement on the hot key lookup instead of two.
 */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  /** Authentication: the key behind an access key, whatever its organization (the caller has no scope yet). */
  async findForAuthentication(accessKey: string): Promise<ApiKeyWithAccount | null> {
    const { rows } = await this.db.exec(forAuthentication, { accessKey });
    const row = rows[0];
    if (!row) return null;
    const {
      wabaId,
      accountDisconnectedAt,
      accountAccessTokenEncrypted,
      accountHeldSince,
      accountReadableUntil,
      ...key
    } = row;
    return {
      ...key,
      businessAccount: {
        id: key.businessAccountId,
        wabaId,
        disconnectedAt: accountDisconnectedAt,
        accessTokenEncrypted: accountAccessTokenEncrypted,
        heldSince: accountHeldSince,
        readableUntil: accountReadableUntil,
      },
    };
  }

  /** Moves lastUsedAt forward only (batched writes may arrive out of order). */
  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async touchLastUsed(id: string, at: Date): Promise<void> {
    await this.db
      .on()
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .execute();
  }

  /**
   * Active (not revoked) key pairs of a business account, counted under a transaction-scoped lock of the
   * account's keys, so concurrent creations cannot both see room for one more (call inside a unit of work).
   */
  @GenerateSql({ params: [Sample.UUID] })
  async countActiveLocked(businessAccountId: string): Promise<number> {
    const db = this.db.on();
    await lockForTransaction(db, `api_keys:${businessAccountId}`);
    const { n } = await db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('business_account_id', '=', businessAccountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return n;
  }

  @GenerateSql({
    params: [
      Sample.UUID,
      {
        businessAccountId: Sample.UUID2,
        name: Sample.STRING,
        accessKey: Sample.STRING,
        secretHash: Sample.STRING,
        createdById: Sample.UUID,
      },
    ],
  })
  async create(
    organizationId: string,
    key: { businessAccountId: string; name: string; accessKey: string; secretHash: string; createdById: string | null },
  ): Promise<ApiKeyRow> {
    const { id } = await this.db
      .on()
      .insertInto('api_keys')
      .values({
        id: randomUUID(),
        organization_id: organizationId,
        business_account_id: key.businessAccountId,
        name: key.name,
        access_key: key.accessKey,
        secret_hash: key.secretHash,
        created_by_id: key.createdById,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return this.getOwned(organizationId, id);
  }

  /** Newest first, optionally only one business account's. */
  @GenerateSql(
    { name: 'every account', params: [Sample.UUID, Sample.PAGE] },
    { name: 'one account', params: [Sample.UUID, { ...Sample.PAGE, wabaId: Sample.WABA_ID }] },
  )
  async page(
    organizationId: string,
    query: { page: number; limit: number; wabaId?: string },
  ): Promise<{ rows: ApiKeyRow[]; total: number }> {
    let keys = this.joined().where('k.organization_id', '=', organizationId);
    if (query.wabaId) keys = keys.where('b.waba_id', '=', query.wabaId);
    const { skip, take } = skipTake(query);
    const [rows, counted] = await Promise.all([
      keys
        .select(columnsOf('api_keys', 'k'))
        .select('b.waba_id as wabaId')
        .orderBy('k.created_at', 'desc')
        .orderBy('k.id', 'desc')
        .limit(take)
        .offset(skip)
        .execute(),
      keys.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(withWabaId), total: counted.n };
  }

  @GenerateSql({ params: [Sample.UUID, Sample.UUID2] })
  async findOwned(organizationId: string, id: string): Promise<ApiKeyRow | null> {
    const row = await this.selectWithWabaId()
      .where('k.organization_id', '=', organizationId)
      .where('k.id', '=', id)
      .executeTakeFirst();
    return row ? withWabaId(row) : null;
  }

  /** Throws when the organization has no such key (as an update of a missing row does). */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  async revoke(organizationId: string, id: string, at: Date): Promise<ApiKeyRow> {
    await this.db
      .on()
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .returning('id')
      .executeTakeFirstOrThrow();
    return this.getOwned(organizationId, id);
  }

  /** Revokes every live key of a business account; returns their access keys (to drop them from caches). */
  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async revokeAllOf(businessAccountId: string, at: Date): Promise<string[]> {
    const rows = await this.db
      .on()
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('business_account_id', '=', businessAccountId)
      .where('revoked_at', 'is', null)
      .returning('access_key')
      .execute();
    return rows.map((k) => k.access_key);
  }

  /**
   * The organization's active key pairs `createdById` made: revoked at `at` (its removal, audit 3, finding 9), or only
   * listed when `at` is null (removal with keepKeys). Their ids, names and access keys (for the caches).
   */
  @GenerateSql({ params: [Sample.UUID, Sample.UUID2, Sample.DATE] })
  async revokeAllCreatedBy(
    organizationId: string,
    createdById: string,
    at: Date | null,
  ): Promise<{ id: string; name: string; accessKey: string }[]> {
    const db = this.db.on();
    const rows = at
      ? await db
          .updateTable('api_keys')
          .set({ revoked_at: at })
          .where('organization_id', '=', organizationId)
          .where('created_by_id', '=', createdById)
          .where('revoked_at', 'is', null)
          .returning(['id', 'name', 'access_key'])
          .execute()
      : await db
          .selectFrom('api_keys')
          .select(['id', 'name', 'access_key'])
          .where('organization_id', '=', organizationId)
          .where('created_by_id', '=', createdById)
          .where('revoked_at', 'is', null)
          .orderBy('created_at')
          .execute();
    return rows.map((r) => ({ id: r.id, name: r.name, accessKey: r.access_key }));
  }

  private async getOwned(organizationId: string, id: string): Promise<ApiKeyRow> {
    return withWabaId(
      await this.selectWithWabaId()
        .where('k.organization_id', '=', organizationId)
        .where('k.id', '=', id)
        .executeTakeFirstOrThrow(),
    );
  }

  /** Keys (`k`) joined with their business accounts (`b`). */
  private joined() {
    return this.db
      .on()
      .selectFrom('api_keys as k')
      .innerJoin('business_accounts as b', 'b.id', 'k.business_account_id');
  }

  /** Whole keys with their business account's wabaId. */
  private selectWithWabaId() {
    return this.joined().select(columnsOf('api_keys', 'k')).select('b.waba_id as wabaId');
  }
}

function withWabaId<R extends { wabaId: string }>({
  wabaId,
  ...key
}: R): Omit<R, 'wabaId'> & { businessAccount: { wabaId: string } } {
  return { ...key, businessAccount: { wabaId } };
}
