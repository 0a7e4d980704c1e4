import { Injectable } from '@nestjs/common';
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import { GroupCommit } from '../core/async/group-commit.js';
import { columns, type Database } from '../core/db/database.js';
import { Db, type Tx } from '../core/db/db.js';
import { feedRows, feedStatement } from '../core/db/feed.js';
import { filterOf, when, type Filter } from '../core/db/filter.js';
import { jsonRecords, now, typed, unnest, utcBucket, utcBuckets } from '../core/db/pg.js';
import { prepared, preparedByShape, type RowOf } from '../core/db/statement.js';
import { skipTake } from '../core/rows/page.js';
import type { FeedPosition } from '../events/feed-cursor.js';
import { changeColumns, distinctChanges, type UserIdChange } from '../accounts/users/user-id-change.js';
import { claimKey, completeKey } from './send/idempotency-keys.repository.js';

type Eb = ExpressionBuilder<Database, 'messages'>;

/**
 * The tenant check of the statements that find a message by id for its business account. Written so that no index
 * can serve it: only the primary key may find the row. As a plain `business_account_id = $2`, a prepared statement's
 * generic plan, made while `messages` had no statistics yet (a fresh database, before autovacuum's first ANALYZE),
 * used the (business_account_id, to, created_at) index instead and read every message of the account on each send:
 * measured 13.7 M index tuples read for 4,600 sends in a bench run.
 */
const sameAccount = (eb: Eb, businessAccountId: string): Expression<SqlBool> =>
  eb(eb.parens('business_account_id', '=', typed(businessAccountId, 'uuid')), 'is', true);

/** What the database decides on insert; the rest of a pending row is what was inserted (see pendingRow). */
const INSERTED_COLUMNS = ['id', 'created_at as createdAt', 'updated_at as updatedAt'] as const;

const findOne = prepared('find_message', (db, p: { id: number; businessAccountId: string }) =>
  db
    .selectFrom('messages')
    .select(columns.messages)
    .where((eb) => eb.and([eb('id', '=', p.id), sameAccount(eb, p.businessAccountId)])),
);

/**
 * A stored message as the application sees it: the id a number (what the API answers; exact up to 2^53 - 1): the
 * pool reads int8 as a number.
 */
export type StoredMessage = RowOf<typeof findOne>;

/**
 * Customers' messages, each in the business account that owns the receiving WABA (an event of an account not
 * connected here stores no message). Once per wamid (unique): redeliveries and retried chunks insert nothing.
 */
const insertInbound = prepared(
  'insert_inbound_messages',
  (db, p: { rows: string }) =>
    db
      .insertInto('messages')
      .columns([
        'business_account_id',
        'phone_number_id',
        'direction',
        'from',
        'user_id',
        'handled_by',
        'type',
        'content',
        'status',
        'upstream_message_id',
        'updated_at',
      ])
      .expression(
        db
          .selectFrom(
            jsonRecords(
              'd',
              {
                wabaId: 'text',
                phoneNumberId: 'text',
                from: 'text',
                userId: 'text',
                handledBy: 'text',
                type: 'text',
                content: 'jsonb',
                wamid: 'text',
              },
              p.rows,
            ),
          )
          .innerJoin('business_accounts as b', 'b.waba_id', 'd.wabaId')
          .select((eb) => [
            'b.id',
            'd.phoneNumberId',
            eb.val('inbound').as('direction'),
            'd.from',
            'd.userId',
            'd.handledBy',
            'd.type',
            'd.content',
            eb.val('received').as('status'),
            'd.wamid',
            now().as('updatedAt'),
          ]),
      )
      .onConflict((oc) => oc.column('upstream_message_id').doNothing()),
  { planned: true },
);

const followUsers = prepared('messages_follow_users', (db, p: { waba: string[]; old: string[]; nu: string[] }) =>
  db
    .updateTable('messages as m')
    .from([unnest('u', { waba: 'text', old: 'text', nu: 'text' }, p), 'business_accounts as b'])
    .set((eb) => ({ user_id: eb.ref('u.nu') }))
    .whereRef('b.waba_id', '=', 'u.waba')
    .whereRef('m.business_account_id', '=', 'b.id')
    .whereRef('m.user_id', '=', 'u.old'),
);

/** The unnest of PendingColumns, with the order of the arrays (ORDER BY ord: ids are drawn in that order). */
const pendingRows = (c: PendingColumns) =>
  unnest(
    'u',
    {
      b: 'uuid',
      k: 'uuid',
      p: 'text',
      t: 'text',
      ty: 'text',
      tn: 'text',
      tl: 'text',
      c: 'jsonb',
      ui: 'text',
      ua: 'text',
    },
    { b: c.b, k: c.k, p: c.p, t: c.t, ty: c.ty, tn: c.tn, tl: c.tl, c: c.c, ui: c.ui, ua: c.ua },
    'ord',
  );

const PENDING_COLUMNS = [
  'business_account_id',
  'api_key_id',
  'phone_number_id',
  'to',
  'type',
  'template_name',
  'template_language',
  'content',
  'user_id',
  'upstream_api',
] as const;
/** pendingRows' columns, in PENDING_COLUMNS' order. */
const PENDING_VALUES = ['u.b', 'u.k', 'u.p', 'u.t', 'u.ty', 'u.tn', 'u.tl', 'u.c', 'u.ui', 'u.ua'] as const;

/** Pending messages of concurrent sends, one array per column, in one statement. */
const insertPendingBatch = prepared('insert_pending_messages', (db, p: PendingColumns) =>
  db
    .insertInto('messages')
    .columns([...PENDING_COLUMNS, 'status', 'updated_at'])
    .expression(
      db
        .selectFrom(pendingRows(p))
        .select((eb) => [...PENDING_VALUES, eb.val('pending').as('status'), now().as('updatedAt')])
        .orderBy('u.ord'),
    )
    .returning(INSERTED_COLUMNS),
);

/** A campaign chunk's pending messages (as insertPendingBatch, with the campaign; no key pair). */
const insertCampaignMessages = prepared('insert_campaign_messages', (db, p: PendingColumns & { campaignId: number }) =>
  db
    .insertInto('messages')
    .columns([...PENDING_COLUMNS, 'campaign_id', 'status', 'updated_at'])
    .expression(
      db
        .selectFrom(pendingRows(p))
        .select((eb) => [
          ...PENDING_VALUES,
          typed(p.campaignId, 'bigint').as('campaignId'),
          eb.val('pending').as('status'),
          now().as('updatedAt'),
        ])
        .orderBy('u.ord'),
    )
    .returning('id'),
);

/** pending → failed for many messages of one account (only from pending, as markFailed). */
const markFailedBatch = prepared(
  'mark_messages_failed',
  (
    db,
    p: {
      ids: number[];
      businessAccountId: string;
      at: Date;
      codes: (number | null)[];
      titles: string[];
      details: (string | null)[];
      categories: string[];
    },
  ) =>
    db
      .updateTable('messages as m')
      .from(
        unnest(
          'u',
          { id: 'bigint', code: 'int', title: 'text', detail: 'text', category: 'text' },
          { id: p.ids, code: p.codes, title: p.titles, detail: p.details, category: p.categories },
        ),
      )
      .set((eb) => ({
        status: 'failed',
        failed_at: p.at,
        error_code: eb.ref('u.code'),
        error_title: eb.ref('u.title'),
        error_detail: eb.ref('u.detail'),
        error_category: eb.ref('u.category'),
        updated_at: p.at,
      }))
      .where((eb) =>
        eb.and([
          eb('m.id', '=', eb.ref('u.id')),
          eb(
            eb.parens(
              eb.and([
                eb('m.status', '=', 'pending'),
                eb('m.business_account_id', '=', typed(p.businessAccountId, 'uuid')),
              ]),
            ),
            'is',
            true,
          ),
        ]),
      ),
  { planned: true },
);

/**
 * pending → sent for concurrent sends: the ids of the messages it moved. Planned for its arrays each time: a generic
 * plan of this join made on a new, small table hash-joins a sequential scan of it. The tenant check is per row, on the
 * message found by its primary key (see sameAccount).
 */
const markSentBatch = prepared(
  'mark_messages_sent',
  (db, p: { ids: number[]; businessAccountIds: string[]; wamids: string[]; ats: Date[] }) =>
    db
      .updateTable('messages as m')
      .from(
        unnest(
          'u',
          { id: 'bigint', b: 'uuid', wamid: 'text', at: 'timestamptz' },
          { id: p.ids, b: p.businessAccountIds, wamid: p.wamids, at: p.ats },
        ),
      )
      .set((eb) => ({
        status: 'sent',
        upstream_message_id: eb.ref('u.wamid').$notNull(),
        accepted_at: eb.ref('u.at').$notNull(),
        sent_at: eb.ref('u.at').$notNull(),
        updated_at: eb.ref('u.at').$notNull(),
      }))
      .where((eb) =>
        eb.and([
          eb('m.id', '=', eb.ref('u.id')),
          eb(
            eb.parens(eb.and([eb('m.status', '=', 'pending'), eb('m.business_account_id', '=', eb.ref('u.b'))])),
            'is',
            true,
          ),
        ]),
      )
      .returning('m.id'),
  { planned: true },
);

const recordLateAcceptance = prepared(
  'record_late_acceptance',
  (db, p: { id: number; businessAccountId: string; wamid: string; at: Date }) =>
    db
      .updateTable('messages')
      .set((eb) => ({
        upstream_message_id: eb.fn.coalesce('upstream_message_id', typed(p.wamid, 'text')),
        accepted_at: eb.fn.coalesce('accepted_at', typed(p.at, 'timestamptz')),
        updated_at: now(),
      }))
      .where((eb) => eb.and([eb('id', '=', p.id), sameAccount(eb, p.businessAccountId)]))
      .returning(columns.messages),
);

/** The row as updated, or as it was when something else had already moved it off `pending`. */
const markFailed = prepared(
  'mark_message_failed',
  (
    db,
    p: {
      id: number;
      businessAccountId: string;
      at: Date;
      code: number | null;
      title: string;
      detail: string | null;
      category: string;
    },
  ) =>
    db
      .with('failed', (db) =>
        db
          .updateTable('messages')
          .set({
            status: 'failed',
            failed_at: p.at,
            error_code: p.code,
            error_title: p.title,
            error_detail: p.detail,
            error_category: p.category,
            updated_at: p.at,
          })
          .where((eb) =>
            eb.and([eb('id', '=', p.id), eb('status', '=', 'pending'), sameAccount(eb, p.businessAccountId)]),
          )
          .returning(columns.messages),
      )
      .selectFrom('failed')
      .selectAll()
      .unionAll((eb) =>
        eb
          .selectFrom('messages')
          .select(columns.messages)
          .where((eb) =>
            eb.and([
              eb('id', '=', p.id),
              sameAccount(eb, p.businessAccountId),
              eb.not(eb.exists(eb.selectFrom('failed').select((eb) => eb.lit(1).as('one')))),
            ]),
          ),
      ),
);

/** A pending message as the parameters of one statement (content as JSON text). */
type PendingParams = Omit<PendingMessage, 'content'> & { businessAccountId: string; content: string };

/** The claim (idempotency-keys.repository.ts) and the message in one statement: the message only if the claim was taken. */
const insertPendingClaimingKey = prepared(
  'insert_pending_message_claiming_key',
  (db, p: PendingParams & KeyClaim & { apiKeyId: string }) =>
    db
      .with('claim', (db) =>
        claimKey(db, {
          apiKeyId: p.apiKeyId,
          key: p.key,
          requestHash: p.requestHash,
          now: p.now,
          lockedUntil: p.lockedUntil,
          expiresAt: p.expiresAt,
        }),
      )
      .insertInto('messages')
      .columns([...PENDING_COLUMNS, 'status', 'updated_at'])
      .expression((eb) =>
        eb
          .selectFrom('claim')
          .select((eb) => [
            typed(p.businessAccountId, 'uuid').as('b'),
            typed(p.apiKeyId, 'uuid').as('k'),
            typed(p.phoneNumberId, 'text').as('p'),
            typed(p.to, 'text').as('t'),
            typed(p.type, 'text').as('ty'),
            typed(p.templateName, 'text').as('tn'),
            typed(p.templateLanguage, 'text').as('tl'),
            typed(p.content, 'jsonb').as('c'),
            typed(p.userId, 'text').as('ui'),
            typed(p.upstreamApi, 'text').as('ua'),
            eb.val('pending').as('status'),
            now().as('updatedAt'),
          ]),
      )
      .returning(INSERTED_COLUMNS),
);

/** pending → sent, and the key completed with its outcome (idempotency-keys.repository.ts) only if this moved it. */
const markSentCompletingKey = prepared(
  'mark_message_sent_completing_key',
  (
    db,
    p: {
      id: number;
      businessAccountId: string;
      wamid: string;
      at: Date;
      apiKeyId: string;
      key: string;
      outcome: string;
    },
  ) =>
    db
      .with('sent', (db) =>
        db
          .updateTable('messages')
          .set({ status: 'sent', upstream_message_id: p.wamid, accepted_at: p.at, sent_at: p.at, updated_at: p.at })
          .where((eb) =>
            eb.and([eb('id', '=', p.id), eb('status', '=', 'pending'), sameAccount(eb, p.businessAccountId)]),
          )
          .returning('id'),
      )
      .with('completed', (db) =>
        completeKey(
          db as unknown as Parameters<typeof completeKey>[0],
          { apiKeyId: p.apiKeyId, key: p.key, outcome: p.outcome },
          db.selectNoFrom((eb) =>
            eb.exists(eb.selectFrom('sent').select('sent.id')).as('moved'),
          ) as unknown as Expression<SqlBool>,
        ),
      )
      .selectFrom('sent')
      .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('sent')),
);

/**
 * Planned for its values each time: the worker's batches run on a table that may have grown from nothing since its
 * last ANALYZE, and a generic plan made while it was small scans all of it for every chunk (measured: a third of
 * PostgreSQL's CPU in a batch bench). The two ways of finding a message are two index scans whose ids (one array,
 * computed first) are then found by primary key: no ANY over text re-evaluated per row, and no join the planner could
 * turn into a scan of the table.
 */
const lockForStatuses = prepared(
  'lock_messages_for_statuses',
  (db, p: { wamids: string[]; callbackMessageIds: number[] }) =>
    db
      .selectFrom('messages as m')
      .innerJoin('business_accounts as b', 'b.id', 'm.business_account_id')
      .select([
        'm.id',
        'b.waba_id as wabaId',
        'm.upstream_message_id as upstreamMessageId',
        'm.status',
        'm.error_category as errorCategory',
        'm.error_code as errorCode',
        'm.error_title as errorTitle',
        'm.error_detail as errorDetail',
        'm.sent_at as sentAt',
        'm.delivered_at as deliveredAt',
        'm.read_at as readAt',
        'm.failed_at as failedAt',
        'm.pricing_model as pricingModel',
        'm.pricing_category as pricingCategory',
        'm.pricing_type as pricingType',
        'm.pricing_billable as pricingBillable',
      ])
      .where((eb) =>
        eb(
          'm.id',
          '=',
          eb.fn.any(
            eb.fn<number[]>('array', [
              eb
                .selectFrom('messages as x')
                .select('x.id')
                .where((eb) => eb('x.upstream_message_id', '=', eb.fn.any(typed(p.wamids, 'text[]'))))
                .unionAll((eb) =>
                  eb
                    .selectFrom('messages as x')
                    .select('x.id')
                    .where((eb) =>
                      eb.and([
                        eb('x.id', '=', eb.fn.any(typed(p.callbackMessageIds, 'bigint[]'))),
                        eb('x.upstream_message_id', 'is', null),
                      ]),
                    ),
                ),
            ]),
          ),
        ),
      )
      .orderBy('m.id')
      .forUpdate('m'),
  { planned: true },
);

/** Planned for its values each time, as lockForStatuses. */
const writeStatuses = prepared(
  'write_message_statuses',
  (db, p: { rows: string; ids: number[] }) =>
    db
      .updateTable('messages as m')
      .from(
        jsonRecords(
          'v',
          {
            id: 'bigint',
            status: 'text',
            errorCategory: 'text',
            errorCode: 'int',
            errorTitle: 'text',
            errorDetail: 'text',
            sentAt: 'timestamptz',
            deliveredAt: 'timestamptz',
            readAt: 'timestamptz',
            failedAt: 'timestamptz',
            upstreamMessageId: 'text',
            pricingModel: 'text',
            pricingCategory: 'text',
            pricingType: 'text',
            pricingBillable: 'boolean',
          },
          p.rows,
        ),
      )
      .set((eb) => ({
        status: eb.ref('v.status').$notNull(),
        error_category: eb.ref('v.errorCategory'),
        error_code: eb.ref('v.errorCode'),
        error_title: eb.ref('v.errorTitle'),
        error_detail: eb.ref('v.errorDetail'),
        sent_at: eb.ref('v.sentAt'),
        delivered_at: eb.ref('v.deliveredAt'),
        read_at: eb.ref('v.readAt'),
        failed_at: eb.ref('v.failedAt'),
        upstream_message_id: eb.ref('v.upstreamMessageId'),
        pricing_model: eb.ref('v.pricingModel'),
        pricing_category: eb.ref('v.pricingCategory'),
        pricing_type: eb.ref('v.pricingType'),
        pricing_billable: eb.ref('v.pricingBillable'),
        updated_at: now(),
      }))
      .where((eb) => eb.and([eb('m.id', '=', eb.ref('v.id')), eb('m.id', '=', eb.fn.any(typed(p.ids, 'bigint[]')))])),
  { planned: true },
);

/**
 * The one owner of the `messages` table: every statement that reads or writes it from src/messages lives
 * here. The send path's statements are prepared statements (statement.ts). Tenant scope: the business account is the first argument of every method, and part of
 * every WHERE, so a forgotten scope is a type error rather than a leak.
 * Status webhooks (the worker) lock and write messages in the worker's transaction (a Tx).
 */
@Injectable()
export class MessagesRepository {
  /**
   * The two writes of every send (pending, then sent) of concurrent sends go to PostgreSQL together: one
   * statement and one commit per batch instead of per send (group commit without a wait, see GroupCommit).
   * Each send still gets its answer only after the commit that holds its row.
   */
  private readonly pendingInserts = new GroupCommit<{ businessAccountId: string; m: PendingMessage }, StoredMessage>(
    (items) => this.insertPendingBatch(items),
    SEND_BATCHING,
  );
  private readonly sentMarks = new GroupCommit<SentMark, boolean>((marks) => this.markSentBatch(marks), SEND_BATCHING);

  constructor(private readonly db: Db) {}

  // ---- Send ------------------------------------------------------------------------------------------------

  /** Every attempt is stored before the upstream call, as `pending`. */
  insertPending(businessAccountId: string, m: PendingMessage): Promise<StoredMessage> {
    return this.pendingInserts.add({ businessAccountId, m });
  }

  private async insertPendingBatch(
    items: { businessAccountId: string; m: PendingMessage }[],
  ): Promise<StoredMessage[]> {
    const { rows } = await this.db.exec(insertPendingBatch, pendingColumns(items));
    // Ids are drawn in the order the rows are inserted, which is the order of the arrays (ORDER BY ord).
    rows.sort((a, b) => a.id - b.id);
    return items.map(({ businessAccountId, m }, i) => pendingRow(businessAccountId, m, rows[i]!));
  }

  /**
   * insertPending for a send with an Idempotency-Key: the key's claim (idempotency_keys) and the message are
   * written by one statement, so both or neither are stored. The claim is won when the key is new, expired,
   * or held by an abandoned in-flight claim of the same body; otherwise nothing is stored and null comes back.
   */
  async insertPendingClaimingKey(
    businessAccountId: string,
    m: PendingMessage,
    claim: KeyClaim,
  ): Promise<StoredMessage | null> {
    if (m.apiKeyId === null) throw new Error('an Idempotency-Key is claimed for a key pair: the message has none');
    const { rows } = await this.db.exec(insertPendingClaimingKey, {
      ...m,
      businessAccountId,
      apiKeyId: m.apiKeyId,
      content: JSON.stringify(m.content),
      ...claim,
    });
    return rows[0] ? pendingRow(businessAccountId, m, rows[0]) : null;
  }

  /** pending → sent with the wamid, in one write; false when something else (a status webhook) moved it first. */
  markSent(businessAccountId: string, messageId: number, wamid: string, at: Date): Promise<boolean> {
    return this.sentMarks.add({ businessAccountId, messageId, wamid, at });
  }

  private async markSentBatch(marks: SentMark[]): Promise<boolean[]> {
    // In id order, as the worker locks messages: a batch and a status chunk never wait on each other in a cycle.
    const sorted = [...marks].sort((a, b) => a.messageId - b.messageId);
    const params = {
      ids: sorted.map((s) => s.messageId),
      businessAccountIds: sorted.map((s) => s.businessAccountId),
      wamids: sorted.map((s) => s.wamid),
      ats: sorted.map((s) => s.at),
    };
    const { rows } = await retryOnDeadlock(() => this.db.exec(markSentBatch, params));
    const moved = new Set(rows.map((r) => r.id));
    return marks.map((s) => moved.has(s.messageId));
  }

  /** markSent that also completes the send's Idempotency-Key with its outcome, in the same statement (only if it moved the message). */
  async markSentCompletingKey(
    businessAccountId: string,
    messageId: number,
    wamid: string,
    at: Date,
    completion: KeyCompletion,
  ): Promise<boolean> {
    const { rows } = await this.db.exec(markSentCompletingKey, {
      id: messageId,
      businessAccountId,
      wamid,
      at,
      apiKeyId: completion.apiKeyId,
      key: completion.key,
      outcome: JSON.stringify(completion.outcome),
    });
    return rows[0]?.sent === 1;
  }

  /**
   * The upstream accepted a message that a status webhook already moved on (found by its callback data):
   * only the wamid and the acceptance time are filled in where still missing. Returns the stored row.
   */
  async recordLateAcceptance(
    businessAccountId: string,
    messageId: number,
    wamid: string,
    at: Date,
  ): Promise<StoredMessage> {
    const { rows } = await this.db.exec(recordLateAcceptance, { id: messageId, businessAccountId, wamid, at });
    return found(rows[0], messageId);
  }

  /**
   * pending → failed with the reason. Only from `pending`: a status webhook that found the message by its
   * callback data while the call was still failing has already moved it on, and a status never goes back.
   * Returns the message as stored (one statement either way).
   */
  async markFailed(businessAccountId: string, messageId: number, error: MessageFailure): Promise<StoredMessage> {
    const { rows } = await this.db.exec(markFailed, { id: messageId, businessAccountId, at: new Date(), ...error });
    return found(rows[0], messageId);
  }

  // ---- Campaigns (the worker's runner) --------------------------------------------------------------------------

  /**
   * A campaign chunk's pending messages, in the caller's transaction (the one that claims their recipients): one
   * statement, ids in the order given.
   */
  async insertCampaignMessages(
    tx: Tx,
    businessAccountId: string,
    campaignId: number,
    items: PendingMessage[],
  ): Promise<number[]> {
    if (items.length === 0) return [];
    const { rows } = await this.db.exec(
      insertCampaignMessages,
      { ...pendingColumns(items.map((m) => ({ businessAccountId, m }))), campaignId },
      tx,
    );
    return rows.map((r) => r.id).sort((a, b) => a - b);
  }

  /** pending → sent for a chunk of a campaign's answers (one statement); the ids it moved. */
  async markSentMany(
    businessAccountId: string,
    marks: { messageId: number; wamid: string; at: Date }[],
  ): Promise<Set<number>> {
    if (marks.length === 0) return new Set();
    const sorted = [...marks].sort((a, b) => a.messageId - b.messageId);
    const params = {
      ids: sorted.map((s) => s.messageId),
      businessAccountIds: sorted.map(() => businessAccountId),
      wamids: sorted.map((s) => s.wamid),
      ats: sorted.map((s) => s.at),
    };
    const { rows } = await retryOnDeadlock(() => this.db.exec(markSentBatch, params));
    return new Set(rows.map((r) => r.id));
  }

  /** pending → failed for a chunk of a campaign's answers (one statement); a message moved on by a status meanwhile keeps it. */
  async markFailedMany(
    businessAccountId: string,
    failures: { messageId: number; error: MessageFailure }[],
    at = new Date(),
  ): Promise<void> {
    if (failures.length === 0) return;
    const sorted = [...failures].sort((a, b) => a.messageId - b.messageId);
    const params = {
      ids: sorted.map((f) => f.messageId),
      businessAccountId,
      at,
      codes: sorted.map((f) => f.error.code),
      titles: sorted.map((f) => f.error.title),
      details: sorted.map((f) => f.error.detail),
      categories: sorted.map((f) => f.error.category),
    };
    await retryOnDeadlock(() => this.db.exec(markFailedBatch, params));
  }

  // ---- Status webhooks (the worker, in its transaction) ------------------------------------------------------

  /**
   * Every message these statuses may concern, locked in id order (so that concurrent chunks never deadlock):
   * by wamid, or, for a status whose wamid is not stored yet, by the message id in its callback data when that
   * message has no wamid yet. Each comes with its business account's wabaId, which the caller checks per status.
   */
  async lockForStatuses(tx: Tx, wamids: string[], callbackMessageIds: number[]): Promise<StatusCandidate[]> {
    const { rows } = await this.db.exec(lockForStatuses, { wamids, callbackMessageIds }, tx);
    return rows;
  }

  /** Writes the status columns of messages locked by lockForStatuses, each once, in one statement. */
  async writeStatuses(tx: Tx, changed: StatusCandidate[]): Promise<void> {
    if (changed.length === 0) return;
    // The id list as well: it keeps the plan an index scan whatever the planner guesses of the JSON rows.
    await this.db.exec(writeStatuses, { rows: JSON.stringify(changed), ids: changed.map((m) => m.id) }, tx);
  }

  // ---- Inbound messages (the worker, in its transaction) ------------------------------------------------------

  /**
   * Stores customers' messages as inbound messages of the business account that received them, in the caller's
   * transaction (the one that stores their events). Once per wamid: a redelivery, a retried chunk or a second
   * worker inserts nothing (the unique upstream_message_id). Returns how many rows this call inserted.
   */
  /**
   * The messages of a previous business-scoped user id are the next one's (Meta's user id changes): sends to it and
   * its inbound messages are listed under the new id. Phone numbers a message was sent to or from stay as they were.
   */
  async followUsers(tx: Tx, changes: UserIdChange[]): Promise<void> {
    const distinct = distinctChanges(changes).filter((c) => !/^\d+$/.test(c.previous));
    if (distinct.length === 0) return;
    await this.db.exec(followUsers, changeColumns(distinct), tx);
  }

  async insertInbound(tx: Tx, rows: InboundMessageRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const { rowCount } = await this.db.exec(insertInbound, { rows: JSON.stringify(rows) }, tx);
    return rowCount;
  }

  // ---- Reads -----------------------------------------------------------------------------------------------

  /**
   * A page, newest first, and the total, read in one snapshot (a read-only REPEATABLE READ transaction): the
   * total always counts the rows the page was cut from.
   */
  list(
    businessAccountId: string,
    filter: MessageFilter,
    page: { page: number; limit: number },
    countLimit: number,
  ): Promise<{ rows: StoredMessage[]; total: number; totalIsLowerBound: boolean }> {
    const scoped = { ...filter, businessAccountId };
    const params = { ...scoped, ...skipTake(page) };
    // Counting stops past `countLimit` rows (issue 37, finding 2): an account of millions of messages costs a
    // bounded read per page, and the total is then a lower bound.
    const counting = { ...scoped, countTake: countLimit + 1 };
    return this.db.snapshot(async (tx) => {
      const { rows } = await this.db.exec(pageOf(params), params, tx);
      const { rows: counted } = await this.db.exec(countOf(counting), counting, tx);
      const n = Number(counted[0]?.n ?? 0);
      return { rows, total: Math.min(n, countLimit), totalIsLowerBound: n > countLimit };
    });
  }

  /** The account's message, read through `tx` when given (a snapshot shared with other reads). */
  async findOne(businessAccountId: string, id: number, tx?: Tx): Promise<StoredMessage | null> {
    const { rows } = await this.db.exec(findOne, { id, businessAccountId }, tx);
    return rows[0] ?? null;
  }

  /**
   * The messages feed after `after`, oldest first by (changed_xid, id): every message created, or whose status,
   * error, pricing or wamid changed, in a transaction below the horizon (the statement snapshot's xmin), each in
   * its current state. One statement, one snapshot: horizon, rows and `beyond` agree. A row changed again later
   * moves to its new position, so a poller sees its latest state once more. Served by
   * (business_account_id, changed_xid, id).
   */
  async feed(
    businessAccountId: string,
    filter: MessageFilter,
    after: FeedPosition,
    limit: number,
  ): Promise<MessagesFeedPage> {
    const params = { ...filter, businessAccountId, afterXid: after.xid.toString(), afterId: after.id, limit };
    const { rows } = await this.db.exec(feedOf(params), params);
    const { rows: page, beyond } = feedRows<StoredMessage & { xid: string }>(rows);
    return { rows: page, beyond };
  }

  /**
   * Aggregates over the messages created in [since, until): totals, one row per bucket (every bucket, zeros
   * included), failure reasons and per-template figures. sent = accepted by the upstream platform; delivered
   * includes read.
   */
  async analytics(businessAccountId: string, f: AnalyticsFilter): Promise<MessageAggregates> {
    const db = this.db.on();
    const scope = (eb: Eb) => [
      eb('business_account_id', '=', typed(businessAccountId, 'uuid')),
      eb('created_at', '>=', f.since),
      eb('created_at', '<', f.until),
      ...(f.phoneNumberId ? [eb('phone_number_id', '=', f.phoneNumberId)] : []),
      ...(f.templateName ? [eb('template_name', '=', f.templateName)] : []),
      ...(f.type ? [eb('type', '=', f.type)] : []),
    ];
    // The figures are of sends; customers' messages are counted apart (`inbound`), in total and per bucket.
    const outbound = (eb: Eb) => eb.and([...scope(eb), eb('direction', '=', 'outbound')]);
    const inbound = (eb: Eb) => eb.and([...scope(eb), eb('direction', '=', 'inbound')]);
    const int = (eb: Eb, count: Expression<unknown>) => eb.cast<number>(count, 'integer');
    const delivered = (eb: Eb) =>
      eb.or([eb('status', 'in', ['delivered', 'read']), eb('delivered_at', 'is not', null)]);
    const counts = (eb: Eb) =>
      [
        int(eb, eb.fn.countAll().filterWhere('upstream_message_id', 'is not', null)).as('sent'),
        int(eb, eb.fn.countAll().filterWhere(delivered)).as('delivered'),
        int(eb, eb.fn.countAll().filterWhere('status', '=', 'read')).as('read'),
        int(eb, eb.fn.countAll().filterWhere('status', '=', 'failed')).as('failed'),
      ] as const;
    const bucket = utcBucket(f.granularity, 'created_at');

    const [totals, series, failureReasons, templates, pricing, inboundBuckets] = await Promise.all([
      db
        .selectFrom('messages')
        .select((eb) => [int(eb, eb.fn.countAll()).as('total'), ...counts(eb)])
        .where(outbound)
        .executeTakeFirst(),
      db
        .with('buckets', (db) => db.selectNoFrom(utcBuckets(f.granularity, f.since, f.until).as('bucket')))
        .with('agg', (db) =>
          db
            .selectFrom('messages')
            .select((eb) => [bucket.as('bucket'), ...counts(eb)])
            .where(outbound)
            .groupBy(bucket),
        )
        .selectFrom('buckets as b')
        .leftJoin('agg as a', 'a.bucket', 'b.bucket')
        .select((eb) => [
          'b.bucket',
          eb.cast<number>(eb.fn.coalesce('a.sent', eb.lit(0)), 'integer').as('sent'),
          eb.cast<number>(eb.fn.coalesce('a.delivered', eb.lit(0)), 'integer').as('delivered'),
          eb.cast<number>(eb.fn.coalesce('a.read', eb.lit(0)), 'integer').as('read'),
          eb.cast<number>(eb.fn.coalesce('a.failed', eb.lit(0)), 'integer').as('failed'),
        ])
        .where('b.bucket', '<', f.until)
        .orderBy('b.bucket')
        .execute(),
      db
        .selectFrom('messages')
        .select((eb) => ['error_code as code', 'error_title as title', int(eb, eb.fn.countAll()).as('count')])
        .where((eb) => eb.and([outbound(eb), eb('status', '=', 'failed')]))
        .groupBy(['error_code', 'error_title'])
        .orderBy('count', 'desc')
        .orderBy('code', (o) => o.asc().nullsLast())
        .limit(20)
        .execute(),
      db
        .selectFrom('messages')
        .select((eb) => [
          'template_name as templateName',
          int(eb, eb.fn.countAll()).as('total'),
          int(eb, eb.fn.countAll().filterWhere(delivered)).as('delivered'),
          int(eb, eb.fn.countAll().filterWhere('status', '=', 'read')).as('read'),
          int(eb, eb.fn.countAll().filterWhere('status', '=', 'failed')).as('failed'),
        ])
        .where((eb) => eb.and([outbound(eb), eb('template_name', 'is not', null)]))
        .groupBy('template_name')
        .orderBy('total', 'desc')
        .orderBy('template_name')
        .limit(100)
        .execute(),
      db
        .selectFrom('messages')
        .select((eb) => [
          bucket.as('bucket'),
          'pricing_category as category',
          'pricing_type as type',
          int(eb, eb.fn.countAll()).as('count'),
        ])
        .where((eb) =>
          eb.and([outbound(eb), eb.or([eb('pricing_category', 'is not', null), eb('pricing_type', 'is not', null)])]),
        )
        .groupBy([bucket, 'pricing_category', 'pricing_type'])
        .orderBy('bucket')
        .execute(),
      db
        .selectFrom('messages')
        .select((eb) => [bucket.as('bucket'), int(eb, eb.fn.countAll()).as('count')])
        .where(inbound)
        .groupBy(bucket)
        .orderBy('bucket')
        .execute(),
    ]);
    return {
      totals: totals ?? { total: 0, sent: 0, delivered: 0, read: 0, failed: 0 },
      series,
      failureReasons,
      templates: templates.map((t) => ({ ...t, templateName: t.templateName ?? '' })),
      pricing,
      inbound: inboundBuckets,
    };
  }

  // ---- One contact's messages (src/contacts: export, erasure) ----------------------------------

  /** Whether a message of the account names one of these addresses (recipient, sender or user id). */
  private ofContact(eb: Eb, addresses: string[]): Expression<SqlBool> {
    return eb.or([
      eb('to', '=', eb.fn.any(eb.val(addresses))),
      eb('from', '=', eb.fn.any(eb.val(addresses))),
      eb('user_id', '=', eb.fn.any(eb.val(addresses))),
    ]);
  }

  /** Every address the account's messages pair with these: a phone number's user id, a user id's phone number. */
  async addressesOf(businessAccountId: string, addresses: string[]): Promise<string[]> {
    const rows = await this.db
      .on()
      .selectFrom('messages')
      .select(['to', 'from', 'user_id as userId'])
      .distinct()
      .where('business_account_id', '=', businessAccountId)
      .where('erased_at', 'is', null)
      .where((eb) => this.ofContact(eb, addresses))
      .limit(100)
      .execute();
    const found = new Set(addresses);
    for (const r of rows) for (const a of [r.to, r.from, r.userId]) if (a !== null) found.add(a);
    return [...found];
  }

  /** The contact's messages after message `afterId`, oldest first, inside the reader's window. */
  async pageOfContact(
    businessAccountId: string,
    addresses: string[],
    q: { afterId: number; limit: number; since?: Date; until?: Date },
  ): Promise<StoredMessage[]> {
    let rows = this.db
      .on()
      .selectFrom('messages')
      .select(columns.messages)
      .where('business_account_id', '=', businessAccountId)
      .where('erased_at', 'is', null)
      .where('id', '>', q.afterId)
      .where((eb) => this.ofContact(eb, addresses));
    if (q.since) rows = rows.where('created_at', '>=', q.since);
    if (q.until) rows = rows.where('created_at', '<=', q.until);
    return rows.orderBy('id').limit(q.limit).execute();
  }

  /**
   * Erases up to `limit` of the contact's messages in the caller's transaction: content, addresses, the wamid and
   * the error's detail go; the row (type, template, status, times, pricing, error code) stays for the counts.
   * Returns the erased rows' wamids (their status events go with them); an empty answer: none left.
   */
  /**
   * Content retention (src/retention): up to `limit` messages of these accounts created in [since, before) that
   * still hold content lose it (`content` null, `content_scrubbed_at` set); the row, its addresses, statuses, errors
   * and pricing stay, and the messages feed does not move (its trigger watches status, error, pricing and wamid).
   * Returns how many; fewer than `limit` means none is left in the range.
   */
  async scrubContentBatch(
    tx: Tx,
    businessAccountIds: string[],
    range: { since: Date | null; before: Date },
    limit: number,
  ): Promise<number> {
    const db = this.db.on(tx);
    const found = await db
      .selectFrom('messages')
      .select('id')
      .where('business_account_id', '=', (eb) => eb.fn.any(eb.val(businessAccountIds)))
      .where('created_at', '<', range.before)
      .where('created_at', '>=', range.since ?? new Date(0))
      .where('content', 'is not', null)
      .limit(limit)
      .forUpdate()
      .execute();
    if (found.length === 0) return 0;
    await db
      .updateTable('messages')
      .set({ content: null, content_scrubbed_at: now() })
      .where('id', '=', (eb) => eb.fn.any(eb.val(found.map((r) => r.id))))
      .execute();
    return found.length;
  }

  async eraseContactBatch(
    tx: Tx,
    businessAccountId: string,
    addresses: string[],
    limit: number,
  ): Promise<{ count: number; wamids: string[] }> {
    const db = this.db.on(tx);
    const rows = await db
      .selectFrom('messages')
      .select(['id', 'upstream_message_id as wamid'])
      .where('business_account_id', '=', businessAccountId)
      .where('erased_at', 'is', null)
      .where((eb) => this.ofContact(eb, addresses))
      .orderBy('id')
      .limit(limit)
      .forUpdate()
      .execute();
    if (rows.length === 0) return { count: 0, wamids: [] };
    await db
      .updateTable('messages')
      .set({
        content: null,
        to: null,
        from: null,
        user_id: null,
        upstream_message_id: null,
        error_detail: null,
        erased_at: now(),
      })
      .where('id', '=', (eb) => eb.fn.any(eb.val(rows.map((r) => r.id))))
      .execute();
    return { count: rows.length, wamids: rows.flatMap((r) => (r.wamid === null ? [] : [r.wamid])) };
  }
}

/** What the status rules (messages/message-status.ts) need to know of a message. */
export interface LockedMessage {
  id: number;
  status: string;
  errorCategory: string | null;
  sentAt: Date | null;
  deliveredAt: Date | null;
  readAt: Date | null;
  failedAt: Date | null;
}

/** A message as a status chunk locks and writes it back: every column statuses change. */
export interface StatusCandidate extends LockedMessage {
  wabaId: string;
  upstreamMessageId: string | null;
  errorCode: number | null;
  errorTitle: string | null;
  errorDetail: string | null;
  pricingModel: string | null;
  pricingCategory: string | null;
  pricingType: string | null;
  pricingBillable: boolean | null;
}

/** A message to store as pending (a send, or a campaign's): the rest of its row is the database's or the status rules'. */
export interface PendingMessage {
  apiKeyId: string | null;
  phoneNumberId: string;
  to: string | null;
  userId: string | null;
  upstreamApi: string;
  type: string;
  templateName: string | null;
  templateLanguage: string | null;
  content: unknown;
}

/** Pending messages as the arrays of the batch inserts (one per column, a row per index). */
interface PendingColumns {
  b: string[];
  k: (string | null)[];
  p: string[];
  t: (string | null)[];
  ty: string[];
  tn: (string | null)[];
  tl: (string | null)[];
  c: string[];
  ui: (string | null)[];
  ua: string[];
}

function pendingColumns(items: { businessAccountId: string; m: PendingMessage }[]): PendingColumns {
  return {
    b: items.map((i) => i.businessAccountId),
    k: items.map((i) => i.m.apiKeyId),
    p: items.map((i) => i.m.phoneNumberId),
    t: items.map((i) => i.m.to),
    ty: items.map((i) => i.m.type),
    tn: items.map((i) => i.m.templateName),
    tl: items.map((i) => i.m.templateLanguage),
    c: items.map((i) => JSON.stringify(i.m.content)),
    ui: items.map((i) => i.m.userId),
    ua: items.map((i) => i.m.upstreamApi),
  };
}

interface SentMark {
  businessAccountId: string;
  messageId: number;
  wamid: string;
  at: Date;
}

/** No wait; at most 2 statements of each kind in flight per process, the rest queue and go together. */
const SEND_BATCHING = { windowMs: 0, maxItems: 200, maxInFlight: 2 };

/** A deadlock aborts one side's statement (PostgreSQL picks it); that side runs it again. */
async function retryOnDeadlock<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if ((err as { code?: string }).code !== '40P01' || attempt >= attempts) throw err;
    }
  }
}

/** An Idempotency-Key claim stored with a pending message (see IdempotencyService.claim). */
export interface KeyClaim {
  key: string;
  requestHash: string;
  now: Date;
  lockedUntil: Date;
  expiresAt: Date;
}

export interface KeyCompletion {
  apiKeyId: string;
  key: string;
  /** The send's outcome as JSON (messages/send/send-outcome.ts). */
  outcome: unknown;
}

export interface MessageFailure {
  code: number | null;
  title: string;
  detail: string | null;
  category: string;
}

export interface AnalyticsFilter {
  since: Date;
  until: Date;
  granularity: 'day' | 'hour';
  phoneNumberId?: string;
  templateName?: string;
  type?: string;
}

export interface MessageCounts {
  total: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
}

export interface MessageAggregates {
  totals: MessageCounts;
  /** Buckets are the UTC day's or hour's first instant. */
  series: Array<{ bucket: Date } & Omit<MessageCounts, 'total'>>;
  failureReasons: Array<{ code: number | null; title: string | null; count: number }>;
  templates: Array<{ templateName: string; total: number; delivered: number; read: number; failed: number }>;
  /** Messages with a pricing object, per bucket (as series), category and type. */
  pricing: Array<{ bucket: Date; category: string | null; type: string | null; count: number }>;
  /** Inbound messages (customers' messages) per bucket that has any. */
  inbound: Array<{ bucket: Date; count: number }>;
}

/** List and feed filters; the business account is always the first condition. */
export interface MessageFilter {
  direction?: string;
  status?: string;
  to?: string;
  userId?: string;
  phoneNumberId?: string;
  templateName?: string;
  type?: string;
  campaignId?: number;
  since?: Date;
  until?: Date;
}

/** A filter of the messages lists, with the account it is read for. */
type Scoped = MessageFilter & { businessAccountId: string };

/** The filters on `messages` (the business account first): values from `p`, which filters are present from `given`. */
function whereOf(p: Required<Scoped>, given: Scoped): Filter<'messages'> {
  return filterOf<'messages'>(
    (eb) => eb('business_account_id', '=', typed(p.businessAccountId, 'uuid')),
    [
      when('d', given.direction, (eb) => eb('direction', '=', p.direction)),
      when('s', given.status, (eb) => eb('status', '=', p.status)),
      when('r', given.to, (eb) => eb('to', '=', p.to)),
      when('i', given.userId, (eb) => eb('user_id', '=', p.userId)),
      when('p', given.phoneNumberId, (eb) => eb('phone_number_id', '=', p.phoneNumberId)),
      when('n', given.templateName, (eb) => eb('template_name', '=', p.templateName)),
      when('t', given.type, (eb) => eb('type', '=', p.type)),
      when('c', given.campaignId, (eb) => eb('campaign_id', '=', p.campaignId)),
      when('f', given.since, (eb) => eb('created_at', '>=', p.since)),
      when('u', given.until, (eb) => eb('created_at', '<', p.until)),
    ],
  );
}
const shapeOf = (given: Scoped) => whereOf(given as Required<Scoped>, given).shape;

const pageOf = preparedByShape(
  'messages_page',
  shapeOf,
  (db, p: Required<Scoped & { take: number; skip: number }>, given) =>
    db
      .selectFrom('messages')
      .select(columns.messages)
      .where(whereOf(p, given).where)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(p.take)
      .offset(p.skip),
);

const countOf = preparedByShape('messages_count', shapeOf, (db, p: Required<Scoped & { countTake: number }>, given) =>
  db
    .selectFrom(db.selectFrom('messages').select('id').where(whereOf(p, given).where).limit(p.countTake).as('counted'))
    .select((eb) => eb.cast<string>(eb.fn.countAll(), 'text').as('n')),
);

/** The messages feed (see MessagesRepository.feed): as the events feed, on changed_xid. */
const feedOf = preparedByShape(
  'messages_feed',
  shapeOf,
  (db, p: Required<Scoped & { afterXid: string; afterId: number; limit: number }>, given) =>
    feedStatement(db, {
      beyond: (eb, horizon) =>
        eb
          .selectFrom('messages as b')
          .select('b.changed_xid')
          .where('b.business_account_id', '=', typed(p.businessAccountId, 'uuid'))
          .where('b.changed_xid', '>=', horizon)
          .orderBy('b.changed_xid')
          .limit(1)
          .as('beyond'),
      page: (eb, horizon) =>
        eb
          .selectFrom('messages')
          .select([...columns.messages, 'changed_xid as xid'])
          .where(whereOf(p, given).where)
          .where((eb) =>
            eb(eb.refTuple('changed_xid', 'id'), '>', eb.tuple(typed(p.afterXid, 'xid8'), typed(p.afterId, 'bigint'))),
          )
          .where('changed_xid', '<', horizon)
          .orderBy('changed_xid')
          .orderBy('id')
          .limit(p.limit)
          .as('r'),
    }),
);

/** A customer's message as the worker stores it (content in the shapes of outbound content). */
export interface InboundMessageRow {
  wabaId: string;
  phoneNumberId: string;
  from: string | null;
  userId: string | null;
  /** meta_business_agent when it arrived on `standby`; null when the business app held the conversation. */
  handledBy: string | null;
  type: string;
  content: unknown;
  wamid: string | null;
}

/** A page of the messages feed; `beyond`: the smallest changed_xid of the account not in the feed yet, if any. */
export interface MessagesFeedPage {
  rows: (StoredMessage & { xid: string })[];
  beyond: bigint | undefined;
}

function found(row: StoredMessage | undefined, messageId: number): StoredMessage {
  if (!row) throw new Error(`message ${messageId} not found in its business account`);
  return row;
}

/** What the database decides on insert; the rest of a pending row is what was inserted (see pendingRow). */
export interface InsertedRow {
  id: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A freshly inserted pending message, without reading back columns whose values we just sent. */
export function pendingRow(businessAccountId: string, m: PendingMessage, r: InsertedRow): StoredMessage {
  return {
    id: r.id,
    businessAccountId,
    apiKeyId: m.apiKeyId,
    phoneNumberId: m.phoneNumberId,
    to: m.to,
    direction: 'outbound',
    from: null,
    handledBy: null,
    userId: m.userId,
    upstreamApi: m.upstreamApi,
    type: m.type,
    templateName: m.templateName,
    templateLanguage: m.templateLanguage,
    content: m.content as StoredMessage['content'],
    status: 'pending',
    upstreamMessageId: null,
    errorCode: null,
    errorTitle: null,
    errorDetail: null,
    errorCategory: null,
    acceptedAt: null,
    sentAt: null,
    deliveredAt: null,
    readAt: null,
    failedAt: null,
    erasedAt: null,
    contentScrubbedAt: null,
    pricingModel: null,
    pricingCategory: null,
    pricingType: null,
    pricingBillable: null,
    campaignId: null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
