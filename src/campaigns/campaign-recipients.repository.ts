import { Injectable } from '@nestjs/common';
import { PrismaService, safeInteger } from '../core/prisma/prisma.service.js';
import { connectionOf, planned, statement, type Tx } from '../core/prisma/sql.js';
import { clientOf } from '../core/prisma/unit-of-work.js';

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
export const RECIPIENT_STATUSES = ['pending', 'sending', 'sent', 'delivered', 'read', 'failed', 'skipped', 'cancelled'] as const;
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
 * The status a recipient shows, as SQL over `r` (campaign_recipients) and `m` (its message, LEFT JOINed): the one
 * place where a recipient's state and its message's status are combined (counts, list, filter).
 */
const STATUS_SQL = `CASE WHEN r.state <> 'claimed' THEN r.state WHEN m.status IS NULL OR m.status = 'pending' THEN 'sending' ELSE m.status END`;

/**
 * The oldest pending recipients, claimed for this runner (attempts + 1): SKIP LOCKED, so two runners (or a runner and a
 * cancel) never take the same row, and a row is claimed once per attempt.
 */
const claim = statement(
  'campaign_recipients_claim',
  `UPDATE campaign_recipients r SET state = 'claimed', claimed_by = $2, claimed_at = now(), attempts = r.attempts + 1
     FROM (SELECT id FROM campaign_recipients WHERE campaign_id = $1 AND state = 'pending' ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED) c
    WHERE r.id = c.id
   RETURNING r.id::text AS id, r."to", r.user_id AS "userId", r.components, r.attempts`,
);

const attachMessages = planned(
  `UPDATE campaign_recipients r SET message_id = u.message_id
     FROM unnest($1::bigint[], $2::bigint[]) AS u(id, message_id)
    WHERE r.id = u.id`,
);

const skip = planned(
  `UPDATE campaign_recipients r SET state = 'skipped', skip_reason = u.reason
     FROM unnest($1::bigint[], $2::text[]) AS u(id, reason)
    WHERE r.id = u.id AND r.state = 'claimed'`,
);

/**
 * Back to pending (Meta refused the pace, a transient error, a pause before their turn), or cancelled when the
 * campaign was: only rows still claimed by this runner.
 */
const requeue = statement(
  'campaign_recipients_requeue',
  `UPDATE campaign_recipients SET state = $3, claimed_by = NULL, claimed_at = NULL
    WHERE id = ANY($1::bigint[]) AND state = 'claimed' AND claimed_by = $2`,
);

const hasPending = statement('campaign_recipients_has_pending', `SELECT EXISTS (SELECT 1 FROM campaign_recipients WHERE campaign_id = $1 AND state = 'pending') AS pending`);

/** Claimed recipients whose message is still pending: the runner's own in flight, or those of a runner that died. */
const unsettled = statement(
  'campaign_recipients_unsettled',
  `SELECT r.id::text AS id, r.message_id::text AS "messageId", r.claimed_by AS "claimedBy", r.claimed_at AS "claimedAt"
     FROM campaign_recipients r JOIN messages m ON m.id = r.message_id
    WHERE r.campaign_id = $1 AND r.state = 'claimed' AND m.status = 'pending'
    ORDER BY r.id LIMIT $2`,
);

/**
 * The one owner of `campaign_recipients`. Creation, cancel and retry-failed run on Prisma's client (the console's
 * unit of work, with the audit entry); the runner's claims are SQL on the pool, in its transaction. The list and
 * counts read each recipient's message status (`messages`, by primary key) beside it: see STATUS_SQL.
 */
@Injectable()
export class CampaignRecipientsRepository {
  constructor(private readonly prisma: PrismaService) {}

  // ---- Console (in the caller's unit of work) -----------------------------------------------------------------

  /** Every recipient of a new campaign in one statement, positions in the order given. */
  async insertAll(campaignId: number, recipients: NewRecipient[]): Promise<void> {
    await clientOf(this.prisma).$executeRawUnsafe(
      `INSERT INTO campaign_recipients (campaign_id, position, "to", user_id, components)
       SELECT $1::bigint, r.ord - 1, r.v->>'to', r.v->>'userId', r.v->'components'
         FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS r(v, ord)`,
      String(campaignId),
      JSON.stringify(recipients),
    );
  }

  /** A cancel: every recipient not claimed yet will never be sent. */
  async cancelPending(campaignId: number): Promise<number> {
    return clientOf(this.prisma).$executeRawUnsafe(`UPDATE campaign_recipients SET state = 'cancelled' WHERE campaign_id = $1::bigint AND state = 'pending'`, String(campaignId));
  }

  /**
   * Retry-failed: recipients whose latest message failed (and not while it is being resent) go back to pending, with
   * a fresh attempt budget; their failed messages stay as they are (every attempt leaves a message).
   */
  async requeueFailed(campaignId: number): Promise<number> {
    return clientOf(this.prisma).$executeRawUnsafe(
      `UPDATE campaign_recipients r SET state = 'pending', claimed_by = NULL, claimed_at = NULL, attempts = 0
         FROM messages m
        WHERE r.campaign_id = $1::bigint AND r.state = 'claimed' AND m.id = r.message_id AND m.status = 'failed'`,
      String(campaignId),
    );
  }

  /** How many recipients show each status (RECIPIENT_STATUSES), zeros included. */
  async counts(campaignId: number): Promise<Record<RecipientStatus, number>> {
    const rows = await clientOf(this.prisma).$queryRawUnsafe<{ status: RecipientStatus; n: number }[]>(
      `SELECT ${STATUS_SQL} AS status, count(*)::int AS n
         FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
        WHERE r.campaign_id = $1::bigint GROUP BY 1`,
      String(campaignId),
    );
    const counts = Object.fromEntries(RECIPIENT_STATUSES.map((s) => [s, 0])) as Record<RecipientStatus, number>;
    for (const r of rows) counts[r.status] = Number(r.n);
    return counts;
  }

  /** A page in the order given, optionally only those showing `status`, and the total. */
  async page(campaignId: number, status: RecipientStatus | undefined, page: { page: number; limit: number }): Promise<{ rows: RecipientRow[]; total: number }> {
    const db = clientOf(this.prisma);
    const where = `r.campaign_id = $1::bigint${status ? ` AND ${STATUS_SQL} = $2::text` : ''}`;
    const filter = status ? [status] : [];
    const n = filter.length + 1;
    const [rows, counted] = await Promise.all([
      db.$queryRawUnsafe<(Omit<RecipientRow, 'id' | 'messageId'> & { id: string; messageId: string | null })[]>(
        `SELECT r.id::text AS id, r.position, r."to", r.user_id AS "userId", ${STATUS_SQL} AS status, r.attempts, r.skip_reason AS "skipReason",
                r.message_id::text AS "messageId", m.upstream_message_id AS "upstreamMessageId", m.error_code AS "errorCode",
                m.error_title AS "errorTitle", m.error_detail AS "errorDetail", m.error_category AS "errorCategory"
           FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
          WHERE ${where} ORDER BY r.position LIMIT $${n + 1} OFFSET $${n + 2}`,
        String(campaignId), ...filter, page.limit, (page.page - 1) * page.limit,
      ),
      db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id WHERE ${where}`, String(campaignId), ...filter),
    ]);
    return {
      rows: rows.map((r) => ({ ...r, id: safeInteger(r.id), messageId: r.messageId === null ? null : safeInteger(r.messageId) })),
      total: Number(counted[0]?.n ?? 0),
    };
  }

  // ---- The runner (worker) ------------------------------------------------------------------------------------

  async claim(tx: Tx, campaignId: number, owner: string, limit: number): Promise<ClaimedRecipient[]> {
    const { rows } = await connectionOf(tx).query<Omit<ClaimedRecipient, 'id'> & { id: string }>(claim([campaignId, owner, limit]));
    return rows.map((r) => ({ ...r, id: safeInteger(r.id) })).sort((a, b) => a.id - b.id);
  }

  async attachMessages(tx: Tx, recipientIds: number[], messageIds: number[]): Promise<void> {
    if (recipientIds.length > 0) await connectionOf(tx).query(attachMessages([recipientIds, messageIds]));
  }

  async skip(tx: Tx, recipientIds: number[], reasons: string[]): Promise<void> {
    if (recipientIds.length > 0) await connectionOf(tx).query(skip([recipientIds, reasons]));
  }

  async requeue(tx: Tx, recipientIds: number[], owner: string, to: 'pending' | 'cancelled'): Promise<void> {
    if (recipientIds.length > 0) await connectionOf(tx).query(requeue([recipientIds, owner, to]));
  }

  async hasPending(campaignId: number): Promise<boolean> {
    const { rows } = await this.prisma.pool.query<{ pending: boolean }>(hasPending([campaignId]));
    return rows[0]?.pending ?? false;
  }

  async unsettled(campaignId: number, limit = 5000): Promise<UnsettledRecipient[]> {
    const { rows } = await this.prisma.pool.query<{ id: string; messageId: string; claimedBy: string | null; claimedAt: Date }>(unsettled([campaignId, limit]));
    return rows.map((r) => ({ ...r, id: safeInteger(r.id), messageId: safeInteger(r.messageId) }));
  }

}
