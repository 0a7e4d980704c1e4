// Erasure of one contact (issue 41): "a contact with 10,000 messages among 10 M events: under 10 s, no lock that
// stalls ingest for more than 200 ms", measured in PostgreSQL alone (no API, worker or queue) through the code the
// route runs: ContactsService.erase (DELETE /business-accounts/{wabaId}/contacts/{phoneOrUserId}) over the app's Db.
//
//   npm run bench:erasure                                                      (quick: 1e5 events, 10,000 messages)
//   BENCH_ERASURE_EVENTS=1e7 BENCH_ERASURE_MESSAGES=1e4 npm run bench:erasure   (the recorded run)
//
// The database: BENCH_ERASURE_EVENTS events of ~20 business accounts (Zipf-like skew, the largest ~31 %) over the
// last BENCH_ERASURE_DAYS (42) days in weekly partitions, a quarter as many raw webhook deliveries and a fifth as
// many messages (bench/lib/storage-data.ts, the rows bench/storage.ts measures), a conversation window for every
// customer, marketing preferences and blocks for some, three campaigns. Then ONE contact on the largest account with
// BENCH_ERASURE_MESSAGES messages both ways over the same days (up to now): their status and inbound events, one raw
// webhook body per event (every third batches another user's item beside the contact's, so the erasure rewrites it
// instead of deleting it), a recipient in each campaign, a window, a marketing preference, a block, an idempotency
// record and an audit entry naming the number.
//
// Measured: the erasure's wall time, per phase (messages with their status events; the contact's other events; raw
// bodies; the rest), its transactions (count, longest: the longest any row lock is held), the statements the
// service sent (count, rows, time; pg_stat_statements: their rows, buffers and WAL bytes), the server's WAL over
// the erasure (pg_current_wal_lsn, the inserter's included). Meanwhile an inserter stores 10 status events every
// 10 ms into the same business account through EventsRepository.insert (as bench/storage.ts's drop part does; the
// same account, so it meets the erasure's event_counts rows): its worst latency before, during and after, and every
// lock wait seen meanwhile (pg_stat_activity every 20 ms, with the statement it waited behind), which tells a lock
// from a busy host. The whole database is searched for the contact's number before (it must be in all 9 tables it
// was stored in) and for the number and words after (test/utils/db-search.ts): the bench fails if anything is left,
// or if the other users' items of the batched bodies are gone. EXPLAIN (ANALYZE, BUFFERS) of the
// statements that took the most time (run again in a rolled-back transaction after the erasure) is printed and kept.
//
// PostgreSQL: DATABASE_URL (the bench creates erasure_<pid>_main next to the given database and drops it afterwards
// unless BENCH_ERASURE_KEEP=1), or a private one in BENCH_ERASURE_STATE_DIR (.local/bench/erasure-services) started
// at nice 10 with pg_stat_statements preloaded. Disk: ~1.5 KB per event with the deliveries and messages (10 M: ~18 GB).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { migrate } from '../scripts/stack/app.js';
import { BusinessAccountsRepository } from '../src/accounts/business-accounts/business-accounts.repository.js';
import { BlockedUsersRepository } from '../src/accounts/users/blocked-users.repository.js';
import { MarketingPreferencesRepository } from '../src/accounts/users/marketing-preferences.repository.js';
import { AuditLogsRepository } from '../src/audit/audit-logs.repository.js';
import { AuditService } from '../src/audit/audit.service.js';
import type { ConsoleScope } from '../src/auth/request-scope.js';
import { CampaignRecipientsRepository } from '../src/campaigns/campaign-recipients.repository.js';
import { ContactHash } from '../src/contacts/contact-hash.js';
import { ContactsService, type ErasureCounts } from '../src/contacts/contacts.service.js';
import { AppConfig } from '../src/core/config/app-config.js';
import { Db, type Tx } from '../src/core/db/db.js';
import { UnitOfWork } from '../src/core/db/unit-of-work.js';
import { EventsRepository } from '../src/events/events.repository.js';
import { ConversationWindowsRepository } from '../src/messages/conversation-windows.repository.js';
import { MessagesRepository } from '../src/messages/messages.repository.js';
import { IdempotencyKeysRepository } from '../src/messages/send/idempotency-keys.repository.js';
import { WebhookDeliveriesRepository } from '../src/webhooks/deliveries/webhook-deliveries.repository.js';
import { whereInDatabase, type Hit } from '../test/utils/db-search.js';
import { BENCH_LOCAL, log } from './lib/bench.js';
import {
  BenchServer,
  Inserter,
  fmtConditions,
  loadAvg,
  relayout,
  settle,
  stats,
  weeklyLayout,
  type Conditions,
  type Stats,
} from './lib/pg-bench.js';
import { fmt, machine, printMachine, writeResult } from './lib/report.js';
import {
  DELIVERIES_SQL,
  MESSAGES_SQL,
  accounts,
  fmtInt,
  insertAccounts,
  loadRows,
  type Stage,
} from './lib/storage-data.js';

const num = (v: string | undefined, d: number) => (v === undefined || v.trim() === '' ? d : Number(v));
const EVENTS = Math.round(num(process.env.BENCH_ERASURE_EVENTS, 1e5));
const MESSAGES = Math.round(num(process.env.BENCH_ERASURE_MESSAGES, 1e4));
const DAYS = num(process.env.BENCH_ERASURE_DAYS, 42);
const KEEP = process.env.BENCH_ERASURE_KEEP === '1';
const DB_NAME = `${process.env.BENCH_ERASURE_DB_PREFIX ?? `erasure_${process.pid}_`}main`;
const TARGET_S = 10;
const TARGET_STALL_MS = 200;
const ACCOUNTS = accounts(20);
const DAY_MS = 86_400_000;
/** The contact (on the largest account, index 0), the words only their messages hold, and the other users batched with them. */
const CONTACT = '447999000123';
const WORD = `quokka${randomBytes(5).toString('hex')}`;
const BYSTANDER_PREFIX = '447888';

const server = new BenchServer({
  stateDir: process.env.BENCH_ERASURE_STATE_DIR ?? path.join(BENCH_LOCAL, 'erasure-services'),
  dbName: 'erasure',
  settings: 'shared_buffers=1GB max_wal_size=4GB checkpoint_timeout=30min shared_preload_libraries=pg_stat_statements',
  keep: KEEP,
  log,
  prefix: DB_NAME.replace(/main$/, ''),
});

// ---------------------------------------------------------------------------------------------------------
// the data

/** Background rows next to the events: every customer's window, some preferences and blocks, three campaigns. */
async function loadSmallTables(db: pg.Pool, accountIds: string[], customers: number): Promise<void> {
  const a = ACCOUNTS;
  await db.query(
    `INSERT INTO conversation_windows (phone_number_id, recipient, waba_id, last_inbound_at)
     SELECT ($2::text[])[1 + g % 20], (447000000000 + g)::text, ($1::text[])[1 + g % 20], now() - (g % 1440) * interval '1 minute'
       FROM generate_series(0, $3::bigint - 1) AS g`,
    [a.wabaIds, a.phoneNumberIds, customers],
  );
  await db.query(
    `INSERT INTO marketing_preferences (business_account_id, "user", value, source, updated_at)
     SELECT ($1::uuid[])[1 + g % 20], (447000000000 + g)::text, 'stop', 'user_message', now()
       FROM generate_series(0, $2::bigint - 1, 10) AS g`,
    [accountIds, customers],
  );
  await db.query(
    `INSERT INTO blocked_users (business_account_id, phone_number_id, "user", created_at)
     SELECT ($1::uuid[])[1 + g % 20], ($2::text[])[1 + g % 20], (447000000000 + g)::text, now()
       FROM generate_series(0, $3::bigint - 1, 100) AS g`,
    [accountIds, a.phoneNumberIds, customers],
  );
  const perCampaign = Math.max(1000, Math.round(customers / 10));
  for (let c = 0; c < 3; c++) {
    const id = (
      await db.query<{ id: string }>(
        `INSERT INTO campaigns (business_account_id, name, phone_number_id, template_name, template_language, status, total, updated_at)
         VALUES ($1, $2, $3, 'order_update', 'en_US', 'completed', $4, now()) RETURNING id`,
        [accountIds[0], `Bench campaign ${c + 1}`, a.phoneNumberIds[0], perCampaign + 1],
      )
    ).rows[0]!.id;
    await db.query(
      `INSERT INTO campaign_recipients (campaign_id, position, "to", components, state)
       SELECT $1, p, CASE WHEN p = $3 THEN $4 ELSE (447000000000 + p * 7 % $5::bigint)::text END,
              jsonb_build_array(jsonb_build_object('type', 'body', 'parameters', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'A-' || p)))),
              'claimed'
         FROM generate_series(0, $2::int) AS p`,
      [id, perCampaign, Math.floor(perCampaign / (c + 2)), CONTACT, Math.max(1, customers)],
    );
  }
}

interface ContactRows {
  messages: number;
  events: number;
  deliveries: number;
  batched: number;
}

/**
 * The contact's MESSAGES messages on the largest account, alternately to and from them, spread over the window up to
 * now; their events (sent, delivered, read for an outbound one; the inbound one itself); one raw body per event,
 * every third with another user's item beside the contact's; and one of each small record.
 */
async function loadContact(db: pg.Pool, accountId: string, organizationId: string): Promise<ContactRows> {
  const waba = ACCOUNTS.wabaIds[0]!;
  const phone = ACCOUNTS.phoneNumberIds[0]!;
  const t0 = new Date(Date.now() - DAYS * DAY_MS);
  const spanS = (DAYS * DAY_MS) / 1000 - 600;
  const c = await db.connect();
  try {
    await c.query('SET synchronous_commit = off');
    const messages = await c.query(
      `INSERT INTO messages (business_account_id, phone_number_id, "to", "from", direction, type, content, status, upstream_message_id,
                             accepted_at, sent_at, delivered_at, read_at, pricing_model, pricing_category, pricing_type, pricing_billable,
                             created_at, updated_at)
       SELECT $1, $2, CASE WHEN i % 2 = 0 THEN $3 END, CASE WHEN i % 2 = 1 THEN $3 END,
              CASE WHEN i % 2 = 0 THEN 'outbound' ELSE 'inbound' END, 'text',
              jsonb_build_object('body', CASE WHEN i % 2 = 0 THEN 'About your order, ' || $4 || ' #' || i ELSE 'My secret is ' || $4 || ' #' || i END),
              CASE WHEN i % 2 = 0 THEN 'read' ELSE 'received' END,
              'wamid.ERASE' || lpad(i::text, 8, '0') || 'FQIAERgSQzA2RjI1QjQ0',
              CASE WHEN i % 2 = 0 THEN x.at END, CASE WHEN i % 2 = 0 THEN x.at + interval '1 second' END,
              CASE WHEN i % 2 = 0 THEN x.at + interval '2 seconds' END, CASE WHEN i % 2 = 0 THEN x.at + interval '3 seconds' END,
              CASE WHEN i % 2 = 0 THEN 'PMP' END, CASE WHEN i % 2 = 0 THEN 'utility' END, CASE WHEN i % 2 = 0 THEN 'regular' END,
              CASE WHEN i % 2 = 0 THEN true END, x.at, x.at + interval '3 seconds'
         FROM generate_series(0, $5::int - 1) AS i
        CROSS JOIN LATERAL (SELECT $6::timestamptz + (i + 0.5) / $5::int * $7::float8 * interval '1 second' AS at) AS x`,
      [accountId, phone, CONTACT, WORD, MESSAGES, t0, spanS],
    );
    // Their events, from the messages just stored: 3 statuses per outbound one, the inbound one itself.
    const events = await c.query(
      `INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                           upstream_timestamp, raw, dedupe_key, processed, created_at)
       SELECT 900000000 + m.id * 3 + s.k, $1, m.phone_number_id, events_type_code('messages'),
              events_kind_code(CASE WHEN m.direction = 'outbound' THEN 'status_update' ELSE 'inbound_message' END),
              CASE WHEN m.direction = 'outbound' THEN 'Message ' || s.status ELSE 'Inbound text from ' || $2 END,
              events_status_code(CASE WHEN m.direction = 'outbound' THEN s.status END), $2, m.upstream_message_id, x.at,
              CASE WHEN m.direction = 'outbound'
                   THEN jsonb_build_object('id', m.upstream_message_id, 'status', s.status, 'timestamp', x.ts, 'recipient_id', $2,
                          'pricing', jsonb_build_object('billable', true, 'pricing_model', 'PMP', 'category', 'utility', 'type', 'regular'))
                   ELSE jsonb_build_object('id', m.upstream_message_id, 'from', $2, 'type', 'text', 'timestamp', x.ts, 'text', m.content,
                          'contact', jsonb_build_object('wa_id', $2, 'profile', jsonb_build_object('name', 'Ana ' || $3))) END,
              events_dedupe_hash(CASE WHEN m.direction = 'outbound' THEN 'status:' || m.upstream_message_id || ':' || s.status || ':' || x.ts
                   ELSE 'inbound:' || m.upstream_message_id END),
              true, x.at
         FROM messages m
        CROSS JOIN LATERAL (SELECT k, (ARRAY['sent', 'delivered', 'read'])[k + 1] AS status FROM generate_series(0, 2) AS k) AS s
        CROSS JOIN LATERAL (SELECT m.created_at + (s.k + 1) * interval '1 second' AS at,
                                   extract(epoch FROM m.created_at + (s.k + 1) * interval '1 second')::bigint::text AS ts) AS x
        WHERE m.business_account_id = $4 AND (m."to" = $2 OR m."from" = $2) AND (m.direction = 'outbound' OR s.k = 0)`,
      [waba, CONTACT, WORD, accountId],
    );
    // One raw body per event as Meta posts it; every third also holds another user's item (rewritten, not deleted).
    const deliveries = await c.query(
      `INSERT INTO webhook_deliveries (raw_body, signature, waba_ids, batch_id, status, attempts, event_count, received_at, processed_at)
       SELECT convert_to(jsonb_build_object('object', 'whatsapp_business_account', 'entry', jsonb_build_array(jsonb_build_object(
                'id', $1::text, 'changes', jsonb_build_array(jsonb_build_object('field', 'messages', 'value',
                  jsonb_build_object('messaging_product', 'whatsapp',
                                     'metadata', jsonb_build_object('display_phone_number', '15550001111', 'phone_number_id', e.phone_number_id))
                  || CASE WHEN e.kind = 'status_update'
                          THEN jsonb_build_object('statuses', jsonb_build_array(e.raw) || CASE WHEN b.batched THEN jsonb_build_array(
                                 jsonb_build_object('id', 'wamid.OTHER' || e.id, 'status', e.status, 'timestamp', e.raw->>'timestamp', 'recipient_id', b.other)) ELSE '[]' END)
                          ELSE jsonb_build_object('contacts', jsonb_build_array(e.raw->'contact') || CASE WHEN b.batched THEN jsonb_build_array(
                                 jsonb_build_object('wa_id', b.other, 'profile', jsonb_build_object('name', 'Bystander'))) ELSE '[]' END,
                                 'messages', jsonb_build_array(e.raw - 'contact') || CASE WHEN b.batched THEN jsonb_build_array(
                                 jsonb_build_object('id', 'wamid.OTHER' || e.id, 'from', b.other, 'type', 'text', 'timestamp', e.raw->>'timestamp',
                                                    'text', jsonb_build_object('body', 'Hello from someone else'))) ELSE '[]' END) END)))))::text, 'UTF8'),
              'sha256=' || md5(e.dedupe_key), ARRAY[$1::text], 'c' || e.id, 'processed', 1, CASE WHEN b.batched THEN 2 ELSE 1 END,
              e.created_at, e.created_at + interval '40 milliseconds'
         FROM events e
        CROSS JOIN LATERAL (SELECT e.id % 3 = 0 AS batched, $3 || lpad((e.id % 1000000)::text, 6, '0') AS other) AS b
        WHERE e.waba_id = $1 AND e.recipient = $2`,
      [waba, CONTACT, BYSTANDER_PREFIX],
    );
    const batched = Number(
      (
        await c.query<{ n: string }>(
          `SELECT count(*) AS n FROM webhook_deliveries WHERE waba_ids @> ARRAY[$1::text] AND event_count = 2 AND batch_id LIKE 'c%'`,
          [waba],
        )
      ).rows[0]!.n,
    );
    await c.query(
      `INSERT INTO conversation_windows (phone_number_id, recipient, waba_id, last_inbound_at) VALUES ($1, $2, $3, now())
       ON CONFLICT DO NOTHING`,
      [phone, CONTACT, waba],
    );
    await c.query(
      `INSERT INTO marketing_preferences (business_account_id, "user", value, source, detail, updated_at) VALUES ($1, $2, 'stop', 'user_message', $3, now())`,
      [accountId, CONTACT, `STOP (${WORD})`],
    );
    await c.query(
      `INSERT INTO blocked_users (business_account_id, phone_number_id, "user", wa_id) VALUES ($1, $2, $3, $3)`,
      [accountId, phone, CONTACT],
    );
    const key = (
      await c.query<{ id: string }>(
        `INSERT INTO api_keys (id, organization_id, business_account_id, name, access_key, secret_hash)
         VALUES (gen_random_uuid(), $1, $2, 'bench', $3, 'x') RETURNING id`,
        [organizationId, accountId, `ak_${randomBytes(8).toString('hex')}`],
      )
    ).rows[0]!.id;
    await c.query(
      `INSERT INTO idempotency_keys (api_key_id, key, request_hash, state, response_body, locked_until, expires_at)
       VALUES ($1, 'retry-1', 'h', 'completed', $2, now(), now() + interval '1 day')`,
      [key, JSON.stringify({ messages: [{ id: 'wamid.ERASEdone' }], contacts: [{ input: CONTACT, wa_id: CONTACT }] })],
    );
    await c.query(
      `INSERT INTO audit_logs (organization_id, action, target_type, target_id, details) VALUES ($1, 'user.blocked', 'business_account', $2, $3)`,
      [organizationId, waba, JSON.stringify({ user: CONTACT })],
    );
    return {
      messages: messages.rowCount ?? 0,
      events: events.rowCount ?? 0,
      deliveries: deliveries.rowCount ?? 0,
      batched,
    };
  } finally {
    c.release();
  }
}

// ---------------------------------------------------------------------------------------------------------
// the erasure, timed

/** One statement the erasure's pool sent: its text, values, time (round trip) and rows. */
interface Sent {
  text: string;
  values: unknown[];
  ms: number;
  rows: number;
}

/**
 * Records every statement of the pool's connections (the client side of pg_stat_statements: texts, values, times);
 * both forms of client.query: the promise (transactions, Kysely) and the callback (pool.query).
 */
function recordStatements(pool: pg.Pool, into: Sent[]): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | pg.QueryConfig;
      const text = typeof first === 'string' ? first : first.text;
      const values = ((typeof first === 'string' ? args[1] : first.values) ?? []) as unknown[];
      const t0 = performance.now();
      const done = (rows: number) =>
        into.push({ text, values: Array.isArray(values) ? values : [], ms: performance.now() - t0, rows });
      const last = args.length - 1;
      if (typeof args[last] === 'function') {
        const callback = args[last] as (err: Error | null, r?: pg.QueryResult) => void;
        args[last] = (err: Error | null, r?: pg.QueryResult) => {
          done(err ? -1 : (r?.rowCount ?? 0));
          callback(err, r);
        };
        return query(...args);
      }
      const out = query(...args);
      if (out instanceof Promise)
        void out.then(
          (r: pg.QueryResult) => done(r.rowCount ?? 0),
          () => done(-1),
        );
      return out;
    };
  });
}

/**
 * A statement's text with its parameters and constants as `?`: pg_stat_statements keeps the text with constants
 * replaced by parameters (`position(… in raw_body) > 0` is stored as `> $4`), the client sent them as written.
 */
const shape = (text: string) =>
  text
    .replace(/'(?:[^']|'')*'/g, '?')
    .replace(/\$\d+|\b\d+\b/g, '?')
    .replace(/\s+/g, ' ')
    .trim();

/** Calls of the service into its repositories, by phase of the erasure. */
interface Call {
  phase: string;
  t0: number;
  t1: number;
}

/** The repository, its every method timed and put in the phase `phaseOf` names for the call. */
function timed<T extends object>(repo: T, calls: Call[], phaseOf: (method: string, args: unknown[]) => string): T {
  return new Proxy(repo, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return async (...args: unknown[]) => {
        const t0 = performance.now();
        try {
          return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          calls.push({ phase: phaseOf(prop, args), t0, t1: performance.now() });
        }
      };
    },
  });
}

interface LockWait {
  /** From the first to the last time it was seen waiting (a wait shorter than the 20 ms between looks may be missed). */
  ms: number;
  lock: string;
  waiter: string;
  blockers: string;
}

/** Who waits for a lock in the database while the erasure runs, and behind which statement. */
class LockWatch {
  private running = false;
  private done?: Promise<void>;
  private readonly seen = new Map<string, LockWait & { first: number }>();

  constructor(private readonly pool: pg.Pool) {}

  start(): void {
    this.running = true;
    this.done = (async () => {
      while (this.running) {
        const { rows } = await this.pool.query<{ key: string; lock: string; waiter: string; blockers: string | null }>(
          `SELECT a.pid || '@' || a.query_start AS key, a.wait_event AS lock, left(regexp_replace(a.query, '\\s+', ' ', 'g'), 80) AS waiter,
                  (SELECT string_agg(left(regexp_replace(b.query, '\\s+', ' ', 'g'), 80), ' | ') FROM pg_stat_activity b
                    WHERE b.pid = ANY (pg_blocking_pids(a.pid))) AS blockers
             FROM pg_stat_activity a WHERE a.datname = current_database() AND a.wait_event_type = 'Lock'`,
        );
        const now = performance.now();
        for (const r of rows) {
          const w = this.seen.get(r.key) ?? {
            first: now,
            ms: 0,
            lock: r.lock,
            waiter: r.waiter,
            blockers: r.blockers ?? '?',
          };
          w.ms = now - w.first;
          this.seen.set(r.key, w);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
  }

  /** The waits seen, longest first. */
  async stop(): Promise<LockWait[]> {
    this.running = false;
    await this.done;
    return [...this.seen.values()].map(({ first: _f, ...w }) => w).sort((a, b) => b.ms - a.ms);
  }
}

/** The unit of work, each transaction's length kept: the longest is the longest any of the erasure's row locks is held. */
class TimedUnitOfWork extends UnitOfWork {
  readonly transactions: { t0: number; ms: number }[] = [];

  override async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await super.run(work);
    } finally {
      this.transactions.push({ t0, ms: performance.now() - t0 });
    }
  }
}

/** A plan without the long lists of values it repeats ('{wamid…,…}' of 500 items): the first two and how many. */
const abbreviated = (plan: string) =>
  plan.replace(/'\{([^}]{200,})\}'/g, (_, list: string) => {
    const items = list.split(',');
    return `'{${items.slice(0, 2).join(',')},… ${items.length} items}'`;
  });

const PHASES = [
  'lookup',
  'messages + their status events',
  "the contact's other events",
  'raw webhook bodies',
  'the rest',
];

interface PgStatement {
  query: string;
  calls: number;
  rows: number;
  totalMs: number;
  sharedHit: number;
  sharedRead: number;
  walBytes: number;
}

interface ErasureResult {
  counts: ErasureCounts;
  wallS: number;
  phases: { phase: string; seconds: number; calls: number }[];
  transactions: { count: number; longestMs: number; p50Ms: number; longestByPhase: Record<string, number> };
  statements: {
    count: number;
    rows: number;
    ms: number;
    top: { text: string; calls: number; ms: number; maxMs: number; rows: number }[];
  };
  pgStatStatements: { statements: number; calls: number; rows: number; sharedBuffers: number; walBytes: number } | null;
  serverWalBytes: number;
  inserts: { before: Stats; during: Stats; after: Stats };
  /** Lock waits seen while the erasure ran (pg_stat_activity every 20 ms): the stalls that were locks, not the host. */
  lockWaits: LockWait[];
  conditions: Conditions;
  plans: { text: string; plan: string }[];
}

async function eraseMeasured(url: string, organizationId: string, operatorId: string): Promise<ErasureResult> {
  const config = Object.assign(new AppConfig(), {
    databaseUrl: url,
    databaseDirectUrl: url,
    databasePoolSize: 10,
    databasePreparedStatements: 'named' as const,
    encryptionKeys: [{ id: 'k0', key: randomBytes(32) }],
  });
  const db = new Db(config);
  const sent: Sent[] = [];
  recordStatements(db.pool, sent);
  const calls: Call[] = [];
  const uow = new TimedUnitOfWork(db);
  const phaseOfEvents = (_: string, args: unknown[]) =>
    ((args[2] as { wamids?: string[] } | undefined)?.wamids?.length ?? 0) > 0 ? PHASES[1]! : PHASES[2]!;
  const service = new ContactsService(
    uow,
    timed(new BusinessAccountsRepository(db), calls, () => PHASES[0]!),
    timed(new MessagesRepository(db), calls, (m) => (m === 'addressesOf' ? PHASES[0]! : PHASES[1]!)),
    timed(new EventsRepository(db), calls, phaseOfEvents),
    timed(new WebhookDeliveriesRepository(db), calls, () => PHASES[3]!),
    timed(new CampaignRecipientsRepository(db), calls, () => PHASES[4]!),
    timed(new ConversationWindowsRepository(db), calls, () => PHASES[4]!),
    timed(new MarketingPreferencesRepository(db), calls, () => PHASES[4]!),
    timed(new BlockedUsersRepository(db), calls, () => PHASES[4]!),
    timed(new IdempotencyKeysRepository(db), calls, () => PHASES[4]!),
    timed(new AuditService(new AuditLogsRepository(db)), calls, () => PHASES[4]!),
    new ContactHash(config),
  );
  const operator: ConsoleScope = {
    operatorId,
    organizationId,
    email: 'erasure-bench@example.com',
    sessionId: 'bench',
    role: 'admin',
    platformAdmin: false,
  };
  const monitor = new pg.Pool({ connectionString: url, max: 2 });
  const ingest = new pg.Pool({ connectionString: url, max: 2 });
  const statStatements = await monitor
    .query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
    .then(() => monitor.query('SELECT pg_stat_statements_reset()'))
    .then(() => true)
    .catch((e: Error) => {
      log(`pg_stat_statements not available (${e.message}): the PostgreSQL-side figures are left out`);
      return false;
    });
  try {
    const { value, conditions } = await server.measured(async () => {
      const inserter = new Inserter(ingest, new EventsRepository(Db.over(ingest)), 10, 10, {
        wabaId: ACCOUNTS.wabaIds[0]!,
        phoneNumberId: ACCOUNTS.phoneNumberIds[0]!,
      });
      inserter.start();
      const locks = new LockWatch(monitor);
      await new Promise((r) => setTimeout(r, 3000));
      const lsn0 = (await monitor.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]!.l;
      if (statStatements) await monitor.query('SELECT pg_stat_statements_reset()');
      locks.start();
      const e0 = performance.now();
      const counts = await service.erase(operator, ACCOUNTS.wabaIds[0]!, CONTACT);
      const e1 = performance.now();
      const lockWaits = await locks.stop();
      const wal = (
        await monitor.query<{ b: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS b', [
          lsn0,
        ])
      ).rows[0]!.b;
      log(`erased in ${((e1 - e0) / 1000).toFixed(3)} s: ${JSON.stringify(counts)}`);
      await new Promise((r) => setTimeout(r, 2000));
      await inserter.stop();
      return {
        counts,
        wallS: (e1 - e0) / 1000,
        serverWalBytes: Number(wal),
        lockWaits,
        inserts: {
          before: inserter.between(inserter.samples[0]?.at ?? 0, e0 - 1),
          during: inserter.between(e0, e1),
          after: inserter.between(e1 + 1, Number.MAX_SAFE_INTEGER),
        },
      };
    });
    const phases = PHASES.map((phase) => {
      const mine = calls.filter((c) => c.phase === phase);
      const seconds = mine.length
        ? (Math.max(...mine.map((c) => c.t1)) - Math.min(...mine.map((c) => c.t0))) / 1000
        : 0;
      return { phase, seconds, calls: mine.length };
    });
    const tx = stats(uow.transactions.map((t) => t.ms));
    // Each transaction's phase: that of the first repository call inside it.
    const longestByPhase: Record<string, number> = {};
    for (const t of uow.transactions) {
      const phase = calls.find((c) => c.t0 >= t.t0 && c.t0 <= t.t0 + t.ms)?.phase ?? 'unknown';
      longestByPhase[phase] = Math.max(longestByPhase[phase] ?? 0, t.ms);
    }
    const erasureTexts = new Set(sent.map((s) => shape(s.text)));
    const byText = new Map<
      string,
      { text: string; calls: number; ms: number; maxMs: number; rows: number; slowest: Sent }
    >();
    for (const s of sent) {
      const e = byText.get(s.text) ?? { text: s.text, calls: 0, ms: 0, maxMs: 0, rows: 0, slowest: s };
      e.calls += 1;
      e.ms += s.ms;
      e.rows += Math.max(0, s.rows);
      if (s.ms >= e.maxMs) {
        e.maxMs = s.ms;
        e.slowest = s;
      }
      byText.set(s.text, e);
    }
    const ranked = [...byText.values()]
      .filter((e) => !/^(BEGIN|COMMIT|ROLLBACK)/i.test(e.text))
      .sort((a, b) => b.ms - a.ms);
    let pgStat: ErasureResult['pgStatStatements'] = null;
    if (statStatements) {
      const { rows } = await monitor.query<{
        query: string;
        calls: string;
        rows: string;
        total: number;
        hit: string;
        read: string;
        wal: string;
      }>(
        `SELECT query, calls, rows, total_exec_time AS total, shared_blks_hit AS hit, shared_blks_read AS read, wal_bytes::bigint AS wal
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      const mine: PgStatement[] = rows
        .filter((r) => erasureTexts.has(shape(r.query)) && !/^(BEGIN|COMMIT|ROLLBACK)/i.test(r.query))
        .map((r) => ({
          query: r.query,
          calls: Number(r.calls),
          rows: Number(r.rows),
          totalMs: r.total,
          sharedHit: Number(r.hit),
          sharedRead: Number(r.read),
          walBytes: Number(r.wal),
        }));
      pgStat = {
        statements: mine.length,
        calls: mine.reduce((a, r) => a + r.calls, 0),
        rows: mine.reduce((a, r) => a + r.rows, 0),
        sharedBuffers: mine.reduce((a, r) => a + r.sharedHit + r.sharedRead, 0),
        walBytes: mine.reduce((a, r) => a + r.walBytes, 0),
      };
    }
    // Where the time went: the plans of the statements that took the most, with the values of their slowest run, run
    // again in a transaction that is rolled back (after the erasure, so they find nothing: the scans are what shows).
    const plans: { text: string; plan: string }[] = [];
    const explained = [
      ...ranked.slice(0, 4),
      ...ranked.slice(4).filter((e) => /^\s*select/i.test(e.text) && e.ms / e.calls > 1),
    ];
    for (const e of explained) {
      const c = await monitor.connect();
      try {
        await c.query('BEGIN');
        const { rows } = await c.query<{ 'QUERY PLAN': string }>({
          text: `EXPLAIN (ANALYZE, BUFFERS) ${e.text}`,
          values: e.slowest.values,
        });
        plans.push({ text: e.text, plan: abbreviated(rows.map((r) => r['QUERY PLAN']).join('\n')) });
      } catch (err) {
        plans.push({ text: e.text, plan: `(EXPLAIN failed: ${(err as Error).message})` });
      } finally {
        await c.query('ROLLBACK').catch(() => undefined);
        c.release();
      }
    }
    return {
      ...value,
      phases,
      transactions: { count: tx.runs, longestMs: tx.max, p50Ms: tx.p50, longestByPhase },
      statements: {
        count: sent.filter((s) => !/^(BEGIN|COMMIT|ROLLBACK)/i.test(s.text)).length,
        rows: sent.reduce((a, s) => a + Math.max(0, s.rows), 0),
        ms: sent.reduce((a, s) => a + s.ms, 0),
        top: ranked.slice(0, 8).map(({ slowest: _s, ...e }) => e),
      },
      pgStatStatements: pgStat,
      conditions,
      plans,
    };
  } finally {
    await db.close();
    await ingest.end();
    await monitor.end();
  }
}

// ---------------------------------------------------------------------------------------------------------
// proof that nothing is left

interface Verification {
  contactHits: Hit[];
  wordHits: Hit[];
  bystandersKept: number;
  seconds: number;
}

/** Every table the bench stores the contact in (the search must find them all before the erasure). */
const STORED_IN = [
  'audit_logs',
  'blocked_users',
  'campaign_recipients',
  'conversation_windows',
  'events',
  'idempotency_keys',
  'marketing_preferences',
  'messages',
  'webhook_deliveries',
];

/** The tables of these hits, a partition named by its parent (events_p20261123 → events). */
const tablesOf = (hits: Hit[]) => [...new Set(hits.map((h) => h.table.replace(/_(p\d{8}|history)$/, '')))].sort();

async function verify(url: string): Promise<Verification> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const t0 = performance.now();
  try {
    const db = { db: Db.over(pool) };
    const contactHits = await whereInDatabase(db, CONTACT);
    const wordHits = await whereInDatabase(db, WORD);
    const bystandersKept = Number(
      (
        await pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM webhook_deliveries
            WHERE waba_ids @> ARRAY[$1::text] AND redacted_at IS NOT NULL AND position(convert_to($2, 'UTF8') in raw_body) > 0`,
          [ACCOUNTS.wabaIds[0], `"${BYSTANDER_PREFIX}`],
        )
      ).rows[0]!.n,
    );
    return { contactHits, wordHits, bystandersKept, seconds: (performance.now() - t0) / 1000 };
  } finally {
    await pool.end();
  }
}

// ---------------------------------------------------------------------------------------------------------

const p = (s: Stats) => `p50 ${fmt(s.p50, 1)} / p99 ${fmt(s.p99, 1)} / max ${fmt(s.max, 1)} ms (${s.runs})`;

async function main(): Promise<void> {
  const m = machine();
  printMachine(m);
  await server.start();
  const settings = await server.settings();
  log(
    `PostgreSQL ${settings.server_version} (postmaster pid ${server.postmasterPid || 'unknown'}, nice ${server.nice}); ${JSON.stringify(settings)}`,
  );
  log(`${fmtInt(EVENTS)} events, a contact with ${fmtInt(MESSAGES)} messages, over ${DAYS} days`);
  const url = await server.createDb(DB_NAME);
  await migrate(url);
  const db = new pg.Pool({ connectionString: url, max: 4 });
  try {
    // The data.
    const load0 = performance.now();
    const now = Date.now();
    const windowStart = new Date(now - DAYS * DAY_MS);
    for (const table of ['events', 'webhook_deliveries'])
      await relayout(db, (c) => weeklyLayout(c, windowStart, new Date(now + 28 * DAY_MS), table), table);
    const accountIds = await insertAccounts(db, ACCOUNTS);
    const { organizationId, operatorId } = (
      await db.query<{ organizationId: string; operatorId: string }>(
        `WITH o AS (SELECT organization_id FROM business_accounts WHERE id = $1)
         INSERT INTO operators (id, organization_id, email, password_hash, role)
         SELECT gen_random_uuid(), organization_id, 'erasure-bench@example.com', 'x', 'admin' FROM o
         RETURNING organization_id AS "organizationId", id AS "operatorId"`,
        [accountIds[0]],
      )
    ).rows[0]!;
    const stage = (rows: number): Stage => ({
      from: 0,
      to: Math.max(1, rows) - 1,
      t0: windowStart,
      spanS: (DAYS * DAY_MS) / 1000 - 3600,
    });
    const events = await loadRows(db, stage(EVENTS), ACCOUNTS, { log, label: 'events' });
    const deliveries = await loadRows(db, stage(Math.round(EVENTS / 4)), ACCOUNTS, {
      sql: DELIVERIES_SQL,
      log,
      label: 'webhook deliveries',
    });
    const messages = await loadRows(db, stage(Math.round(EVENTS / 5)), ACCOUNTS, {
      sql: MESSAGES_SQL,
      extra: [accountIds],
      log,
      label: 'messages',
    });
    const customers = Math.ceil(EVENTS / 20);
    await loadSmallTables(db, accountIds, customers);
    const contact = await loadContact(db, accountIds[0]!, organizationId);
    log(
      `the contact: ${fmtInt(contact.messages)} messages, ${fmtInt(contact.events)} events, ${fmtInt(contact.deliveries)} raw bodies (${fmtInt(contact.batched)} with another user's item)`,
    );
    const settleS = await settle(
      db,
      'events, event_counts, webhook_deliveries, messages, campaign_recipients, conversation_windows, marketing_preferences, blocked_users',
    );
    const bytes = Number(
      (await db.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b')).rows[0]!.b,
    );
    const loadS = (performance.now() - load0) / 1000;
    log(
      `loaded in ${loadS.toFixed(0)} s (events ${fmtInt(events.rows)}, deliveries ${fmtInt(deliveries.rows)}, messages ${fmtInt(messages.rows)}; settle ${settleS.toFixed(0)} s); database ${(bytes / 2 ** 30).toFixed(2)} GiB; load average ${loadAvg().join(' / ')}`,
    );

    // The erasure.
    // The search sees the contact before (so that "nothing found" afterwards means something).
    const searched0 = performance.now();
    const seenBefore = tablesOf(await whereInDatabase({ db: Db.over(db) }, CONTACT));
    log(
      `before the erasure the number is in ${seenBefore.join(', ')} (searched in ${((performance.now() - searched0) / 1000).toFixed(1)} s)`,
    );
    const r = await eraseMeasured(url, organizationId, operatorId);
    const verification = await verify(url);

    // The summary.
    const la = r.conditions.loadAvg.join(' / ');
    const lines = [
      `erasure of a contact with ${fmtInt(contact.messages)} messages (${fmtInt(contact.events)} events, ${fmtInt(contact.deliveries)} raw bodies) among ${fmtInt(events.rows)} events: **${fmt(r.wallS, 3)} s** wall; load average ${la}`,
      ...r.phases.map(
        (ph) => `  phase ${ph.phase}: ${fmt(ph.seconds, 3)} s (${ph.calls} repository calls); load average ${la}`,
      ),
      `  transactions: ${r.transactions.count}, longest ${fmt(r.transactions.longestMs, 1)} ms, p50 ${fmt(r.transactions.p50Ms, 1)} ms; longest by phase ${Object.entries(
        r.transactions.longestByPhase,
      )
        .map(([k, v]) => `${k} ${fmt(v, 1)} ms`)
        .join(', ')}; load average ${la}`,
      `  statements sent: ${fmtInt(r.statements.count)} (${fmtInt(r.statements.rows)} rows, ${fmt(r.statements.ms / 1000, 3)} s round trips)` +
        (r.pgStatStatements
          ? `; pg_stat_statements: ${fmtInt(r.pgStatStatements.calls)} calls, ${fmtInt(r.pgStatStatements.rows)} rows, ${fmtInt(r.pgStatStatements.sharedBuffers)} shared buffers, WAL ${fmt(r.pgStatStatements.walBytes / 2 ** 20, 1)} MiB`
          : '') +
        `; server WAL meanwhile ${fmt(r.serverWalBytes / 2 ** 20, 1)} MiB (the inserter's included); load average ${la}`,
      `  inserter (10 events / 10 ms, same account) before: ${p(r.inserts.before)}; load average ${la}`,
      `  inserter during: ${p(r.inserts.during)}; load average ${la}`,
      `  inserter after: ${p(r.inserts.after)}; load average ${la}`,
      `  lock waits while it ran (pg_stat_activity every 20 ms): ${
        r.lockWaits.length === 0
          ? 'none seen'
          : `${r.lockWaits.length}, longest ~${fmt(r.lockWaits[0]!.ms, 0)} ms (${r.lockWaits[0]!.waiter} waiting for ${r.lockWaits[0]!.lock} behind: ${r.lockWaits[0]!.blockers})`
      }; load average ${la}`,
      `  counts: ${JSON.stringify(r.counts)}`,
      `  afterwards: the number found in ${verification.contactHits.length ? JSON.stringify(verification.contactHits) : 'no column'}, the words in ${verification.wordHits.length ? JSON.stringify(verification.wordHits) : 'no column'}; ${fmtInt(verification.bystandersKept)} rewritten bodies still hold their other user (of ${fmtInt(contact.batched)}); searched in ${fmt(verification.seconds, 1)} s`,
    ];
    console.log(`\n${lines.join('\n')}\n`);
    console.log(`${fmtConditions(r.conditions)}\n`);
    console.log('Statements that took the most time (round trips):');
    for (const t of r.statements.top)
      console.log(
        `  ${fmt(t.ms, 1)} ms in ${t.calls} calls (max ${fmt(t.maxMs, 1)} ms, ${fmtInt(t.rows)} rows): ${t.text.replace(/\s+/g, ' ').slice(0, 200)}`,
      );
    for (const pl of r.plans)
      console.log(
        `\nEXPLAIN (ANALYZE, BUFFERS), after the erasure: ${pl.text.replace(/\s+/g, ' ').slice(0, 200)}\n${pl.plan}`,
      );
    const expected = {
      messages: contact.messages,
      events: contact.events,
      webhookBodies: contact.deliveries,
      webhookBodiesRewritten: contact.batched,
    };
    const complete =
      STORED_IN.every((table) => seenBefore.includes(table)) &&
      verification.contactHits.length === 0 &&
      verification.wordHits.length === 0 &&
      r.counts.messages === expected.messages &&
      r.counts.events === expected.events &&
      r.counts.webhookBodiesRewritten + r.counts.webhookBodiesDeleted === expected.webhookBodies &&
      r.counts.webhookBodiesRewritten === expected.webhookBodiesRewritten &&
      verification.bystandersKept === expected.webhookBodiesRewritten;
    const checks = {
      underTarget: r.wallS < TARGET_S,
      noStall: r.inserts.during.max <= TARGET_STALL_MS,
      complete,
    };
    console.log(
      `\n  ${checks.underTarget ? 'PASS' : 'MISS'}  erasure ${fmt(r.wallS, 3)} s (target < ${TARGET_S} s at 10 M events / 10,000 messages; this run: ${fmtInt(events.rows)} / ${fmtInt(contact.messages)})` +
        `\n  ${checks.noStall ? 'PASS' : 'MISS'}  worst insert during it ${fmt(r.inserts.during.max, 1)} ms (target ≤ ${TARGET_STALL_MS} ms; before it ${fmt(r.inserts.before.max, 1)} ms)` +
        `\n  ${checks.complete ? 'PASS' : 'FAIL'}  nothing of the contact left (found before in ${STORED_IN.filter((table) => seenBefore.includes(table)).length} of the ${STORED_IN.length} tables it was stored in), every count as loaded, the other users' items kept`,
    );
    writeResult('erasure', {
      machine: m,
      finishedLoadAvg: loadAvg(),
      postgres: { settings, nice: server.nice },
      config: { EVENTS, MESSAGES, DAYS, shares: ACCOUNTS.shares },
      load: {
        seconds: loadS,
        settleS,
        bytes,
        events: events.rows,
        deliveries: deliveries.rows,
        messages: messages.rows,
        contact,
      },
      expected,
      erasure: r,
      seenBefore,
      verification,
      checks,
      summary: lines,
    });
    if (!complete) throw new Error('the erasure left data of the contact behind, or removed what it should have kept');
  } finally {
    await db.end();
    await server.dropDb(DB_NAME);
  }
}

server.cleanupOnSignals();

try {
  await main();
  await server.cleanup();
  process.exit(0);
} catch (e) {
  console.error('[bench] failed:', e instanceof Error ? (e.stack ?? e.message) : e);
  await server.cleanup();
  process.exit(1);
}
