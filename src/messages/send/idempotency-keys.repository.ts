import { Injectable } from '@nestjs/common';
import type { Expression, QueryCreator, SqlBool } from 'kysely';
import { columns, type Database } from '../../core/db/database.js';
import { Db, type Tx } from '../../core/db/db.js';
import { typed } from '../../core/db/pg.js';
import { prepared, type RowOf } from '../../core/db/statement.js';
import { GenerateSql, Sample } from '../../core/db/generate-sql.js';

/** The values of a claim, in the statement that composes it (parameters of that statement). */
export interface ClaimParams {
  apiKeyId: string;
  key: string;
  requestHash: string;
  now: Date;
  lockedUntil: Date;
  expiresAt: Date;
}

/**
 * The claim of a key, as the body of a CTE that returns one row when the claim was taken: when the key is new,
 * when its record expired (24 h), or when an in-flight claim of the same body was abandoned (its lock ran out: a
 * crashed request). MessagesRepository puts it in front of the insert of the pending message, so that a claim
 * and its message commit together and a keyed send costs no round trip more than an unkeyed one.
 */
export const claimKey = (db: QueryCreator<Database>, p: ClaimParams) =>
  db
    .insertInto('idempotency_keys')
    .values({
      api_key_id: typed(p.apiKeyId, 'uuid'),
      key: p.key,
      request_hash: p.requestHash,
      state: 'in_flight',
      locked_until: p.lockedUntil,
      created_at: p.now,
      expires_at: p.expiresAt,
    })
    .onConflict((oc) =>
      oc
        .columns(['api_key_id', 'key'])
        .doUpdateSet((eb) => ({
          request_hash: eb.ref('excluded.request_hash'),
          state: 'in_flight',
          response_body: null,
          locked_until: eb.ref('excluded.locked_until'),
          created_at: eb
            .case()
            .when('idempotency_keys.expires_at', '<=', p.now)
            .then(eb.ref('excluded.created_at'))
            .else(eb.ref('idempotency_keys.created_at'))
            .end(),
          expires_at: eb
            .case()
            .when('idempotency_keys.expires_at', '<=', p.now)
            .then(eb.ref('excluded.expires_at'))
            .else(eb.ref('idempotency_keys.expires_at'))
            .end(),
        }))
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.expires_at', '<=', p.now),
            eb.and([
              eb('idempotency_keys.state', '=', 'in_flight'),
              eb('idempotency_keys.locked_until', '<=', p.now),
              eb('idempotency_keys.request_hash', '=', eb.ref('excluded.request_hash')),
            ]),
          ]),
        ),
    )
    .returning((eb) => eb.lit(1).as('claimed'));

/** The values of a completion, in the statement that composes it. */
export interface CompletionParams {
  apiKeyId: string;
  key: string;
  /** The send's outcome (messages/send/send-outcome.ts) as JSON text. */
  outcome: string;
}

/**
 * The completion of a key with its outcome, as the body of a CTE that runs only when `guard` (a condition of the
 * composing statement) holds: MessagesRepository completes it in the statement that moves the message
 * `pending → sent`, and only if that statement moved it.
 */
export function completeKey(db: QueryCreator<Database>, p: CompletionParams, guard?: Expression<SqlBool>) {
  const update = db
    .updateTable('idempotency_keys')
    .set({ state: 'completed', response_body: p.outcome })
    .where('api_key_id', '=', typed(p.apiKeyId, 'uuid'))
    .where('key', '=', p.key);
  return guard ? update.where(guard) : update;
}

const find = prepared('idempotency_key', (db, p: { apiKeyId: string; key: string }) =>
  db
    .selectFrom('idempotency_keys')
    .select(columns.idempotency_keys)
    .where('api_key_id', '=', p.apiKeyId)
    .where('key', '=', p.key),
);

const complete = prepared('complete_idempotency_key', (db, p: CompletionParams) => completeKey(db, p));

const release = prepared('release_idempotency_key', (db, p: { apiKeyId: string; key: string }) =>
  db
    .deleteFrom('idempotency_keys')
    .where('api_key_id', '=', p.apiKeyId)
    .where('key', '=', p.key)
    .where('state', '=', 'in_flight'),
);

const deleteExpired = prepared('delete_expired_idempotency_keys', (db, p: { now: Date; limit: number }) =>
  db
    .deleteFrom('idempotency_keys')
    .where((eb) =>
      eb(
        eb.refTuple('api_key_id', 'key'),
        'in',
        eb
          .selectFrom('idempotency_keys')
          .select(['api_key_id', 'key'])
          .where('expires_at', '<=', p.now)
          .orderBy('expires_at')
          .limit(p.limit)
          .$asTuple('api_key_id', 'key'),
      ),
    ),
);

/** A key's record as stored. */
export type IdempotencyKey = RowOf<typeof find>;

/**
 * `idempotency_keys`, scoped to the key pair (its id is the first argument). A completed key keeps the send's
 * outcome (JSON, see messages/send/send-outcome.ts) in `response_body`. Every statement that writes this table is in
 * this file: the claim and the completion that ride on a message's own writes are the builders above,
 * composed into MessagesRepository's statements (insertPendingClaimingKey, markSentCompletingKey).
 */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(private readonly db: Db) {}

  async find(apiKeyId: string, key: string): Promise<IdempotencyKey | null> {
    const { rows } = await this.db.exec(find, { apiKeyId, key });
    return rows[0] ?? null;
  }

  async complete(apiKeyId: string, key: string, outcome: unknown): Promise<void> {
    await this.db.exec(complete, { apiKeyId, key, outcome: JSON.stringify(outcome) });
  }

  /** Forget a claim: retryable outcomes are not stored against the key. */
  async release(apiKeyId: string, key: string): Promise<void> {
    await this.db.exec(release, { apiKeyId, key });
  }

  /** Deletes up to `limit` keys whose time is over (`expires_at` before `now`), oldest first; returns how many. */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    const { rowCount } = await this.db.exec(deleteExpired, { now, limit });
    return rowCount;
  }

  /**
   * Deletes the records of the account's key pairs whose kept outcome names one of these addresses (an erased
   * contact's send: a retry with that key then sends again); returns how many.
   */
  @GenerateSql({ params: [Sample.TX, Sample.UUID, [Sample.PHONE]] })
  async eraseContact(tx: Tx, businessAccountId: string, addresses: string[]): Promise<number> {
    const { numDeletedRows } = await this.db
      .on(tx)
      .deleteFrom('idempotency_keys')
      .where('api_key_id', 'in', (eb) =>
        eb.selectFrom('api_keys').select('id').where('business_account_id', '=', businessAccountId),
      )
      .where((eb) =>
        eb.or(addresses.map((a) => eb(eb.fn<number>('strpos', [eb.cast('response_body', 'text'), eb.val(a)]), '>', 0))),
      )
      .executeTakeFirstOrThrow();
    return Number(numDeletedRows);
  }
}
