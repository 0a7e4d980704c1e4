// The suite's own view of the database: tenant set-up, audit triggers that record every processing claim
// and every message status change (so "processed once" is measured, not assumed), and the counts.
import { chmodSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { migrate } from '../../scripts/stack/app.js';
import { Postgres } from '../../scripts/stack/postgres.js';
import { Redis as RedisServer } from '../../scripts/stack/redis.js';
import { Db as DataAccess } from '../../src/core/db/db.js';
import { insertTenantAccount, type TenantAccount } from '../utils/factories.js';
import { poll } from '../utils/poll.js';

export class Db {
  readonly pool: pg.Pool;

  constructor(url: string) {
    this.pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 3000 });
    // PostgreSQL restarts on purpose: clients that lose their connection must not crash the suite.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.pool.query<R>(sql, params)).rows;
  }

  /** Like query, but waits out a PostgreSQL restart (used by the probes that run during faults). */
  async queryRetrying<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    timeoutMs = 30_000,
  ): Promise<R[]> {
    return poll(() => this.query<R>(sql, params), { done: () => true, timeoutMs, intervalMs: 200 });
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  /** Every id sequence past 2^31, as ./scripts/test.sh does for the main suite (scripts/lib/ids-above-int32.sql). */
  async moveIdsAboveInt32(): Promise<void> {
    await this.query(readFileSync(new URL('../../scripts/lib/ids-above-int32.sql', import.meta.url), 'utf8'));
  }

  /**
   * Test-only triggers (this cluster is the suite's own): one row per committed claim of an event
   * (processed false → true, or an event stored already processed by the transaction that applies it) and
   * one per change of a message's status. A claim rolled back with its
   * transaction leaves no row, so the counts are what was really applied.
   */
  async installAudit(): Promise<void> {
    await this.query(`
      CREATE TABLE fault_claims (event_id bigint NOT NULL, waba_id text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
      CREATE INDEX ON fault_claims (waba_id);
      CREATE FUNCTION fault_claim_log() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO fault_claims (event_id, waba_id) VALUES (NEW.id, NEW.waba_id);
        RETURN NULL;
      END $$;
      CREATE TRIGGER fault_claim AFTER UPDATE OF processed ON events
        FOR EACH ROW WHEN (OLD.processed = false AND NEW.processed = true) EXECUTE FUNCTION fault_claim_log();
      CREATE TRIGGER fault_claim_on_insert AFTER INSERT ON events
        FOR EACH ROW WHEN (NEW.processed) EXECUTE FUNCTION fault_claim_log();

      CREATE TABLE fault_status_changes (message_id bigint NOT NULL, old_status text, new_status text, at timestamptz NOT NULL DEFAULT clock_timestamp());
      CREATE INDEX ON fault_status_changes (message_id);
      CREATE FUNCTION fault_status_log() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO fault_status_changes (message_id, old_status, new_status) VALUES (NEW.id, OLD.status, NEW.status);
        RETURN NULL;
      END $$;
      CREATE TRIGGER fault_status AFTER UPDATE OF status ON messages
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION fault_status_log();
    `);
  }
}

/** A tenant of the suite: a business account (test/utils/factories.ts) and the messages its status events refer to. */
export interface FaultTenant extends TenantAccount {
  organizationId: string;
  /** wamid → message id, for the messages the status events refer to. */
  messages: Map<string, number>;
}

/** An organization, a business account (the factories' rows) and `messageCount` sent messages with wamids. */
export async function createFaultTenant(db: Db, label: string, messageCount: number): Promise<FaultTenant> {
  const tenant = await insertTenantAccount(DataAccess.over(db.pool), `Fault ${label}`);
  const wamids = Array.from({ length: messageCount }, (_, i) => `wamid.fault.${label}.${tenant.wabaId}.${i}`);
  // This pool has no int8 parser: the (bigint) ids come back as text.
  const rows = await db.query<{ id: string; upstream_message_id: string }>(
    `INSERT INTO messages (business_account_id, phone_number_id, "to", type, template_name, template_language, status, upstream_message_id, updated_at)
     SELECT $1, $2, '4477009' || lpad(i::text, 5, '0'), 'template', 'parcel_update', 'en_GB', 'sent', w, now()
       FROM unnest($3::text[]) WITH ORDINALITY AS t(w, i)
     RETURNING id, upstream_message_id`,
    [tenant.businessAccountId, tenant.phoneNumberId, wamids],
  );
  return { ...tenant, messages: new Map(rows.map((r) => [r.upstream_message_id, Number(r.id)])) };
}

export interface Progress {
  deliveries: number;
  received: number;
  failed: number;
  events: number;
  processed: number;
}

export async function progress(db: Db, wabaId: string): Promise<Progress> {
  // A delivery is in one table at a time: the inbox while it waits or is a dead letter, the weekly one once processed.
  const [d] = await db.query<{ total: string; received: string; failed: string }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE status = 'received') AS received, count(*) FILTER (WHERE status = 'failed') AS failed
       FROM (SELECT status FROM webhook_inbox WHERE $1 = ANY (waba_ids)
             UNION ALL
             SELECT status FROM webhook_deliveries WHERE $1 = ANY (waba_ids)) d`,
    [wabaId],
  );
  const [e] = await db.query<{ total: string; processed: string }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE processed) AS processed FROM events WHERE waba_id = $1`,
    [wabaId],
  );
  return {
    deliveries: Number(d!.total),
    received: Number(d!.received),
    failed: Number(d!.failed),
    events: Number(e!.total),
    processed: Number(e!.processed),
  };
}

export interface ItemKey {
  kind: 'status_update' | 'inbound_message';
  /** The wamid of the message (status) or of the inbound message. */
  messageId: string;
  status: string | null;
}

export const itemKey = (k: ItemKey) => `${k.kind}|${k.messageId}|${k.status ?? ''}`;

export interface Verdict {
  deliveriesStored: number;
  deliveriesProcessed: number;
  deliveriesReceived: number;
  deliveriesFailed: number;
  expectedEvents: number;
  storedEvents: number;
  processedEvents: number;
  /** Committed claims recorded by the audit trigger (one per event applied). */
  claims: number;
  /** Events claimed more than once. */
  claimedTwice: number;
  /** Stored events beyond one per distinct item. */
  duplicates: number;
  /** Expected items with no stored event. */
  lost: number;
  /** Stored events that were never sent (should not exist). */
  unexpected: number;
  eventCountsTotal: number;
  /** Messages whose final state differs from what their statuses imply. */
  wrongMessages: number;
  /** Status changes that moved a message backwards or repeated a transition. */
  badTransitions: number;
  windows: number;
  expectedWindows: number;
}

/** Everything the scenarios assert on, for one tenant. */
export async function verdict(
  db: Db,
  tenant: FaultTenant,
  expected: ItemKey[],
  expectedMessages: Map<string, { deliveredAt: number; readAt: number; sentAt: number }>,
  expectedWindows: number,
): Promise<Verdict> {
  const p = await progress(db, tenant.wabaId);
  const events = await db.query<{ id: string; kind: string; message_id: string | null; status: string | null }>(
    `SELECT id, events_kind_name(kind) AS kind, message_id, events_status_name(status, status_other) AS status FROM events WHERE waba_id = $1`,
    [tenant.wabaId],
  );
  const want = new Set(expected.map(itemKey));
  const seen = new Map<string, number>();
  let unexpected = 0;
  for (const e of events) {
    const key = itemKey({
      kind: e.kind as ItemKey['kind'],
      messageId: e.message_id ?? '',
      status: e.kind === 'inbound_message' ? null : e.status,
    });
    seen.set(key, (seen.get(key) ?? 0) + 1);
    if (!want.has(key)) unexpected++;
  }
  let duplicates = 0;
  for (const n of seen.values()) duplicates += n - 1;
  let lost = 0;
  for (const k of want) if (!seen.has(k)) lost++;

  const [claims] = await db.query<{ claims: string; twice: string }>(
    `SELECT count(*) AS claims, (SELECT count(*) FROM (SELECT event_id FROM fault_claims WHERE waba_id = $1 GROUP BY event_id HAVING count(*) > 1) x) AS twice
       FROM fault_claims WHERE waba_id = $1`,
    [tenant.wabaId],
  );
  const [counts] = await db.query<{ total: string | null }>(
    `SELECT sum(count) AS total FROM event_counts WHERE waba_id = $1`,
    [tenant.wabaId],
  );

  const messages = await db.query<{
    id: string;
    upstream_message_id: string;
    status: string;
    sent_at: Date | null;
    delivered_at: Date | null;
    read_at: Date | null;
  }>(
    `SELECT id, upstream_message_id, status, sent_at, delivered_at, read_at FROM messages WHERE business_account_id = $1`,
    [tenant.businessAccountId],
  );
  let wrongMessages = 0;
  for (const m of messages) {
    const exp = expectedMessages.get(m.upstream_message_id);
    if (!exp) continue;
    const ok =
      m.status === 'read' &&
      m.sent_at?.getTime() === exp.sentAt &&
      m.delivered_at?.getTime() === exp.deliveredAt &&
      m.read_at?.getTime() === exp.readAt;
    if (!ok) wrongMessages++;
  }

  const changes = await db.query<{ message_id: string; old_status: string; new_status: string }>(
    `SELECT c.message_id, c.old_status, c.new_status FROM fault_status_changes c JOIN messages m ON m.id = c.message_id
      WHERE m.business_account_id = $1 ORDER BY c.at`,
    [tenant.businessAccountId],
  );
  const rank: Record<string, number> = { pending: 0, sent: 1, delivered: 2, read: 3 };
  const transitions = new Set<string>();
  let badTransitions = 0;
  for (const c of changes) {
    const key = `${c.message_id}|${c.old_status}|${c.new_status}`;
    if (transitions.has(key) || (rank[c.new_status] ?? -1) <= (rank[c.old_status] ?? -1)) badTransitions++;
    transitions.add(key);
  }

  const [w] = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM conversation_windows WHERE phone_number_id = $1`,
    [tenant.phoneNumberId],
  );

  return {
    deliveriesStored: p.deliveries,
    deliveriesProcessed: p.deliveries - p.received - p.failed,
    deliveriesReceived: p.received,
    deliveriesFailed: p.failed,
    expectedEvents: want.size,
    storedEvents: events.length,
    processedEvents: p.processed,
    claims: Number(claims!.claims),
    claimedTwice: Number(claims!.twice),
    duplicates,
    lost,
    unexpected,
    eventCountsTotal: Number(counts?.total ?? 0),
    wrongMessages,
    badTransitions,
    windows: Number(w!.n),
    expectedWindows,
  };
}

/** Stored deliveries of the tenant (waiting, dead letters and processed) by sha256 of their raw body. */
export async function storedByHash(db: Db, wabaId: string): Promise<Map<string, number>> {
  const rows = await db.query<{ h: string; n: string }>(
    `SELECT encode(sha256(raw_body), 'hex') AS h, count(*) AS n
       FROM (SELECT raw_body FROM webhook_inbox WHERE $1 = ANY (waba_ids)
             UNION ALL
             SELECT raw_body FROM webhook_deliveries WHERE $1 = ANY (waba_ids)) d
      GROUP BY 1`,
    [wabaId],
  );
  return new Map(rows.map((r) => [r.h, Number(r.n)]));
}

/**
 * Acknowledgements (200s) without a stored delivery behind them: must be 0. A processed delivery keeps no bytes (its
 * items are in `events`, migration lean_events), so bytes cannot be matched any more once processed: the check is that
 * at least as many deliveries are stored as were acknowledged (a delivery stored but not acknowledged is Meta's to
 * redeliver, and the event checks count its items once).
 */
export function ackedNotStored(acked: Map<string, number>, stored: Map<string, number>): number {
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, n) => a + n, 0);
  return Math.max(0, sum(acked) - sum(stored));
}

/**
 * The suite's own PostgreSQL (a throw-away cluster: no OS crash to survive; commits stay synchronous, so a fast
 * shutdown loses nothing) and Redis in `dir`, the schema migrated. The postgres OS user (when we are root) must reach
 * the data dir: `dir` is made world-readable.
 */
export async function startDataServices(
  dir: string,
): Promise<{ pgServer: Postgres; redis: RedisServer; databaseUrl: string }> {
  chmodSync(dir, 0o755);
  const pgServer = new Postgres({ dir, settings: ['fsync=off', 'full_page_writes=off'] });
  const redis = new RedisServer({ dir });
  await Promise.all([pgServer.start(), redis.start()]);
  await pgServer.ensureDatabases(['bmapi']);
  const databaseUrl = pgServer.url('bmapi');
  await migrate(databaseUrl);
  return { pgServer, redis, databaseUrl };
}
