import { Injectable } from '@nestjs/common';
import { Prisma, type Message } from '../generated/prisma/client.js';
import { GroupCommit } from '../core/async/group-commit.js';
import { skipTake } from '../core/http/pagination.js';
import { PrismaService } from '../core/prisma/prisma.service.js';
import { connectionOf, inSnapshot, planned, statement, type Tx } from '../core/prisma/sql.js';
import { feedRows, feedSql, sqlFilter, type FeedStatementRow, type SqlFilter } from '../core/prisma/sql-filter.js';
import type { FeedPosition } from '../webhooks/events/feed-cursor.js';
import { claimKeySql, completeKeySql } from './send/idempotency-keys.repository.js';

/**
 * The one owner of the `messages` table: every statement that reads or writes it from src/messages lives
 * here. The send path's statements are SQL on the pool (a Prisma query costs ≈ 4× the query here); the rarer
 * ones use Prisma. Tenant scope: the business account is the first argument of every method, and part of
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
  private readonly pendingInserts = new GroupCommit<{ businessAccountId: string; m: PendingMessage }, StoredMessage>((items) => this.insertPendingBatch(items), SEND_BATCHING);
  private readonly sentMarks = new GroupCommit<SentMark, boolean>((marks) => this.markSentBatch(marks), SEND_BATCHING);

  constructor(private readonly prisma: PrismaService) {}

  // ---- Send ------------------------------------------------------------------------------------------------

  /** Every attempt is stored before the upstream call, as `pending`. */
  insertPending(businessAccountId: string, m: PendingMessage): Promise<StoredMessage> {
    return this.pendingInserts.add({ businessAccountId, m });
  }

  private async insertPendingBatch(items: { businessAccountId: string; m: PendingMessage }[]): Promise<StoredMessage[]> {
    const columns: unknown[][] = [[], [], [], [], [], [], [], [], [], []];
    for (const { businessAccountId, m } of items) pendingValues(businessAccountId, m).forEach((v, i) => columns[i]!.push(v));
    const { rows } = await this.prisma.pool.query<InsertedRow>(insertPendingBatch(columns));
    // Ids are drawn in the order the rows are inserted, which is the order of the arrays (ORDER BY ord).
    rows.sort((a, b) => a.id - b.id);
    return items.map(({ businessAccountId, m }, i) => pendingRow(businessAccountId, m, rows[i]!));
  }

  /**
   * insertPending for a send with an Idempotency-Key: the key's claim (idempotency_keys) and the message are
   * written by one statement, so both or neither are stored. The claim is won when the key is new, expired,
   * or held by an abandoned in-flight claim of the same body; otherwise nothing is stored and null comes back.
   */
  async insertPendingClaimingKey(businessAccountId: string, m: PendingMessage, claim: KeyClaim): Promise<StoredMessage | null> {
    const values = pendingValues(businessAccountId, m);
    const { rows } = await this.prisma.pool.query<InsertedRow>(insertPendingClaimingKey([...values, claim.key, claim.requestHash, claim.now, claim.lockedUntil, claim.expiresAt]));
    return rows[0] ? pendingRow(businessAccountId, m, rows[0]) : null;
  }

  /** pending → sent with the wamid, in one write; false when something else (a status webhook) moved it first. */
  markSent(businessAccountId: string, messageId: number, wamid: string, at: Date): Promise<boolean> {
    return this.sentMarks.add({ businessAccountId, messageId, wamid, at });
  }

  private async markSentBatch(marks: SentMark[]): Promise<boolean[]> {
    // In id order, as the worker locks messages: a batch and a status chunk never wait on each other in a cycle.
    const sorted = [...marks].sort((a, b) => a.messageId - b.messageId);
    const values = [sorted.map((s) => s.messageId), sorted.map((s) => s.businessAccountId), sorted.map((s) => s.wamid), sorted.map((s) => s.at)];
    const { rows } = await retryOnDeadlock(() => this.prisma.pool.query<{ id: number }>(markSentBatch(values)));
    const moved = new Set(rows.map((r) => r.id));
    return marks.map((s) => moved.has(s.messageId));
  }

  /** markSent that also completes the send's Idempotency-Key with its outcome, in the same statement (only if it moved the message). */
  async markSentCompletingKey(businessAccountId: string, messageId: number, wamid: string, at: Date, completion: KeyCompletion): Promise<boolean> {
    const { rows } = await this.prisma.pool.query<{ sent: number }>(
      markSentCompletingKey([messageId, businessAccountId, wamid, at, completion.apiKeyId, completion.key, JSON.stringify(completion.outcome)]),
    );
    return rows[0]!.sent === 1;
  }

  /**
   * The upstream accepted a message that a status webhook already moved on (found by its callback data):
   * only the wamid and the acceptance time are filled in where still missing. Returns the stored row.
   */
  async recordLateAcceptance(businessAccountId: string, messageId: number, wamid: string, at: Date): Promise<StoredMessage> {
    const { rows } = await this.prisma.pool.query<StoredMessage>(recordLateAcceptance([messageId, businessAccountId, wamid, at]));
    return found(rows[0], messageId);
  }

  /**
   * pending → failed with the reason. Only from `pending`: a status webhook that found the message by its
   * callback data while the call was still failing has already moved it on, and a status never goes back.
   * Returns the message as stored (one statement either way).
   */
  async markFailed(businessAccountId: string, messageId: number, error: MessageFailure): Promise<StoredMessage> {
    const { rows } = await this.prisma.pool.query<StoredMessage>(
      markFailed([messageId, businessAccountId, new Date(), error.code, error.title, error.detail, error.category]),
    );
    return found(rows[0], messageId);
  }

  // ---- Campaigns (the worker's runner) --------------------------------------------------------------------------

  /**
   * A campaign chunk's pending messages, in the caller's transaction (the one that claims their recipients): one
   * statement, ids in the order given.
   */
  async insertCampaignMessages(tx: Tx, businessAccountId: string, campaignId: number, items: PendingMessage[]): Promise<number[]> {
    if (items.length === 0) return [];
    const columns: unknown[][] = [[], [], [], [], [], [], [], [], [], []];
    for (const m of items) pendingValues(businessAccountId, m).forEach((v, i) => columns[i]!.push(v));
    const { rows } = await connectionOf(tx).query<{ id: number }>(insertCampaignMessages([...columns, campaignId]));
    return rows.map((r) => r.id).sort((a, b) => a - b);
  }

  /** pending → sent for a chunk of a campaign's answers (one statement); the ids it moved. */
  async markSentMany(businessAccountId: string, marks: { messageId: number; wamid: string; at: Date }[]): Promise<Set<number>> {
    if (marks.length === 0) return new Set();
    const sorted = [...marks].sort((a, b) => a.messageId - b.messageId);
    const values = [sorted.map((s) => s.messageId), sorted.map(() => businessAccountId), sorted.map((s) => s.wamid), sorted.map((s) => s.at)];
    const { rows } = await retryOnDeadlock(() => this.prisma.pool.query<{ id: number }>(markSentBatch(values)));
    return new Set(rows.map((r) => r.id));
  }

  /** pending → failed for a chunk of a campaign's answers (one statement); a message moved on by a status meanwhile keeps it. */
  async markFailedMany(businessAccountId: string, failures: { messageId: number; error: MessageFailure }[], at = new Date()): Promise<void> {
    if (failures.length === 0) return;
    const sorted = [...failures].sort((a, b) => a.messageId - b.messageId);
    await retryOnDeadlock(() =>
      this.prisma.pool.query(
        markFailedBatch([
          sorted.map((f) => f.messageId),
          businessAccountId,
          at,
          sorted.map((f) => f.error.code),
          sorted.map((f) => f.error.title),
          sorted.map((f) => f.error.detail),
          sorted.map((f) => f.error.category),
        ]),
      ),
    );
  }

  // ---- Status webhooks (the worker, in its transaction) ------------------------------------------------------

  /**
   * Every message these statuses may concern, locked in id order (so that concurrent chunks never deadlock):
   * by wamid, or, for a status whose wamid is not stored yet, by the message id in its callback data when that
   * message has no wamid yet. Each comes with its business account's wabaId, which the caller checks per status.
   */
  async lockForStatuses(tx: Tx, wamids: string[], callbackMessageIds: number[]): Promise<StatusCandidate[]> {
    const { rows } = await connectionOf(tx).query<StatusCandidate>(lockForStatuses([wamids, callbackMessageIds]));
    return rows;
  }

  /** Writes the status columns of messages locked by lockForStatuses, each once, in one statement. */
  async writeStatuses(tx: Tx, changed: StatusCandidate[]): Promise<void> {
    if (changed.length === 0) return;
    // The id list as well: it keeps the plan an index scan whatever the planner guesses of the JSON rows.
    await connectionOf(tx).query(writeStatuses([JSON.stringify(changed), changed.map((m) => m.id)]));
  }

  // ---- Inbound messages (the worker, in its transaction) ------------------------------------------------------

  /**
   * Stores customers' messages as inbound messages of the business account that received them, in the caller's
   * transaction (the one that stores their events). Once per wamid: a redelivery, a retried chunk or a second
   * worker inserts nothing (the unique upstream_message_id). Returns how many rows this call inserted.
   */
  async insertInbound(tx: Tx, rows: InboundMessageRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const { rowCount } = await connectionOf(tx).query(insertInbound([JSON.stringify(rows)]));
    return rowCount ?? 0;
  }

  // ---- Reads -----------------------------------------------------------------------------------------------

  /**
   * A page, newest first, and the total, read in one snapshot (a read-only REPEATABLE READ transaction): the
   * total always counts the rows the page was cut from.
   */
  list(businessAccountId: string, filter: MessageFilter, page: { page: number; limit: number }): Promise<{ rows: StoredMessage[]; total: number }> {
    const where = whereOf(businessAccountId, filter);
    const { skip, take } = skipTake(page);
    const n = where.values.length;
    return inSnapshot(this.prisma.pool, async (tx) => {
      const connection = connectionOf(tx);
      const { rows } = await connection.query<StoredMessage>({
        name: `sql_messages_page_${where.shape}`,
        text: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        values: [...where.values, take, skip],
      });
      const { rows: counted } = await connection.query<{ n: string }>({
        name: `sql_messages_count_${where.shape}`,
        text: `SELECT count(*)::text AS n FROM messages WHERE ${where.sql}`,
        values: where.values,
      });
      return { rows, total: Number(counted[0]!.n) };
    });
  }

  /** The account's message, read through `tx` when given (a snapshot shared with other reads). */
  async findOne(businessAccountId: string, id: number, tx?: Tx): Promise<StoredMessage | null> {
    const query = findOne([id, businessAccountId]);
    const { rows } = tx ? await connectionOf(tx).query<StoredMessage>(query) : await this.prisma.pool.query<StoredMessage>(query);
    return rows[0] ?? null;
  }

  /**
   * The messages feed after `after`, oldest first by (changed_xid, id): every message created, or whose status,
   * error, pricing or wamid changed, in a transaction below the horizon (the statement snapshot's xmin), each in
   * its current state. One statement, one snapshot: horizon, rows and `beyond` agree. A row changed again later
   * moves to its new position, so a poller sees its latest state once more. Served by
   * (business_account_id, changed_xid, id).
   */
  async feed(businessAccountId: string, filter: MessageFilter, after: FeedPosition, limit: number): Promise<MessagesFeedPage> {
    const where = whereOf(businessAccountId, filter);
    const { rows } = await this.prisma.pool.query<FeedStatementRow>({
      name: `sql_messages_feed_${where.shape}`,
      text: feedSql({ table: 'messages', xidColumn: 'changed_xid', columns: MESSAGE_COLUMNS, scope: 'business_account_id = $1::uuid', where }),
      values: [...where.values, after.xid.toString(), after.id, limit],
    });
    const { rows: page, beyond } = feedRows<StoredMessage & { xid: string }>(rows);
    return { rows: page, beyond };
  }

  /**
   * Aggregates over the messages created in [since, until): totals, one row per bucket (every bucket, zeros
   * included), failure reasons and per-template figures. sent = accepted by the upstream platform; delivered
   * includes read.
   */
  async analytics(businessAccountId: string, f: AnalyticsFilter): Promise<MessageAggregates> {
    const filters = [Prisma.sql`business_account_id = ${businessAccountId}::uuid`, Prisma.sql`created_at >= ${f.since}`, Prisma.sql`created_at < ${f.until}`];
    if (f.phoneNumberId) filters.push(Prisma.sql`phone_number_id = ${f.phoneNumberId}`);
    if (f.templateName) filters.push(Prisma.sql`template_name = ${f.templateName}`);
    if (f.type) filters.push(Prisma.sql`type = ${f.type}`);
    // The figures are of sends; customers' messages are counted apart (`inbound`), in total and per bucket.
    const inboundWhere = Prisma.join([...filters, Prisma.sql`direction = 'inbound'`], ' AND ');
    const where = Prisma.join([...filters, Prisma.sql`direction = 'outbound'`], ' AND ');
    const counts = Prisma.sql`
      count(*)::int AS total,
      count(*) FILTER (WHERE upstream_message_id IS NOT NULL)::int AS sent,
      count(*) FILTER (WHERE status IN ('delivered', 'read') OR delivered_at IS NOT NULL)::int AS delivered,
      count(*) FILTER (WHERE status = 'read')::int AS read,
      count(*) FILTER (WHERE status = 'failed')::int AS failed`;
    const unit = Prisma.raw(`'${f.granularity}'`);
    const step = Prisma.raw(`'1 ${f.granularity}'::interval`);
    const { since, until } = f;

    const [totalsRows, series, failureReasons, templates, pricing, inbound] = await Promise.all([
      this.prisma.$queryRaw<MessageCounts[]>`SELECT ${counts} FROM messages WHERE ${where}`,
      this.prisma.$queryRaw<Array<{ bucket: Date } & Omit<MessageCounts, 'total'>>>`
        WITH buckets AS (
          SELECT generate_series(date_trunc(${unit}, ${since}::timestamptz AT TIME ZONE 'UTC'), ${until}::timestamptz AT TIME ZONE 'UTC', ${step}) AS bucket
        ), agg AS (
          SELECT date_trunc(${unit}, created_at AT TIME ZONE 'UTC') AS bucket, ${counts} FROM messages WHERE ${where} GROUP BY 1
        )
        SELECT b.bucket, coalesce(a.sent, 0)::int AS sent, coalesce(a.delivered, 0)::int AS delivered,
               coalesce(a.read, 0)::int AS read, coalesce(a.failed, 0)::int AS failed
        FROM buckets b LEFT JOIN agg a ON a.bucket = b.bucket
        WHERE b.bucket < ${until}::timestamptz AT TIME ZONE 'UTC'
        ORDER BY b.bucket`,
      this.prisma.$queryRaw<MessageAggregates['failureReasons']>`
        SELECT error_code AS code, error_title AS title, count(*)::int AS count
        FROM messages WHERE ${where} AND status = 'failed'
        GROUP BY error_code, error_title ORDER BY count DESC, code NULLS LAST LIMIT 20`,
      this.prisma.$queryRaw<MessageAggregates['templates']>`
        SELECT template_name AS "templateName", count(*)::int AS total,
          count(*) FILTER (WHERE status IN ('delivered', 'read') OR delivered_at IS NOT NULL)::int AS delivered,
          count(*) FILTER (WHERE status = 'read')::int AS read,
          count(*) FILTER (WHERE status = 'failed')::int AS failed
        FROM messages WHERE ${where} AND template_name IS NOT NULL
        GROUP BY template_name ORDER BY total DESC, template_name LIMIT 100`,
      this.prisma.$queryRaw<MessageAggregates['pricing']>`
        SELECT date_trunc(${unit}, created_at AT TIME ZONE 'UTC') AS bucket, pricing_category AS category, pricing_type AS type, count(*)::int AS count
        FROM messages WHERE ${where} AND (pricing_category IS NOT NULL OR pricing_type IS NOT NULL)
        GROUP BY 1, 2, 3 ORDER BY 1`,
      this.prisma.$queryRaw<Array<{ bucket: Date; count: number }>>`
        SELECT date_trunc(${unit}, created_at AT TIME ZONE 'UTC') AS bucket, count(*)::int AS count
        FROM messages WHERE ${inboundWhere} GROUP BY 1 ORDER BY 1`,
    ]);
    return { totals: totalsRows[0] ?? { total: 0, sent: 0, delivered: 0, read: 0, failed: 0 }, series, failureReasons, templates, pricing, inbound };
  }
}

/**
 * A stored message as the application sees it: the id a number (what the API answers; exact up to 2^53 - 1).
 * Prisma's client reads the bigint id as a bigint, which JSON cannot hold: reads through it convert here
 * (withNumberId); SQL on the pool reads int8 as a number already (PrismaService).
 */
export type StoredMessage = Omit<Message, 'id' | 'campaignId'> & { id: number; campaignId: number | null };

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

export type PendingMessage = Pick<Message, 'apiKeyId' | 'phoneNumberId' | 'to' | 'userId' | 'upstreamApi' | 'type' | 'templateName' | 'templateLanguage'> & { content: unknown };

/** A pending message's columns, in the order of the two insert statements' parameters ($1 … $10). */
const pendingValues = (businessAccountId: string, m: PendingMessage): unknown[] => [
  businessAccountId,
  m.apiKeyId,
  m.phoneNumberId,
  m.to,
  m.type,
  m.templateName,
  m.templateLanguage,
  JSON.stringify(m.content),
  m.userId,
  m.upstreamApi,
];

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
  /** Buckets are `timestamp` (no time zone) values in UTC, read by the pg driver adapter as UTC instants. */
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

/** The filters as SQL on `messages` ($1 is the business account), and a name per shape for prepared statements. */
function whereOf(businessAccountId: string, filter: MessageFilter): SqlFilter {
  return sqlFilter({ sql: 'business_account_id = $1::uuid', value: businessAccountId }, [
    ['direction', '=', filter.direction, 'd'],
    ['status', '=', filter.status, 's'],
    ['"to"', '=', filter.to, 'r'],
    ['user_id', '=', filter.userId, 'i'],
    ['phone_number_id', '=', filter.phoneNumberId, 'p'],
    ['template_name', '=', filter.templateName, 'n'],
    ['type', '=', filter.type, 't'],
    ['campaign_id', '=', filter.campaignId, 'c'],
    ['created_at', '>=', filter.since, 'f'],
    ['created_at', '<', filter.until, 'u'],
  ]);
}

/** A customer's message as the worker stores it (content in the shapes of outbound content). */
export interface InboundMessageRow {
  wabaId: string;
  phoneNumberId: string;
  from: string | null;
  userId: string | null;
  type: string;
  content: unknown;
  wamid: string | null;
}

/** A page of the messages feed; `beyond`: the smallest changed_xid of the account not in the feed yet, if any. */
export interface MessagesFeedPage {
  rows: (StoredMessage & { xid: string })[];
  beyond: bigint | undefined;
}

const MESSAGE_COLUMNS = `id, business_account_id AS "businessAccountId", api_key_id AS "apiKeyId", phone_number_id AS "phoneNumberId",
  "to", direction, "from", user_id AS "userId", upstream_api AS "upstreamApi", type, template_name AS "templateName", template_language AS "templateLanguage", content, status,
  upstream_message_id AS "upstreamMessageId", error_code AS "errorCode", error_title AS "errorTitle",
  error_detail AS "errorDetail", error_category AS "errorCategory", accepted_at AS "acceptedAt", sent_at AS "sentAt",
  delivered_at AS "deliveredAt", read_at AS "readAt", failed_at AS "failedAt", pricing_model AS "pricingModel",
  pricing_category AS "pricingCategory", pricing_type AS "pricingType", pricing_billable AS "pricingBillable",
  campaign_id AS "campaignId", created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * The tenant check of the statements that find a message by id ($1) for its business account ($2). Written so
 * that no index can serve it: only the primary key may find the row. As a plain `business_account_id = $2`, a
 * prepared statement's generic plan, made while `messages` had no statistics yet (a fresh database, before
 * autovacuum's first ANALYZE), used the (business_account_id, to, created_at) index instead and read every
 * message of the account on each send: measured 13.7 M index tuples read for 4,600 sends in a bench run.
 */
const SAME_ACCOUNT = '(business_account_id = $2::uuid) IS TRUE';

function found(row: StoredMessage | undefined, messageId: number): StoredMessage {
  if (!row) throw new Error(`message ${messageId} not found in its business account`);
  return row;
}

/** What the database decides on insert; the rest of a pending row is what was inserted (see pendingRow). */
/** What the database fills in when a message is inserted. */
export interface InsertedRow {
  id: number;
  createdAt: Date;
  updatedAt: Date;
}
const INSERTED_COLUMNS = `id, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** A freshly inserted pending message, without reading back columns whose values we just sent. */
/** A just-inserted pending message as stored, from what was inserted and what the database filled in. */
export function pendingRow(businessAccountId: string, m: PendingMessage, r: InsertedRow): StoredMessage {
  return {
    id: r.id,
    businessAccountId,
    apiKeyId: m.apiKeyId,
    phoneNumberId: m.phoneNumberId,
    to: m.to,
    direction: 'outbound',
    from: null,
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
    pricingModel: null,
    pricingCategory: null,
    pricingType: null,
    pricingBillable: null,
    campaignId: null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

const findOne = statement('find_message', `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1 AND ${SAME_ACCOUNT}`);

/**
 * Customers' messages, each in the business account that owns the receiving WABA (an event of an account not
 * connected here stores no message). Once per wamid (unique): redeliveries and retried chunks insert nothing.
 */
const insertInbound = planned(
  `INSERT INTO messages (business_account_id, phone_number_id, direction, "from", user_id, type, content, status, upstream_message_id, updated_at)
   SELECT b.id, d."phoneNumberId", 'inbound', d."from", d."userId", d.type, d.content, 'received', d.wamid, now()
     FROM jsonb_to_recordset($1::jsonb) AS d("wabaId" text, "phoneNumberId" text, "from" text, "userId" text, type text, content jsonb, wamid text)
     JOIN business_accounts b ON b.waba_id = d."wabaId"
   ON CONFLICT (upstream_message_id) DO NOTHING`,
);

/** Pending messages of concurrent sends, one array per column, in one statement. */
const insertPendingBatch = statement(
  'insert_pending_messages',
  `INSERT INTO messages (business_account_id, api_key_id, phone_number_id, "to", type, template_name, template_language,
                         content, user_id, upstream_api, status, updated_at)
   SELECT b, k, p, t, ty, tn, tl, c, ui, ua, 'pending', now()
     FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[], $9::text[], $10::text[])
          WITH ORDINALITY AS u(b, k, p, t, ty, tn, tl, c, ui, ua, ord)
    ORDER BY ord
   RETURNING ${INSERTED_COLUMNS}`,
);

/** A campaign chunk's pending messages (as insertPendingBatch, with the campaign; no key pair). */
const insertCampaignMessages = statement(
  'insert_campaign_messages',
  `INSERT INTO messages (business_account_id, api_key_id, phone_number_id, "to", type, template_name, template_language,
                         content, user_id, upstream_api, campaign_id, status, updated_at)
   SELECT b, k, p, t, ty, tn, tl, c, ui, ua, $11::bigint, 'pending', now()
     FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[], $9::text[], $10::text[])
          WITH ORDINALITY AS u(b, k, p, t, ty, tn, tl, c, ui, ua, ord)
    ORDER BY ord
   RETURNING id`,
);

/** pending → failed for many messages of one account (only from pending, as markFailed). */
const markFailedBatch = planned(
  `UPDATE messages m SET status = 'failed', failed_at = $3, error_code = u.code, error_title = u.title, error_detail = u.detail,
                         error_category = u.category, updated_at = $3
     FROM unnest($1::bigint[], $4::int[], $5::text[], $6::text[], $7::text[]) AS u(id, code, title, detail, category)
    WHERE m.id = u.id AND (m.status = 'pending' AND m.business_account_id = $2::uuid) IS TRUE`,
);

/**
 * pending → sent for concurrent sends: the ids of the messages it moved. Planned for its arrays each time
 * (`planned`): a generic plan of this join made on a new, small table hash-joins a sequential scan of it. The
 * tenant check is per row, on the message found by its primary key (see SAME_ACCOUNT).
 */
const markSentBatch = planned(
  `UPDATE messages m SET status = 'sent', upstream_message_id = u.wamid, accepted_at = u.at, sent_at = u.at, updated_at = u.at
     FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::timestamptz[]) AS u(id, b, wamid, at)
    WHERE m.id = u.id AND (m.status = 'pending' AND m.business_account_id = u.b) IS TRUE
   RETURNING m.id`,
);

const recordLateAcceptance = statement(
  'record_late_acceptance',
  `UPDATE messages SET upstream_message_id = coalesce(upstream_message_id, $3), accepted_at = coalesce(accepted_at, $4), updated_at = now()
    WHERE id = $1 AND ${SAME_ACCOUNT}
   RETURNING ${MESSAGE_COLUMNS}`,
);

/** The row as updated, or as it was when something else had already moved it off `pending`. */
const markFailed = statement(
  'mark_message_failed',
  `WITH failed AS (
     UPDATE messages SET status = 'failed', failed_at = $3, error_code = $4, error_title = $5, error_detail = $6,
                         error_category = $7, updated_at = $3
      WHERE id = $1 AND status = 'pending' AND ${SAME_ACCOUNT}
     RETURNING ${MESSAGE_COLUMNS}
   )
   SELECT * FROM failed
   UNION ALL
   SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1 AND ${SAME_ACCOUNT} AND NOT EXISTS (SELECT 1 FROM failed)`,
);

/** The claim (idempotency-keys.repository.ts) and the message in one statement: the message only if the claim was taken. */
const insertPendingClaimingKey = statement(
  'insert_pending_message_claiming_key',
  `WITH claim AS (
     ${claimKeySql({ apiKeyId: '$2', key: '$11', requestHash: '$12', now: '$13', lockedUntil: '$14', expiresAt: '$15' })}
   )
   INSERT INTO messages (business_account_id, api_key_id, phone_number_id, "to", type, template_name, template_language,
                         content, user_id, upstream_api, status, updated_at)
   SELECT $1::uuid, $2::uuid, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, 'pending', now() FROM claim
   RETURNING ${INSERTED_COLUMNS}`,
);

/** pending → sent, and the key completed with its outcome (idempotency-keys.repository.ts) only if this moved it. */
const markSentCompletingKey = statement(
  'mark_message_sent_completing_key',
  `WITH sent AS (
     UPDATE messages SET status = 'sent', upstream_message_id = $3, accepted_at = $4, sent_at = $4, updated_at = $4
      WHERE id = $1 AND status = 'pending' AND ${SAME_ACCOUNT}
     RETURNING id
   ), completed AS (
     ${completeKeySql({ apiKeyId: '$5', key: '$6', outcome: '$7', guard: 'EXISTS (SELECT 1 FROM sent)' })}
   )
   SELECT count(*)::int AS sent FROM sent`,
);

/**
 * Planned for its values each time (`planned`): the worker's batches run on a table that may have grown from
 * nothing since its last ANALYZE, and a generic plan made while it was small scans all of it for every chunk
 * (measured: a third of PostgreSQL's CPU in a batch bench). The two ways of finding a message are two index
 * scans whose ids (one array, computed first) are then found by primary key: no ANY over text re-evaluated per
 * row, and no join the planner could turn into a scan of the table.
 */
const lockForStatuses = planned(
  `SELECT m.id, b.waba_id AS "wabaId", m.upstream_message_id AS "upstreamMessageId", m.status,
          m.error_category AS "errorCategory", m.error_code AS "errorCode", m.error_title AS "errorTitle",
          m.error_detail AS "errorDetail", m.sent_at AS "sentAt", m.delivered_at AS "deliveredAt",
          m.read_at AS "readAt", m.failed_at AS "failedAt", m.pricing_model AS "pricingModel",
          m.pricing_category AS "pricingCategory", m.pricing_type AS "pricingType", m.pricing_billable AS "pricingBillable"
     FROM messages m JOIN business_accounts b ON b.id = m.business_account_id
    WHERE m.id = ANY(ARRAY(SELECT x.id FROM messages x WHERE x.upstream_message_id = ANY($1::text[])
                           UNION ALL
                           SELECT x.id FROM messages x WHERE x.id = ANY($2::bigint[]) AND x.upstream_message_id IS NULL))
    ORDER BY m.id
      FOR UPDATE OF m`,
);

/** Planned for its values each time, as lockForStatuses. */
const writeStatuses = planned(
  `UPDATE messages m
      SET status = v.status, error_category = v."errorCategory", error_code = v."errorCode", error_title = v."errorTitle",
          error_detail = v."errorDetail", sent_at = v."sentAt", delivered_at = v."deliveredAt", read_at = v."readAt",
          failed_at = v."failedAt", upstream_message_id = v."upstreamMessageId", pricing_model = v."pricingModel",
          pricing_category = v."pricingCategory", pricing_type = v."pricingType", pricing_billable = v."pricingBillable",
          updated_at = now()
     FROM jsonb_to_recordset($1::jsonb) AS v(id bigint, status text, "errorCategory" text, "errorCode" int, "errorTitle" text,
          "errorDetail" text, "sentAt" timestamptz, "deliveredAt" timestamptz, "readAt" timestamptz, "failedAt" timestamptz,
          "upstreamMessageId" text, "pricingModel" text, "pricingCategory" text, "pricingType" text, "pricingBillable" boolean)
    WHERE m.id = v.id AND m.id = ANY($2::bigint[])`,
);
