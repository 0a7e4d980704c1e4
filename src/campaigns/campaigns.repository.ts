import { Injectable } from '@nestjs/common';
import { expressionBuilder } from 'kysely';
import { columns, type Database } from '../core/db/database.js';
import { lockForTransaction } from '../core/db/advisory-lock.js';
import { Db, type Tx } from '../core/db/db.js';
import { now } from '../core/db/pg.js';
import { qualified } from '../core/db/rows.js';
import { prepared } from '../core/db/statement.js';
import { skipTake } from '../core/rows/page.js';
import { GenerateSql, Sample } from '../core/db/generate-sql.js';

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

export type NewCampaign = Pick<
  CampaignRow,
  | 'name'
  | 'phoneNumberId'
  | 'templateName'
  | 'templateLanguage'
  | 'templateCategory'
  | 'upstreamApi'
  | 'total'
  | 'createdById'
>;

type LeaseColumn = 'lease_owner as leaseOwner' | 'lease_until as leaseUntil';

/** The columns of a CampaignRow: the table's, without the lease (the runner's business, not the row's). */
const COLUMNS = columns.campaigns.filter(
  (c): c is Exclude<(typeof columns.campaigns)[number], LeaseColumn> => !c.startsWith('lease_'),
);

const eb = expressionBuilder<Database, never>();

/**
 * now() plus or minus `seconds` (a parameter; PostgreSQL 16's date_add, date_subtract): on the database's clock, the one
 * every runner's lease is compared with.
 */
const fromNow = (op: 'date_add' | 'date_subtract', seconds: number) =>
  eb.fn<Date>(op, [
    now(),
    eb.fn<string>('make_interval', [eb.lit(0), eb.lit(0), eb.lit(0), eb.lit(0), eb.lit(0), eb.lit(0), eb.val(seconds)]),
  ]);

/**
 * A lease: the runner that holds the campaign (its token) until lease_until, renewed while it runs. Taken when free,
 * expired (the holder died), or already this runner's. `previousOwner`: who held it before (a dead runner's claims
 * are then looked at).
 */
const acquireLease = prepared('campaign_acquire_lease', (db, p: { id: number; owner: string; seconds: number }) =>
  db
    .with('old', (w) => w.selectFrom('campaigns').select(['id', 'lease_owner']).where('id', '=', p.id).forUpdate())
    .updateTable('campaigns as c')
    .from('old')
    .set({ lease_owner: p.owner, lease_until: fromNow('date_add', p.seconds) })
    .whereRef('c.id', '=', 'old.id')
    .where('c.status', '=', 'running')
    .where((w) =>
      w.or([w('c.lease_owner', 'is', null), w('c.lease_owner', '=', p.owner), w('c.lease_until', '<', now())]),
    )
    .returning(qualified('c', COLUMNS))
    .returning('old.lease_owner as previousOwner')
    .$narrowType<{ status: CampaignStatus }>(),
);

/** The runner keeps its lease; what the campaign's status is now (null: the lease is someone else's). */
const renewLease = prepared('campaign_renew_lease', (db, p: { id: number; owner: string; seconds: number }) =>
  db
    .updateTable('campaigns')
    .set({ lease_until: fromNow('date_add', p.seconds) })
    .where('id', '=', p.id)
    .where('lease_owner', '=', p.owner)
    .returning(['status', 'run'])
    .$narrowType<{ status: CampaignStatus }>(),
);

/**
 * Taken by every claim, in the claim's transaction: a pause or cancel (which updates the row) waits for a claim in
 * progress and every later claim sees it, so nothing is claimed (or sent) after a pause or cancel has committed.
 */
const lockRunning = prepared('campaign_lock_running', (db, p: { id: number; owner: string; run: number }) =>
  db
    .selectFrom('campaigns')
    .select('id')
    .where('id', '=', p.id)
    .where('status', '=', 'running')
    .where('lease_owner', '=', p.owner)
    .where('run', '=', p.run)
    .forShare(),
);

/** Completed only by the runner of the current run: a retry-failed meanwhile (run + 1) keeps it running. */
const complete = prepared('campaign_complete', (db, p: { id: number; owner: string; run: number }) =>
  db
    .updateTable('campaigns')
    .set({ status: 'completed', completed_at: now(), updated_at: now(), lease_owner: null, lease_until: null })
    .where('id', '=', p.id)
    .where('status', '=', 'running')
    .where('lease_owner', '=', p.owner)
    .where('run', '=', p.run)
    .returning('id'),
);

const pauseByRunner = prepared('campaign_pause_by_runner', (db, p: { id: number; owner: string; reason: string }) =>
  db
    .updateTable('campaigns')
    .set({ status: 'paused', status_reason: p.reason, updated_at: now() })
    .where('id', '=', p.id)
    .where('status', '=', 'running')
    .where('lease_owner', '=', p.owner),
);

const statusOf = prepared('campaign_status', (db, p: { id: number }) =>
  db.selectFrom('campaigns').select('status').where('id', '=', p.id).$narrowType<{ status: CampaignStatus }>(),
);
const statusForShare = prepared('campaign_status_for_share', (db, p: { id: number }) =>
  db
    .selectFrom('campaigns')
    .select('status')
    .where('id', '=', p.id)
    .forShare()
    .$narrowType<{ status: CampaignStatus }>(),
);

/** The lease passed from one runner to the next (a slice's end): the next runs as `next`, within one lease. */
const handOverLease = prepared(
  'campaign_hand_over_lease',
  (db, p: { id: number; owner: string; next: string; seconds: number }) =>
    db
      .updateTable('campaigns')
      .set({ lease_owner: p.next, lease_until: fromNow('date_add', p.seconds) })
      .where('id', '=', p.id)
      .where('lease_owner', '=', p.owner)
      .where('status', '=', 'running')
      .returning('id'),
);

const releaseLease = prepared('campaign_release_lease', (db, p: { id: number; owner: string }) =>
  db
    .updateTable('campaigns')
    .set({ lease_owner: null, lease_until: null })
    .where('id', '=', p.id)
    .where('lease_owner', '=', p.owner),
);

/**
 * Running campaigns no runner holds: their runner died (lease expired), or none took them for a whole lease (their
 * job was never queued, or lost with Redis). A campaign just started or resumed is left to its own job.
 */
const orphaned = prepared('campaigns_orphaned', (db, p: { limit: number; seconds: number }) =>
  db
    .selectFrom('campaigns')
    .select(['id', 'run'])
    .where('status', '=', 'running')
    .where((w) =>
      w.or([
        w('lease_until', '<', now()),
        w.and([w('lease_until', 'is', null), w('updated_at', '<', fromNow('date_subtract', p.seconds))]),
      ]),
    )
    .orderBy('id')
    .limit(p.limit),
);

/**
 * The one owner of `campaigns`. The console's statements (create, list, transitions) join the unit of work of their
 * audit entry; the runner's (lease, claim lock, completion) are named prepared statements.
 * Tenant scope: the console's methods take the business account first; the runner's work on a campaign it leased.
 */
@Injectable()
export class CampaignsRepository {
  constructor(private readonly db: Db) {}

  // ---- Console (in the caller's unit of work) -----------------------------------------------------------------

  @GenerateSql({
    params: [
      Sample.UUID,
      {
        name: Sample.STRING,
        phoneNumberId: Sample.PHONE,
        templateName: Sample.STRING,
        templateLanguage: 'en_US',
        templateCategory: 'MARKETING',
        upstreamApi: 'cloud',
        total: 1,
        createdById: Sample.UUID2,
      },
    ],
  })
  create(businessAccountId: string, c: NewCampaign): Promise<CampaignRow> {
    return this.db
      .on()
      .insertInto('campaigns')
      .values({
        business_account_id: businessAccountId,
        name: c.name,
        phone_number_id: c.phoneNumberId,
        template_name: c.templateName,
        template_language: c.templateLanguage,
        template_category: c.templateCategory,
        upstream_api: c.upstreamApi,
        total: c.total,
        created_by_id: c.createdById,
        run: 1,
      })
      .returning(COLUMNS)
      .$narrowType<{ status: CampaignStatus }>()
      .executeTakeFirstOrThrow();
  }

  /** `heldSince`: the account's holder took it over then, and its campaigns from before are not its own. */
  @GenerateSql(
    { name: 'every campaign', params: [Sample.UUID, Sample.NUMBER] },
    { name: 'created since the hold', params: [Sample.UUID, Sample.NUMBER, Sample.DATE] },
  )
  async find(businessAccountId: string, id: number, heldSince: Date | null = null): Promise<CampaignRow | null> {
    const row = await this.campaigns(businessAccountId, heldSince)
      .select(COLUMNS)
      .where('id', '=', id)
      .$narrowType<{ status: CampaignStatus }>()
      .executeTakeFirst();
    return row ?? null;
  }

  /** Newest first, and the total. */
  @GenerateSql(
    { name: 'every campaign', params: [Sample.UUID, null, Sample.PAGE] },
    { name: 'created since the hold', params: [Sample.UUID, Sample.DATE, Sample.PAGE] },
  )
  async page(
    businessAccountId: string,
    heldSince: Date | null,
    page: { page: number; limit: number },
  ): Promise<{ rows: CampaignRow[]; total: number }> {
    const { skip, take } = skipTake(page);
    const [rows, counted] = await Promise.all([
      this.campaigns(businessAccountId, heldSince)
        .select(COLUMNS)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(take)
        .offset(skip)
        .$narrowType<{ status: CampaignStatus }>()
        .execute(),
      this.campaigns(businessAccountId, heldSince)
        .select((e) => e.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: counted.n };
  }

  /**
   * `from` → `to` for an operator (locks the row: a claim in progress finishes first, no claim follows). Back to
   * running bumps `run` (a new queue job). Paused or cancelled, the lease is nobody's: its runner stops at its next
   * claim or renewal anyway, and a lease handed to a slice still queued would otherwise hold a resumed run back until
   * it expired (then a sweep's wait more). Null when the campaign is in none of the `from` statuses.
   */
  @GenerateSql({ params: [Sample.UUID, Sample.NUMBER, ['running', 'paused'], 'cancelled'] })
  async transition(
    businessAccountId: string,
    id: number,
    from: readonly CampaignStatus[],
    to: CampaignStatus,
  ): Promise<CampaignRow | null> {
    const row = await this.db
      .on()
      .updateTable('campaigns')
      .set((e) => ({
        status: to,
        status_reason: null,
        updated_at: now(),
        run: to === 'running' ? e('run', '+', 1) : e.ref('run'),
        completed_at: to === 'completed' || to === 'cancelled' ? now() : null,
        ...(to === 'running' ? {} : { lease_owner: null, lease_until: null }),
      }))
      .where('id', '=', id)
      .where('business_account_id', '=', businessAccountId)
      .where((e) => e('status', '=', e.fn.any(e.val([...from]))))
      .returning(COLUMNS)
      .$narrowType<{ status: CampaignStatus }>()
      .executeTakeFirst();
    return row ?? null;
  }

  /**
   * At a takeover (in its transaction): the previous holder's running and paused campaigns of the account (created
   * before `at`) are cancelled with the reason, so nothing of theirs is sent with the new holder's token. Their ids.
   */
  @GenerateSql({ params: [Sample.UUID, Sample.DATE, Sample.STRING] })
  async cancelBefore(businessAccountId: string, at: Date, reason: string): Promise<number[]> {
    const rows = await this.db
      .on()
      .updateTable('campaigns')
      .set({ status: 'cancelled', status_reason: reason, updated_at: now(), completed_at: now() })
      .where('business_account_id', '=', businessAccountId)
      .where('created_at', '<', at)
      .where('status', 'in', ['running', 'paused'])
      .returning('id')
      .execute();
    return rows.map((r) => Number(r.id));
  }

  // ---- The runner (worker) ------------------------------------------------------------------------------------

  async acquireLease(
    id: number,
    owner: string,
    leaseMs: number,
  ): Promise<(CampaignRow & { previousOwner: string | null }) | null> {
    const { rows } = await this.db.exec(acquireLease, { id, owner, seconds: leaseMs / 1000 });
    return rows[0] ?? null;
  }

  /** The campaign's status and run while the lease is still this runner's; null once it is not. */
  async renewLease(
    id: number,
    owner: string,
    leaseMs: number,
  ): Promise<{ status: CampaignStatus; run: number } | null> {
    const { rows } = await this.db.exec(renewLease, { id, owner, seconds: leaseMs / 1000 });
    return rows[0] ?? null;
  }

  /** In the claim's transaction: whether this runner may still claim (running, its lease, its run). */
  async lockRunning(tx: Tx, id: number, owner: string, run: number): Promise<boolean> {
    const { rows } = await this.db.exec(lockRunning, { id, owner, run }, tx);
    return rows.length > 0;
  }

  async complete(id: number, owner: string, run: number): Promise<boolean> {
    const { rows } = await this.db.exec(complete, { id, owner, run });
    return rows.length > 0;
  }

  /** The service pauses a campaign that cannot go on (the token rejected, the account blocked), with the reason. */
  async pauseByRunner(id: number, owner: string, reason: string): Promise<void> {
    await this.db.exec(pauseByRunner, { id, owner, reason });
  }

  async statusOf(id: number): Promise<CampaignStatus | null> {
    const { rows } = await this.db.exec(statusOf, { id });
    return rows[0]?.status ?? null;
  }

  /** In the caller's transaction, holding the row (shared) so that no transition commits meanwhile. */
  async statusForShare(tx: Tx, id: number): Promise<CampaignStatus | null> {
    const { rows } = await this.db.exec(statusForShare, { id }, tx);
    return rows[0]?.status ?? null;
  }

  /**
   * What an organization's campaign quotas count (issue 37, finding 3): its campaigns running now, and the recipients of
   * those it created since `since`. Under a transaction-scoped lock of the organization's campaigns, so two creations
   * (or resumes) at once cannot both see room for one more (call inside a unit of work).
   */
  @GenerateSql({ params: [Sample.UUID, Sample.DATE] })
  async quotaUseLocked(organizationId: string, since: Date): Promise<{ running: number; recipients: number }> {
    const db = this.db.on();
    await lockForTransaction(db, `campaigns:${organizationId}`);
    const row = await db
      .selectFrom('campaigns as c')
      .innerJoin('business_accounts as b', 'b.id', 'c.business_account_id')
      .select((eb) => [
        eb.fn.countAll<number>().filterWhere('c.status', '=', 'running').as('running'),
        eb.fn
          .coalesce(eb.fn.sum<number>('c.total').filterWhere('c.created_at', '>=', since), eb.lit(0))
          .as('recipients'),
      ])
      .where('b.organization_id', '=', organizationId)
      .where((eb) => eb.or([eb('c.status', '=', 'running'), eb('c.created_at', '>=', since)]))
      .executeTakeFirstOrThrow();
    return { running: Number(row.running), recipients: Number(row.recipients) };
  }

  /** Whether the lease went to `next` (false: it was not `owner`'s any more, or the campaign stopped running). */
  async handOverLease(id: number, owner: string, next: string, leaseMs: number): Promise<boolean> {
    const { rows } = await this.db.exec(handOverLease, { id, owner, next, seconds: leaseMs / 1000 });
    return rows.length > 0;
  }

  async releaseLease(id: number, owner: string): Promise<void> {
    await this.db.exec(releaseLease, { id, owner });
  }

  async orphaned(leaseMs: number, limit = 100): Promise<{ id: number; run: number }[]> {
    const { rows } = await this.db.exec(orphaned, { limit, seconds: leaseMs / 1000 });
    return rows;
  }

  /** The business account's campaigns. */
  private campaigns(businessAccountId: string, heldSince: Date | null = null) {
    const all = this.db.on().selectFrom('campaigns').where('business_account_id', '=', businessAccountId);
    return heldSince ? all.where('created_at', '>=', heldSince) : all;
  }
}
