import { Injectable } from '@nestjs/common';
import { GroupCommit } from '../core/async/group-commit.js';
import { Db, type Tx } from '../core/db/db.js';
import { feedRows } from '../core/db/feed.js';
import { skipTake } from '../core/rows/page.js';
import type { FeedPosition } from '../events/feed-cursor.js';
import { changeColumns, distinctChanges, type UserIdChange } from '../accounts/users/user-id-change.js';
import { messageAnalytics, type AnalyticsFilter, type MessageAggregates } from './statements/analytics.js';
import { insertCampaignMessages, markFailedBatch } from './statements/campaigns.js';
import { addressesOf, eraseContactBatch, pageOfContact, scrubContentBatch } from './statements/contacts.js';
import { INBOUND_INSERT, insertInbound, type InboundMessageRow } from './statements/inbound.js';
import {
  countOf,
  feedOf,
  findOne,
  pageOf,
  type MessageFilter,
  type MessagesFeedPage,
  type StoredMessage,
} from './statements/reads.js';
import {
  insertPendingBatch,
  insertPendingClaimingKey,
  markFailed,
  markSentBatch,
  markSentCompletingKey,
  pendingColumns,
  pendingRow,
  recordLateAcceptance,
  type KeyClaim,
  type KeyCompletion,
  type MessageFailure,
  type PendingMessage,
} from './statements/send.js';
import { followUsers, lockForStatuses, writeStatuses, type StatusCandidate } from './statements/statuses.js';
import { GenerateSql, Sample } from '../core/db/generate-sql.js';

export type { AnalyticsFilter, MessageAggregates, MessageCounts } from './statements/analytics.js';
export type { InboundMessageRow } from './statements/inbound.js';
export type { MessageFilter, MessagesFeedPage, StoredMessage } from './statements/reads.js';
export { pendingRow } from './statements/send.js';
export type { InsertedRow, KeyClaim, KeyCompletion, MessageFailure, PendingMessage } from './statements/send.js';
export type { LockedMessage, StatusCandidate } from './statements/statuses.js';

/**
 * The one owner of the `messages` table: every statement that reads or writes it runs through here. The statements
 * themselves live by path in ./statements/ (send, statuses, inbound, reads and feeds, campaigns, analytics, contacts),
 * their SQL beside them in ./statements/queries/; the send path's are prepared statements (core/db/statement.ts). Tenant scope: the business account is the first argument of every method, and part of
 * every WHERE, so a forgotten scope is a type error rather than a leak.
 * Status webhooks (the worker) lock and write messages in the worker's transaction (a Tx).
 */
@Injectable()
export class MessagesRepository {
  /**
   * The two writes of every send (pending, then sent) of concurrent sends go to PostgreSQL together: one
   * statement and one commit per batch instead of per send (group commit without a wait, see GroupCommit).
   * Each send still gets its answer only after the commit that holds its row. A batch belongs to all its callers, so
   * it runs outside any caller's unit of work (Db.outside).
   */
  private readonly pendingInserts = new GroupCommit<{ businessAccountId: string; m: PendingMessage }, StoredMessage>(
    (items) => Db.outside(() => this.insertPendingBatch(items)),
    SEND_BATCHING,
  );
  private readonly sentMarks = new GroupCommit<SentMark, boolean>(
    (marks) => Db.outside(() => this.markSentBatch(marks)),
    SEND_BATCHING,
  );

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
    // The statement locks its rows in id order itself, as the worker's status chunks do (lockedInIdOrder).
    const params = {
      ids: marks.map((s) => s.messageId),
      businessAccountIds: marks.map((s) => s.businessAccountId),
      wamids: marks.map((s) => s.wamid),
      ats: marks.map((s) => s.at),
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
    const params = {
      ids: marks.map((s) => s.messageId),
      businessAccountIds: marks.map(() => businessAccountId),
      wamids: marks.map((s) => s.wamid),
      ats: marks.map((s) => s.at),
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
    const params = {
      ids: failures.map((f) => f.messageId),
      businessAccountId,
      at,
      codes: failures.map((f) => f.error.code),
      titles: failures.map((f) => f.error.title),
      details: failures.map((f) => f.error.detail),
      categories: failures.map((f) => f.error.category),
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
   * The messages of a previous business-scoped user id are the next one's (Meta's user id changes): sends to it and
   * its inbound messages are listed under the new id. Phone numbers a message was sent to or from stay as they were.
   */
  async followUsers(tx: Tx, changes: UserIdChange[]): Promise<void> {
    const distinct = distinctChanges(changes).filter((c) => !/^\d+$/.test(c.previous));
    if (distinct.length === 0) return;
    await this.db.exec(followUsers, changeColumns(distinct), tx);
  }

  /**
   * Stores customers' messages as inbound messages of the business account that received them, in the caller's
   * transaction (the one that stores their events). Once per wamid: a redelivery, a retried chunk or a second
   * worker inserts nothing (the unique upstream_message_id). Returns how many rows this call inserted.
   */
  async insertInbound(tx: Tx, rows: InboundMessageRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const { rowCount } = await this.db.exec(insertInbound, { rows: INBOUND_INSERT.json(rows) }, tx);
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
    // Lag-tolerant (the read replica when there is one): GET /messages/:id, the feed and every read of the send path
    // stay on the primary.
    return this.db.lagTolerant((db) =>
      db.snapshot(async (tx) => {
        const { rows } = await db.exec(pageOf(params), params, tx);
        const { rows: counted } = await db.exec(countOf(counting), counting, tx);
        const n = Number(counted[0]?.n ?? 0);
        return { rows, total: Math.min(n, countLimit), totalIsLowerBound: n > countLimit };
      }),
    );
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
  @GenerateSql(
    { name: 'no filter', params: [Sample.UUID, { since: Sample.DATE, until: Sample.DATE, granularity: 'day' }] },
    {
      name: 'every filter',
      params: [
        Sample.UUID,
        {
          since: Sample.DATE,
          until: Sample.DATE,
          granularity: 'hour',
          phoneNumberId: Sample.PHONE,
          templateName: Sample.STRING,
          type: 'template',
        },
      ],
    },
  )
  analytics(businessAccountId: string, f: AnalyticsFilter): Promise<MessageAggregates> {
    return this.db.lagTolerant((db) => messageAnalytics(db.on(), businessAccountId, f));
  }

  // ---- One contact's messages (src/contacts: export, erasure) and content retention (src/retention) ----------

  /** Every address the account's messages pair with these: a phone number's user id, a user id's phone number. */
  @GenerateSql({ params: [Sample.UUID, [Sample.PHONE]] })
  addressesOf(businessAccountId: string, addresses: string[]): Promise<string[]> {
    return addressesOf(this.db.on(), businessAccountId, addresses);
  }

  /** The contact's messages after message `afterId`, oldest first, inside the reader's window. */
  @GenerateSql(
    { name: 'no window', params: [Sample.UUID, [Sample.PHONE], { afterId: 0, limit: 100 }] },
    {
      name: 'a window',
      params: [Sample.UUID, [Sample.PHONE], { afterId: 0, limit: 100, since: Sample.DATE, until: Sample.DATE }],
    },
  )
  pageOfContact(
    businessAccountId: string,
    addresses: string[],
    q: { afterId: number; limit: number; since?: Date; until?: Date },
  ): Promise<StoredMessage[]> {
    return pageOfContact(this.db.on(), businessAccountId, addresses, q);
  }

  /** Content retention: up to `limit` messages' content scrubbed in `tx` (see statements/contacts.ts); how many. */
  @GenerateSql({ params: [Sample.TX, [Sample.UUID], { since: null, before: Sample.DATE }, 500], rows: Sample.FOUND })
  scrubContentBatch(
    tx: Tx,
    businessAccountIds: string[],
    range: { since: Date | null; before: Date },
    limit: number,
  ): Promise<number> {
    return scrubContentBatch(this.db.on(tx), businessAccountIds, range, limit);
  }

  /** Erasure: up to `limit` of the contact's messages erased in `tx` (see statements/contacts.ts); their wamids. */
  @GenerateSql({ params: [Sample.TX, Sample.UUID, [Sample.PHONE], 500], rows: Sample.FOUND })
  eraseContactBatch(
    tx: Tx,
    businessAccountId: string,
    addresses: string[],
    limit: number,
  ): Promise<{ count: number; wamids: string[] }> {
    return eraseContactBatch(this.db.on(tx), businessAccountId, addresses, limit);
  }
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

function found(row: StoredMessage | undefined, messageId: number): StoredMessage {
  if (!row) throw new Error(`message ${messageId} not found in its business account`);
  return row;
}
