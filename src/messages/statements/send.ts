// The send path's statements on `messages`: run by MessagesRepository (../messages.repository.ts), the table's one
// owner. Their SQL as PostgreSQL receives it: ./queries/send.sql (`npm run db:sql` writes it).
import type { Expression, SqlBool } from 'kysely';
import { columns } from '../../core/db/database.js';
import { columnMap, type ColumnSpec, type SourceArrays } from '../../core/db/column-map.js';
import { now, typed, unnest } from '../../core/db/pg.js';
import { prepared } from '../../core/db/statement.js';
import { claimKey, completeKey } from '../send/idempotency-keys.repository.js';
import type { StoredMessage } from './reads.js';
import { lockedInIdOrder, sameAccount } from './shared.js';

/** What the database decides on insert; the rest of a pending row is what was inserted (see pendingRow). */
const INSERTED_COLUMNS = ['id', 'created_at as createdAt', 'updated_at as updatedAt'] as const;

/**
 * A pending message's columns, once (core/db/column-map.ts): each with its array (PendingColumns) or parameter and its
 * type. The inserts add what they give themselves (PENDING_INSERT; campaigns.ts adds campaign_id).
 */
export const PENDING_SOURCE = {
  business_account_id: ['b', 'uuid'],
  api_key_id: ['k', 'uuid'],
  phone_number_id: ['p', 'text'],
  to: ['t', 'text'],
  type: ['ty', 'text'],
  template_name: ['tn', 'text'],
  template_language: ['tl', 'text'],
  content: ['c', 'jsonb'],
  user_id: ['ui', 'text'],
  upstream_api: ['ua', 'text'],
} as const satisfies ColumnSpec<'messages'>;

/** A send's pending messages: the source columns, then the status and the update time the statement gives. */
const PENDING_INSERT = columnMap('messages', { ...PENDING_SOURCE, status: 'status', updated_at: 'updatedAt' });

/** Pending messages of concurrent sends, one array per column, in one statement. */
export const insertPendingBatch = prepared('insert_pending_messages', (db, p: PendingColumns) =>
  db
    .insertInto('messages')
    .columns(PENDING_INSERT.columns)
    .expression(
      db
        .selectFrom(PENDING_INSERT.unnest('u', p, 'ord'))
        .select((eb) => PENDING_INSERT.select('u', { status: eb.val('pending'), updatedAt: now() }))
        .orderBy('u.ord'),
    )
    .returning(INSERTED_COLUMNS),
);

/**
 * pending → sent for concurrent sends: the ids of the messages it moved. Planned for its arrays each time: a generic
 * plan of this join made on a new, small table hash-joins a sequential scan of it. The tenant check is per row, on the
 * message found by its primary key (see sameAccount). The rows are locked first, in id order (lockedInIdOrder).
 */
export const markSentBatch = prepared(
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
          lockedInIdOrder(eb, p.ids),
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

export const recordLateAcceptance = prepared(
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
export const markFailed = prepared(
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
export const insertPendingClaimingKey = prepared(
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
      .columns(PENDING_INSERT.columns)
      .expression((eb) =>
        eb.selectFrom('claim').select((eb) =>
          PENDING_INSERT.values(
            {
              b: p.businessAccountId,
              k: p.apiKeyId,
              p: p.phoneNumberId,
              t: p.to,
              ty: p.type,
              tn: p.templateName,
              tl: p.templateLanguage,
              c: p.content,
              ui: p.userId,
              ua: p.upstreamApi,
            },
            { status: eb.val('pending'), updatedAt: now() },
          ),
        ),
      )
      .returning(INSERTED_COLUMNS),
);

/** pending → sent, and the key completed with its outcome (idempotency-keys.repository.ts) only if this moved it. */
export const markSentCompletingKey = prepared(
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

/** Pending messages as the arrays of the batch inserts (one per column of PENDING_SOURCE, a row per index). */
export type PendingColumns = SourceArrays<typeof PENDING_SOURCE>;

export function pendingColumns(items: { businessAccountId: string; m: PendingMessage }[]): PendingColumns {
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
