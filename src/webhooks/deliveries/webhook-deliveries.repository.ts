import { Injectable } from '@nestjs/common';
import { skipTake } from '../../core/http/pagination.js';
import { dropDetachedLeftovers, dropPartition, ensurePartitions, expiredPartitions, partitionsOf, type Partition } from '../../core/prisma/partitions.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { connectionOf, statement, type Tx } from '../../core/prisma/sql.js';
import type { DeliveryStatus } from './dto/deliveries.dto.js';

/** A signed POST as the receiver stores it: the bytes as received. */
export interface IncomingDelivery {
  rawBody: Buffer;
  signature: string;
  /** entry[].id of the payload: which business accounts it concerns (console scoping). */
  wabaIds: string[];
}

export interface StoredDelivery {
  id: number;
  status: string;
  rawBody: Buffer;
  receivedAt: Date;
  eventCount: number | null;
}

export interface DeliveryRow {
  id: number;
  status: string;
  attempts: number;
  lastError: string | null;
  eventCount: number | null;
  wabaIds: string[];
  receivedAt: Date;
  processedAt: Date | null;
}

export interface UnprocessedDelivery {
  id: number;
  receivedAt: Date;
  batchId: string | null;
}

/** receivedAt: when Meta delivered it (original_received_at when the retention moved it to a newer partition). */
const ROW_COLUMNS = `id, status, attempts, last_error AS "lastError", event_count AS "eventCount", waba_ids AS "wabaIds",
  COALESCE(original_received_at, received_at) AS "receivedAt", processed_at AS "processedAt"`;

/** One statement per batch size (1…max rows), prepared once per connection: `($1,$2,$3::text[],$4), (…)`. */
function storeMany(rows: number) {
  const values = Array.from({ length: rows }, (_, i) => `($${i * 3 + 1}::bytea, $${i * 3 + 2}, $${i * 3 + 3}::text[], $${rows * 3 + 1})`);
  return statement(`store_deliveries_${rows}`, `INSERT INTO webhook_deliveries (raw_body, signature, waba_ids, batch_id) VALUES ${values.join(', ')} RETURNING id`);
}
const storeStatements = new Map<number, ReturnType<typeof storeMany>>();

const DELIVERY_COLUMNS = `id, status, raw_body AS "rawBody", received_at AS "receivedAt", event_count AS "eventCount"`;

/**
 * The worker's usual case: deliveries received in the last day, looked up in this week's partition (and last week's
 * near a Monday) instead of every partition's primary key. The bounds are now()-relative, so the partitions are
 * pruned when the statement starts (a generic plan keeps them as parameters of the run).
 */
const findRecent = statement(
  'find_recent_deliveries',
  `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
    WHERE id = ANY($1::bigint[]) AND received_at >= now() - interval '1 day' AND received_at <= now() + interval '1 hour' ORDER BY id`,
);

/** Any delivery, in whichever partition (a sweep, a replay, a re-run of an older one). */
const findMany = statement(
  'find_deliveries',
  `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id`,
);

/** $3: the oldest received_at among them (as read by findForProcessing): the partitions before it are skipped. */
/**
 * `d.id = ANY($1)` beside the join: an index condition the planner uses whatever the partition's statistics say.
 * Without it, a plan made for its values on a week's partition that autovacuum had not analysed yet joined a
 * sequential scan of the whole partition by hash (measured: 12 ms instead of 0.5 ms per chunk of 32, the largest
 * PostgreSQL cost of single-status ingest after partitioning).
 */
const markProcessed = statement(
  'mark_deliveries_processed',
  `UPDATE webhook_deliveries d
      SET status = 'processed', processed_at = now(), event_count = v.events, last_error = NULL, attempts = d.attempts + 1
     FROM unnest($1::bigint[], $2::int[]) AS v(id, events)
    WHERE d.id = v.id AND d.id = ANY($1::bigint[]) AND d.status <> 'processed' AND d.received_at >= $3`,
);

const recordFailure = statement(
  'record_delivery_failure',
  `UPDATE webhook_deliveries
      SET attempts = attempts + 1, last_error = $2, status = CASE WHEN $3 THEN 'failed' ELSE status END
    WHERE id = ANY($1::bigint[]) AND status = 'received'`,
);

const markDeadLetter = statement(
  'mark_delivery_dead_letter',
  `UPDATE webhook_deliveries SET status = 'failed', last_error = $2 WHERE id = ANY($1::bigint[]) AND status = 'received' RETURNING id`,
);

/** Keyset over the (status, received_at) index. */
const stillReceived = statement(
  'deliveries_still_received',
  `SELECT id, received_at AS "receivedAt", batch_id AS "batchId" FROM webhook_deliveries
    WHERE status = 'received' AND received_at < $1 AND (received_at, id) > ($2::timestamptz, $3::bigint)
    ORDER BY received_at, id LIMIT $4`,
);

/** Served by the (status, received_at) index: one index entry read. */
const oldestUnprocessed = statement(
  'deliveries_oldest_unprocessed',
  `SELECT min(received_at) AS at FROM webhook_deliveries WHERE status = 'received'`,
);

/**
 * Before a partition is dropped: its deliveries not processed (waiting, dead letters) move to the partition of now
 * (an UPDATE of the partition key moves the row; its id stays), keeping when Meta delivered them. Served by the
 * (status, received_at) index of the partition: only the few unfinished rows are read.
 */
const keepUnfinished = statement(
  'retention_keep_unfinished_deliveries',
  `UPDATE webhook_deliveries SET original_received_at = COALESCE(original_received_at, received_at), received_at = now()
    WHERE status IN ('received', 'failed') AND received_at >= COALESCE($1, '-infinity'::timestamptz) AND received_at < $2`,
);

/**
 * The organization's accounts as $1 (wabaIds) with, per account, the window its holder may read ($2 since, $3 until;
 * null: open): a delivery is listed when it concerns one of them and arrived inside that account's window.
 */
const IN_WINDOWS = `waba_ids && $1::text[] AND EXISTS (
        SELECT 1 FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS a(waba, since, until)
         WHERE a.waba = ANY(waba_ids)
           AND COALESCE(original_received_at, received_at) >= COALESCE(a.since, '-infinity'::timestamptz)
           AND COALESCE(original_received_at, received_at) <= COALESCE(a.until, 'infinity'::timestamptz))`;

const listForAccounts = (withStatus: boolean) =>
  statement(
    `list_deliveries_${withStatus ? 'status' : 'all'}`,
    `SELECT ${ROW_COLUMNS} FROM webhook_deliveries
      WHERE ${IN_WINDOWS} ${withStatus ? 'AND status = $6' : ''}
      ORDER BY COALESCE(original_received_at, received_at) DESC, id DESC OFFSET $4 LIMIT $5`,
  );
const countForAccounts = (withStatus: boolean) =>
  statement(`count_deliveries_${withStatus ? 'status' : 'all'}`, `SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${IN_WINDOWS} ${withStatus ? 'AND status = $4' : ''}`);

const replay = statement(
  'replay_delivery',
  `UPDATE webhook_deliveries SET status = 'received', attempts = 0, last_error = NULL, processed_at = NULL
    WHERE ${IN_WINDOWS} AND id = $4::bigint RETURNING ${ROW_COLUMNS}`,
);

/**
 * Backlog per business account: deliveries waiting (`received`), dead letters (`failed`) and the oldest
 * waiting one. Only unfinished rows are read (the (status, received_at) index), whatever the retention.
 */
const backlogForAccounts = statement(
  'deliveries_backlog_for_accounts',
  `SELECT w AS "wabaId",
          count(*) FILTER (WHERE d.status = 'received')::int AS pending,
          count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
          min(d.received_at) FILTER (WHERE d.status = 'received') AS "oldestPendingAt"
     FROM webhook_deliveries d CROSS JOIN LATERAL unnest(d.waba_ids) AS w
    WHERE d.status IN ('received', 'failed') AND d.waba_ids && $1::text[] AND w = ANY($1::text[])
    GROUP BY w`,
);

export interface AccountBacklog {
  wabaId: string;
  pending: number;
  failed: number;
  oldestPendingAt: Date | null;
}

/**
 * The one owner of `webhook_deliveries`: every statement that reads or writes it (receiver, worker, sweeper,
 * retention, console). SQL on node-postgres: the receiver's INSERT is the hottest write of the service.
 * Console reads are scoped by the organization's business accounts (`wabaIds`, first argument).
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** One INSERT (one commit) for the whole batch; ids in the order of `rows`. All or nothing. */
  async storeBatch(batchId: string, rows: IncomingDelivery[]): Promise<number[]> {
    let build = storeStatements.get(rows.length);
    if (!build) storeStatements.set(rows.length, (build = storeMany(rows.length)));
    const values: unknown[] = [];
    for (const r of rows) values.push(r.rawBody, r.signature, r.wabaIds);
    values.push(batchId);
    const { rows: ids } = await this.prisma.pool.query<{ id: number }>(build(values));
    // RETURNING follows the VALUES order for a plain multi-row INSERT.
    return ids.map((r) => r.id);
  }

  /** In id order; unknown ids are left out. */
  async findForProcessing(ids: number[]): Promise<StoredDelivery[]> {
    const { rows: recent } = await this.prisma.pool.query<StoredDelivery>(findRecent([ids]));
    if (recent.length === new Set(ids).size) return recent;
    const { rows } = await this.prisma.pool.query<StoredDelivery>(findMany([ids]));
    return rows;
  }

  /**
   * `tx`: in the caller's transaction (the one that stored the deliveries' last events). `receivedAt`: as
   * findForProcessing read them (it bounds the partitions looked at).
   */
  async markProcessed(done: { id: number; events: number; receivedAt: Date }[], tx?: Tx): Promise<void> {
    if (done.length === 0) return;
    const since = new Date(Math.min(...done.map((d) => d.receivedAt.getTime())));
    await (tx ? connectionOf(tx) : this.prisma.pool).query(markProcessed([done.map((d) => d.id), done.map((d) => d.events), since]));
  }

  /** A failed attempt of deliveries still `received`; `final` makes them dead letters (status failed). */
  async recordFailure(ids: number[], error: string, final: boolean): Promise<void> {
    if (ids.length === 0) return;
    await this.prisma.pool.query(recordFailure([ids, error.slice(0, 2000), final]));
  }

  /** Dead letters for deliveries still `received`; returns the ids that changed. */
  async markDeadLetter(ids: number[], error: string): Promise<number[]> {
    const { rows } = await this.prisma.pool.query<{ id: number }>(markDeadLetter([ids, error.slice(0, 2000)]));
    return rows.map((r) => r.id);
  }

  /** Deliveries still `received` that arrived before `olderThan`, oldest first, after the keyset `after`. */
  async stillReceived(olderThan: Date, after: { receivedAt: Date; id: number } | undefined, limit: number): Promise<UnprocessedDelivery[]> {
    const from = after ?? { receivedAt: new Date(0), id: 0 };
    const { rows } = await this.prisma.pool.query<UnprocessedDelivery>(stillReceived([olderThan, from.receivedAt, from.id, limit]));
    return rows;
  }

  /** When the oldest delivery still waiting to be processed arrived (null when none waits), all accounts. */
  async oldestUnprocessedAt(): Promise<Date | null> {
    const { rows } = await this.prisma.pool.query<{ at: Date | null }>(oldestUnprocessed([]));
    return rows[0]?.at ?? null;
  }

  /** Creates the weekly partitions missing from `from` through `through`; returns how many it made. */
  ensurePartitions(from: Date, through: Date): Promise<number> {
    return ensurePartitions(this.prisma.pool, 'webhook_deliveries', from, through);
  }

  partitions(): Promise<Partition[]> {
    return partitionsOf(this.prisma.pool, 'webhook_deliveries');
  }

  /**
   * Drops the partitions wholly older than `cutoff` (retention of processed payloads), one transaction each, after
   * moving the deliveries in them that are not processed (waiting, dead letters) to the current week: those are
   * never dropped. Returns the partitions dropped and how many deliveries were kept.
   */
  async dropPartitionsBefore(cutoff: Date): Promise<{ dropped: Partition[]; kept: number }> {
    const dropped: Partition[] = [];
    let kept = 0;
    await dropDetachedLeftovers(this.prisma.pool, 'webhook_deliveries');
    for (const p of expiredPartitions(await this.partitions(), cutoff)) {
      let moved = 0;
      const done = await dropPartition(this.prisma.pool, 'webhook_deliveries', p, async (client) => {
        moved = (await client.query(keepUnfinished([p.lowerBound, p.upperBound]))).rowCount ?? 0;
      });
      // A long reader holds the table: the next partitions would only wait for it too (and stall writes meanwhile).
      if (!done) break;
      dropped.push(p);
      kept += moved;
    }
    return { dropped, kept };
  }

  async listForAccounts(accounts: AccountWindow[], query: { page: number; limit: number; status?: DeliveryStatus }): Promise<{ rows: DeliveryRow[]; total: number }> {
    const withStatus = query.status !== undefined;
    const { skip, take } = skipTake(query);
    const windows = windowsOf(accounts);
    const [rows, count] = await Promise.all([
      this.prisma.pool.query<DeliveryRow>(listForAccounts(withStatus)([...windows, skip, take, ...(withStatus ? [query.status] : [])])),
      this.prisma.pool.query<{ n: number }>(countForAccounts(withStatus)([...windows, ...(withStatus ? [query.status] : [])])),
    ]);
    return { rows: rows.rows, total: count.rows[0]!.n };
  }

  /** Back to `received` (attempts and error cleared) if it concerns one of the accounts, inside its window; null otherwise. */
  async resetForReplay(accounts: AccountWindow[], id: number): Promise<DeliveryRow | null> {
    const { rows } = await this.prisma.pool.query<DeliveryRow>(replay([...windowsOf(accounts), id]));
    return rows[0] ?? null;
  }

  /** Waiting and dead-lettered deliveries per business account of `wabaIds` (accounts with none are absent). */
  async backlogForAccounts(wabaIds: string[]): Promise<AccountBacklog[]> {
    const { rows } = await this.prisma.pool.query<AccountBacklog>(backlogForAccounts([wabaIds]));
    return rows;
  }
}

/** A business account of the reader and the window of its history the reader may see (accounts/business-accounts/read-window.ts). */
export interface AccountWindow {
  wabaId: string;
  since?: Date;
  until?: Date;
}

function windowsOf(accounts: AccountWindow[]): [string[], (Date | null)[], (Date | null)[]] {
  return [accounts.map((a) => a.wabaId), accounts.map((a) => a.since ?? null), accounts.map((a) => a.until ?? null)];
}
