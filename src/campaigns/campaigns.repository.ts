import { Injectable } from '@nestjs/common';
import { PrismaService, safeInteger } from '../core/prisma/prisma.service.js';
import { connectionOf, statement, type Tx } from '../core/prisma/sql.js';
import { clientOf } from '../core/prisma/unit-of-work.js';

export const CAMPAIGN_STATUSES = ['running', 'paused', 'cancelled', 'completed'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** A campaign as stored (the id a number, as the API shows it). */
export interface CampaignRow {
  id: number;
  businessAccountId: string;
  name: string;
  phoneNumberId: string;
  templateName: string;
  templateLanguage: string;
  templateCategory: string | null;
  upstreamApi: string;
  status: CampaignStatus;
  statusReason: string | null;
  total: number;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  /** Bumped by every start, resume and retry-failed: each run's queue job has its own id. */
  run: number;
}

export type NewCampaign = Pick<CampaignRow, 'name' | 'phoneNumberId' | 'templateName' | 'templateLanguage' | 'templateCategory' | 'upstreamApi' | 'total' | 'createdById'>;

/** The columns of a CampaignRow, of the table under alias `t` (or unqualified). */
const columnsOf = (t = '') => {
  const c = (name: string) => `${t ? `${t}.` : ''}${name}`;
  return `${c('id')}::text AS id, ${c('business_account_id')} AS "businessAccountId", ${c('name')} AS name, ${c('phone_number_id')} AS "phoneNumberId",
  ${c('template_name')} AS "templateName", ${c('template_language')} AS "templateLanguage", ${c('template_category')} AS "templateCategory",
  ${c('upstream_api')} AS "upstreamApi", ${c('status')} AS status, ${c('status_reason')} AS "statusReason", ${c('total')} AS total, ${c('created_by_id')} AS "createdById",
  ${c('created_at')} AS "createdAt", ${c('updated_at')} AS "updatedAt", ${c('completed_at')} AS "completedAt", ${c('run')} AS run`;
};
const COLUMNS = columnsOf();

const rowOf = (r: Omit<CampaignRow, 'id'> & { id: string | number }): CampaignRow => ({ ...r, id: safeInteger(String(r.id)) });

/**
 * A lease: the runner that holds the campaign (its token) until lease_until, renewed while it runs. Taken when free,
 * expired (the holder died), or already this runner's. `previousOwner`: who held it before (a dead runner's claims
 * are then looked at).
 */
const acquireLease = statement(
  'campaign_acquire_lease',
  `WITH old AS (SELECT id, lease_owner FROM campaigns WHERE id = $1 FOR UPDATE)
   UPDATE campaigns c SET lease_owner = $2, lease_until = now() + make_interval(secs => $3::float8 / 1000)
     FROM old
    WHERE c.id = old.id AND c.status = 'running' AND (c.lease_owner IS NULL OR c.lease_owner = $2 OR c.lease_until < now())
   RETURNING ${columnsOf('c')}, old.lease_owner AS "previousOwner"`,
);

/** The runner keeps its lease; what the campaign's status is now (null: the lease is someone else's). */
const renewLease = statement(
  'campaign_renew_lease',
  `UPDATE campaigns SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
    WHERE id = $1 AND lease_owner = $2
   RETURNING status, run`,
);

/**
 * Taken by every claim, in the claim's transaction: a pause or cancel (which updates the row) waits for a claim in
 * progress and every later claim sees it, so nothing is claimed (or sent) after a pause or cancel has committed.
 */
const lockRunning = statement(
  'campaign_lock_running',
  `SELECT id FROM campaigns WHERE id = $1 AND status = 'running' AND lease_owner = $2 AND run = $3 FOR SHARE`,
);

/** Completed only by the runner of the current run: a retry-failed meanwhile (run + 1) keeps it running. */
const complete = statement(
  'campaign_complete',
  `UPDATE campaigns SET status = 'completed', completed_at = now(), updated_at = now(), lease_owner = NULL, lease_until = NULL
    WHERE id = $1 AND status = 'running' AND lease_owner = $2 AND run = $3
   RETURNING id`,
);

const pauseByRunner = statement(
  'campaign_pause_by_runner',
  `UPDATE campaigns SET status = 'paused', status_reason = $3, updated_at = now()
    WHERE id = $1 AND status = 'running' AND lease_owner = $2`,
);

const statusOf = statement('campaign_status', `SELECT status FROM campaigns WHERE id = $1`);
const statusForShare = statement('campaign_status_for_share', `SELECT status FROM campaigns WHERE id = $1 FOR SHARE`);

const releaseLease = statement('campaign_release_lease', `UPDATE campaigns SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`);

/**
 * Running campaigns no runner holds: their runner died (lease expired), or none took them for a whole lease (their
 * job was never queued, or lost with Redis). A campaign just started or resumed is left to its own job.
 */
const orphaned = statement(
  'campaigns_orphaned',
  `SELECT id::text AS id, run FROM campaigns
    WHERE status = 'running' AND (lease_until < now() OR (lease_until IS NULL AND updated_at < now() - make_interval(secs => $2::float8 / 1000)))
    ORDER BY id LIMIT $1`,
);

/**
 * The one owner of `campaigns`. The console's statements (create, list, transitions) run on Prisma's client so that
 * they join the unit of work of their audit entry; the runner's (lease, claim lock, completion) are SQL on the pool.
 * Tenant scope: the console's methods take the business account first; the runner's work on a campaign it leased.
 */
@Injectable()
export class CampaignsRepository {
  constructor(private readonly prisma: PrismaService) {}

  // ---- Console (in the caller's unit of work) -----------------------------------------------------------------

  async create(businessAccountId: string, c: NewCampaign): Promise<CampaignRow> {
    const rows = await clientOf(this.prisma).$queryRawUnsafe<CampaignRow[]>(
      `INSERT INTO campaigns (business_account_id, name, phone_number_id, template_name, template_language, template_category, upstream_api, total, created_by_id, run)
       VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9::uuid, 1)
       RETURNING ${COLUMNS}`,
      businessAccountId, c.name, c.phoneNumberId, c.templateName, c.templateLanguage, c.templateCategory, c.upstreamApi, c.total, c.createdById,
    );
    return rowOf(rows[0]!);
  }

  async find(businessAccountId: string, id: number): Promise<CampaignRow | null> {
    const rows = await clientOf(this.prisma).$queryRawUnsafe<CampaignRow[]>(`SELECT ${COLUMNS} FROM campaigns WHERE id = $1::bigint AND business_account_id = $2::uuid`, String(id), businessAccountId);
    return rows[0] ? rowOf(rows[0]) : null;
  }

  /** Newest first, and the total. */
  async page(businessAccountId: string, page: { page: number; limit: number }): Promise<{ rows: CampaignRow[]; total: number }> {
    const db = clientOf(this.prisma);
    const [rows, counted] = await Promise.all([
      db.$queryRawUnsafe<CampaignRow[]>(
        `SELECT ${COLUMNS} FROM campaigns WHERE business_account_id = $1::uuid ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
        businessAccountId, page.limit, (page.page - 1) * page.limit,
      ),
      db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM campaigns WHERE business_account_id = $1::uuid`, businessAccountId),
    ]);
    return { rows: rows.map(rowOf), total: Number(counted[0]?.n ?? 0) };
  }

  /**
   * `from` → `to` for an operator (locks the row: a claim in progress finishes first, no claim follows). Back to
   * running bumps `run` (a new queue job). Null when the campaign is in none of the `from` statuses.
   */
  async transition(businessAccountId: string, id: number, from: readonly CampaignStatus[], to: CampaignStatus): Promise<CampaignRow | null> {
    const rows = await clientOf(this.prisma).$queryRawUnsafe<CampaignRow[]>(
      `UPDATE campaigns SET status = $3::text, status_reason = NULL, updated_at = now(),
              run = CASE WHEN $3::text = 'running' THEN run + 1 ELSE run END,
              completed_at = CASE WHEN $3::text IN ('completed', 'cancelled') THEN now() ELSE NULL END
        WHERE id = $1::bigint AND business_account_id = $2::uuid AND status = ANY($4::text[])
       RETURNING ${COLUMNS}`,
      String(id), businessAccountId, to, [...from],
    );
    return rows[0] ? rowOf(rows[0]) : null;
  }

  // ---- The runner (worker) ------------------------------------------------------------------------------------

  async acquireLease(id: number, owner: string, leaseMs: number): Promise<(CampaignRow & { previousOwner: string | null }) | null> {
    const { rows } = await this.prisma.pool.query<CampaignRow & { previousOwner: string | null }>(acquireLease([id, owner, leaseMs]));
    return rows[0] ? { ...rowOf(rows[0]), previousOwner: rows[0].previousOwner } : null;
  }

  /** The campaign's status and run while the lease is still this runner's; null once it is not. */
  async renewLease(id: number, owner: string, leaseMs: number): Promise<{ status: CampaignStatus; run: number } | null> {
    const { rows } = await this.prisma.pool.query<{ status: CampaignStatus; run: number }>(renewLease([id, owner, leaseMs]));
    return rows[0] ?? null;
  }

  /** In the claim's transaction: whether this runner may still claim (running, its lease, its run). */
  async lockRunning(tx: Tx, id: number, owner: string, run: number): Promise<boolean> {
    const { rows } = await connectionOf(tx).query(lockRunning([id, owner, run]));
    return rows.length > 0;
  }

  async complete(id: number, owner: string, run: number): Promise<boolean> {
    const { rows } = await this.prisma.pool.query(complete([id, owner, run]));
    return rows.length > 0;
  }

  /** The service pauses a campaign that cannot go on (the token rejected, the account blocked), with the reason. */
  async pauseByRunner(id: number, owner: string, reason: string): Promise<void> {
    await this.prisma.pool.query(pauseByRunner([id, owner, reason]));
  }

  async statusOf(id: number): Promise<CampaignStatus | null> {
    const { rows } = await this.prisma.pool.query<{ status: CampaignStatus }>(statusOf([id]));
    return rows[0]?.status ?? null;
  }

  /** In the caller's transaction, holding the row (shared) so that no transition commits meanwhile. */
  async statusForShare(tx: Tx, id: number): Promise<CampaignStatus | null> {
    const { rows } = await connectionOf(tx).query<{ status: CampaignStatus }>(statusForShare([id]));
    return rows[0]?.status ?? null;
  }

  async releaseLease(id: number, owner: string): Promise<void> {
    await this.prisma.pool.query(releaseLease([id, owner]));
  }

  async orphaned(leaseMs: number, limit = 100): Promise<{ id: number; run: number }[]> {
    const { rows } = await this.prisma.pool.query<{ id: string; run: number }>(orphaned([limit, leaseMs]));
    return rows.map((r) => ({ id: safeInteger(r.id), run: r.run }));
  }
}
