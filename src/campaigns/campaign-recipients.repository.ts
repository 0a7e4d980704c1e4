import { Injectable } from '@nestjs/common';
import { expressionBuilder } from 'kysely';
import type { Database } from '../core/db/database.js';
import { Db, type Tx } from '../core/db/db.js';
import { now, typed, unnest } from '../core/db/pg.js';
import { prepared } from '../core/db/statement.js';
import { skipTake } from '../core/rows/page.js';
import { GenerateSql, Sample } from '../core/db/generate-sql.js';

/** A recipient as given at creation: a phone number (`to`) or a business-scoped user id, and its template parameters. */
export interface NewRecipient {
  to: string | null;
  userId: string | null;
  components: unknown[] | null;
}

/** A recipient claimed by a runner: its message is created in the same transaction. */
export interface ClaimedRecipient {
  id: number;
  to: string | null;
  userId: string | null;
  components: unknown[] | null;
  attempts: number;
}

/**
 * What a recipient shows: its own state until claimed, then its (latest) message's status (`sending` while that
 * message is still pending), and Meta's error when it failed.
 */
export const RECIPIENT_STATUSES = [
  'pending',
  'sending',
  'sent',
  'delivered',
  'read',
  'failed',
  'skipped',
  'cancelled',
] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export interface RecipientRow {
  id: number;
  position: number;
  to: string | null;
  userId: string | null;
  status: RecipientStatus;
  attempts: number;
  skipReason: string | null;
  messageId: number | null;
  upstreamMessageId: string | null;
  errorCode: number | null;
  errorTitle: string | null;
  errorDetail: string | null;
  errorCategory: string | null;
}

/** A claimed recipient whose message is still pending (no answer stored, no status webhook yet). */
export interface UnsettledRecipient {
  id: number;
  messageId: number;
  claimedBy: string | null;
  claimedAt: Date;
}

/**
 * The status a recipient shows, over `r` (campaign_recipients) and `m` (its message, LEFT JOINed): the one place
 * where a recipient's state and its message's status are combined (counts, list, filter).
 */
const shown = expressionBuilder<{ r: Database['campaign_recipients']; m: Database['messages'] }, 'r' | 'm'>();
const STATUS = shown
  .case()
  .when('r.state', '<>', 'claimed')
  .then(shown.ref('r.state'))
  .when(shown.or([shown('m.status', 'is', null), shown('m.status', '=', 'pending')]))
  .then('sending')
  .else(shown.ref('m.status'))
  .end()
  .$castTo<RecipientStatus>();

/**
 * The oldest pending recipients, claimed for this runner (attempts + 1): SKIP LOCKED, so two runners (or a runner and a
 * cancel) never take the same row, and a row is claimed once per attempt.
 */
const claim = prepared('campaign_recipients_claim', (db, p: { campaignId: number; owner: string; limit: number }) =>
  db
    .updateTable('campaign_recipients as r')
    .from(
      db
        .selectFrom('campaign_recipients')
        .select('id')
        .where('campaign_id', '=', p.campaignId)
        .where('state', '=', 'pending')
        .orderBy('id')
        .limit(p.limit)
        .forUpdate()
        .skipLocked()
        .as('c'),
    )
    .set((eb) => ({ state: 'claimed', claimed_by: p.owner, claimed_at: now(), attempts: eb('r.attempts', '+', 1) }))
    .whereRef('r.id', '=', 'c.id')
    .returning(['r.id', 'r.to', 'r.user_id as userId', 'r.components', 'r.attempts'])
    .$castTo<ClaimedRecipient>(),
);

const attachMessages = prepared(
  'campaign_recipients_attach_messages',
  (db, p: { id: number[]; messageId: number[] }) =>
    db
      .updateTable('campaign_recipients as r')
      .from(unnest('u', { id: 'bigint', messageId: 'bigint' }, p))
      .set((eb) => ({ message_id: eb.ref('u.messageId') }))
      .whereRef('r.id', '=', 'u.id'),
  { planned: true },
);

const skip = prepared(
  'campaign_recipients_skip',
  (db, p: { id: number[]; reason: string[] }) =>
    db
      .updateTable('campaign_recipients as r')
      .from(unnest('u', { id: 'bigint', reason: 'text' }, p))
      .set((eb) => ({ state: 'skipped', skip_reason: eb.ref('u.reason') }))
      .whereRef('r.id', '=', 'u.id')
      .where('r.state', '=', 'claimed'),
  { planned: true },
);

/**
 * Back to pending (Meta refused the pace, a transient error, a pause before their turn), or cancelled when the
 * campaign was: only rows still claimed by this runner.
 */
const requeue = prepared(
  'campaign_recipients_requeue',
  (db, p: { ids: number[]; owner: string; to: 'pending' | 'cancelled' }) =>
    db
      .updateTable('campaign_recipients')
      .set({ state: p.to, claimed_by: null, claimed_at: null })
      .where((eb) => eb('id', '=', eb.fn.any(eb.val(p.ids))))
      .where('state', '=', 'claimed')
      .where('claimed_by', '=', p.owner),
);

const hasPending = prepared('campaign_recipients_has_pending', (db, p: { campaignId: number }) =>
  db.selectNoFrom((eb) =>
    eb
      .exists(
        eb
          .selectFrom('campaign_recipients')
          .select(eb.lit(1).as('one'))
          .where('campaign_id', '=', p.campaignId)
          .where('state', '=', 'pending'),
      )
      .$castTo<boolean>()
      .as('pending'),
  ),
);

/** Claimed recipients whose message is still pending: the runner's own in flight, or those of a runner that died. */
const unsettled = prepared('campaign_recipients_unsettled', (db, p: { campaignId: number; limit: number }) =>
  db
    .selectFrom('campaign_recipients as r')
    .innerJoin('messages as m', 'm.id', 'r.message_id')
    .select(['r.id', 'r.message_id as messageId', 'r.claimed_by as claimedBy', 'r.claimed_at as claimedAt'])
    .where('r.campaign_id', '=', p.campaignId)
    .where('r.state', '=', 'claimed')
    .where('m.status', '=', 'pending')
    .orderBy('r.id')
    .limit(p.limit)
    .$castTo<UnsettledRecipient>(),
);

/**
 * The one owner of `campaign_recipients`. Creation, cancel and retry-failed join the console's unit of work (with the
 * audit entry); the runner's claims are named prepared statements, in its transaction. The list and counts read each
 * recipient's message status (`messages`, by primary key) beside it: see STATUS.
 */
@Injectable()
export class CampaignRecipientsRepository {
  constructor(private readonly db: Db) {}

  // ---- Console (in the caller's unit of work) -----------------------------------------------------------------

  /** Every recipient of a new campaign in one statement, positions in the order given. */
  @GenerateSql({ params: [Sample.NUMBER, [{ to: Sample.PHONE, userId: null, components: null }]] })
  async insertAll(campaignId: number, recipients: NewRecipient[]): Promise<void> {
    if (recipients.length === 0) return;
    const db = this.db.on();
    await db
      .insertInto('campaign_recipients')
      .columns(['campaign_id', 'position', 'to', 'user_id', 'components'])
      .expression(
        db
          .selectFrom(
            unnest(
              'r',
              { to: 'text', userId: 'text', components: 'jsonb' },
              {
                to: recipients.map((r) => r.to),
                userId: recipients.map((r) => r.userId),
                // Each as JSON text (node-postgres would read a nested array as more dimensions of the jsonb[]).
                components: recipients.map((r) => (r.components === null ? null : JSON.stringify(r.components))),
              },
              'ord',
            ),
          )
          .select((eb) => [
            typed(campaignId, 'bigint').as('campaign_id'),
            eb('r.ord', '-', 1).as('position'),
            'r.to',
            'r.userId',
            'r.components',
          ]),
      )
      .execute();
  }

  /** A cancel: every recipient not claimed yet will never be sent. */
  @GenerateSql(
    { name: 'one campaign', params: [Sample.NUMBER] },
    { name: 'several campaigns', params: [[Sample.NUMBER, 2]] },
  )
  async cancelPending(campaignId: number | number[]): Promise<number> {
    const ids = ([] as number[]).concat(campaignId);
    if (ids.length === 0) return 0;
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('campaign_recipients')
      .set({ state: 'cancelled' })
      .where('campaign_id', 'in', ids)
      .where('state', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(numUpdatedRows);
  }

  /**
   * Retry-failed: recipients whose latest message failed (and not while it is being resent) go back to pending, with
   * a fresh attempt budget; their failed messages stay as they are (every attempt leaves a message).
   */
  @GenerateSql({ params: [Sample.NUMBER] })
  async requeueFailed(campaignId: number): Promise<number> {
    const { numUpdatedRows } = await this.db
      .on()
      .updateTable('campaign_recipients as r')
      .from('messages as m')
      .set({ state: 'pending', claimed_by: null, claimed_at: null, attempts: 0 })
      .where('r.campaign_id', '=', campaignId)
      .where('r.state', '=', 'claimed')
      .whereRef('m.id', '=', 'r.message_id')
      .where('m.status', '=', 'failed')
      .executeTakeFirstOrThrow();
    return Number(numUpdatedRows);
  }

  /** How many recipients show each status (RECIPIENT_STATUSES), zeros included. */
  @GenerateSql({ params: [Sample.NUMBER] })
  async counts(campaignId: number): Promise<Record<RecipientStatus, number>> {
    // Grouped by the column of a subquery: the CASE's constants are parameters, so GROUP BY could not name it again.
    const rows = await this.db
      .on()
      .selectFrom(this.withMessages(campaignId).select(STATUS.as('status')).as('s'))
      .select((eb) => ['s.status', eb.fn.countAll<number>().as('n')])
      .groupBy('s.status')
      .execute();
    const counts = Object.fromEntries(RECIPIENT_STATUSES.map((s) => [s, 0])) as Record<RecipientStatus, number>;
    for (const r of rows) counts[r.status] = r.n;
    return counts;
  }

  /** A page in the order given, optionally only those showing `status`, and the total. */
  @GenerateSql(
    { name: 'every status', params: [Sample.NUMBER, undefined, Sample.PAGE] },
    { name: 'one status', params: [Sample.NUMBER, 'failed', Sample.PAGE] },
  )
  async page(
    campaignId: number,
    status: RecipientStatus | undefined,
    page: { page: number; limit: number },
  ): Promise<{ rows: RecipientRow[]; total: number }> {
    let recipients = this.withMessages(campaignId);
    if (status) recipients = recipients.where(STATUS, '=', status);
    const { skip, take } = skipTake(page);
    const [rows, counted] = await Promise.all([
      recipients
        .select([
          'r.id',
          'r.position',
          'r.to',
          'r.user_id as userId',
          STATUS.as('status'),
          'r.attempts',
          'r.skip_reason as skipReason',
          'r.message_id as messageId',
          'm.upstream_message_id as upstreamMessageId',
          'm.error_code as errorCode',
          'm.error_title as errorTitle',
          'm.error_detail as errorDetail',
          'm.error_category as errorCategory',
        ])
        .orderBy('r.position')
        .limit(take)
        .offset(skip)
        .execute(),
      recipients.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: counted.n };
  }

  // ---- The runner (worker) ------------------------------------------------------------------------------------

  async claim(tx: Tx, campaignId: number, owner: string, limit: number): Promise<ClaimedRecipient[]> {
    const { rows } = await this.db.exec(claim, { campaignId, owner, limit }, tx);
    return rows.sort((a, b) => a.id - b.id);
  }

  async attachMessages(tx: Tx, recipientIds: number[], messageIds: number[]): Promise<void> {
    if (recipientIds.length > 0) await this.db.exec(attachMessages, { id: recipientIds, messageId: messageIds }, tx);
  }

  async skip(tx: Tx, recipientIds: number[], reasons: string[]): Promise<void> {
    if (recipientIds.length > 0) await this.db.exec(skip, { id: recipientIds, reason: reasons }, tx);
  }

  async requeue(tx: Tx, recipientIds: number[], owner: string, to: 'pending' | 'cancelled'): Promise<void> {
    if (recipientIds.length > 0) await this.db.exec(requeue, { ids: recipientIds, owner, to }, tx);
  }

  async hasPending(campaignId: number): Promise<boolean> {
    const { rows } = await this.db.exec(hasPending, { campaignId });
    return rows[0]?.pending ?? false;
  }

  async unsettled(campaignId: number, limit = 5000): Promise<UnsettledRecipient[]> {
    const { rows } = await this.db.exec(unsettled, { campaignId, limit });
    return rows;
  }

  // ---- One contact's memberships (src/contacts: export, erasure) ---------------------------------------------------

  /** The account's campaigns that list one of these addresses, with the recipient's state and message. */
  @GenerateSql({ params: [Sample.UUID, [Sample.PHONE]] })
  async ofContact(
    businessAccountId: string,
    addresses: string[],
  ): Promise<
    {
      campaignId: number;
      campaignName: string;
      templateName: string;
      createdAt: Date;
      to: string | null;
      userId: string | null;
      components: unknown;
      state: string;
      skipReason: string | null;
      messageId: number | null;
    }[]
  > {
    return this.db
      .on()
      .selectFrom('campaign_recipients as r')
      .innerJoin('campaigns as c', 'c.id', 'r.campaign_id')
      .select([
        'c.id as campaignId',
        'c.name as campaignName',
        'c.template_name as templateName',
        'c.created_at as createdAt',
        'r.to',
        'r.user_id as userId',
        'r.components',
        'r.state',
        'r.skip_reason as skipReason',
        'r.message_id as messageId',
      ])
      .where('c.business_account_id', '=', businessAccountId)
      .where((eb) =>
        eb.or([eb('r.to', '=', eb.fn.any(eb.val(addresses))), eb('r.user_id', '=', eb.fn.any(eb.val(addresses)))]),
      )
      .orderBy('r.id')
      .limit(10_000)
      .execute();
  }

  /**
   * Removes the contact from the account's campaigns, in the caller's transaction: the address and parameters go, the
   * row stays (the campaign's counts); a recipient not sent yet is skipped (`erased`). Returns how many.
   */
  @GenerateSql({ params: [Sample.TX, Sample.UUID, [Sample.PHONE]] })
  async eraseContact(tx: Tx, businessAccountId: string, addresses: string[]): Promise<number> {
    const { numUpdatedRows } = await this.db
      .on(tx)
      .updateTable('campaign_recipients')
      .set((eb) => ({
        to: null,
        user_id: null,
        components: null,
        skip_reason: eb.case().when('state', '=', 'pending').then('erased').else(eb.ref('skip_reason')).end(),
        state: eb.case().when('state', '=', 'pending').then('skipped').else(eb.ref('state')).end(),
      }))
      .where('campaign_id', 'in', (eb) =>
        eb.selectFrom('campaigns').select('id').where('business_account_id', '=', businessAccountId),
      )
      .where((eb) =>
        eb.or([eb('to', '=', eb.fn.any(eb.val(addresses))), eb('user_id', '=', eb.fn.any(eb.val(addresses)))]),
      )
      .executeTakeFirstOrThrow();
    return Number(numUpdatedRows);
  }

  /** The campaign's recipients (`r`) with their messages (`m`, when they have one). */
  private withMessages(campaignId: number) {
    return this.db
      .on()
      .selectFrom('campaign_recipients as r')
      .leftJoin('messages as m', 'm.id', 'r.message_id')
      .where('r.campaign_id', '=', campaignId);
  }
}
