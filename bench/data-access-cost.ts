// What the typed data access (src/core/db, issue 25) costs per statement in the application's CPU, against the
// SQL text it replaced: building and compiling a Kysely query per call, and a prepared statement's run (compiled
// once; each run only binds its values). No database: the round trip is the same text either way.
//
//   npx tsx bench/data-access-cost.ts          (env: BENCH_RUNS=20000)
//
// "today's text" is the code the repositories had before issue 25 (sql-filter.ts's sqlFilter and feedSql, the
// `statement(name, text)(values)` helper), copied here so the comparison stays runnable.
import os from 'node:os';
import type { EventKind } from '../src/events/classify.js';
import {
  buildEventsFeed,
  buildEventsPage,
  type EventsFeedParams,
  eventsPageOf,
  type EventsPageParams,
} from '../src/events/events.repository.js';
import { buildMarkProcessed } from '../src/webhooks/deliveries/webhook-deliveries.repository.js';
import { builder, prepared } from '../src/core/db/statement.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 20000);

function measure(label: string, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(2000, RUNS); i++) fn(i); // warm up (JIT)
  const t0 = process.hrtime.bigint();
  let sink = 0;
  for (let i = 0; i < RUNS; i++) sink += fn(i) ? 1 : 0;
  const us = Number(process.hrtime.bigint() - t0) / 1000 / RUNS;
  console.log(`${label.padEnd(70)} ${us.toFixed(2).padStart(8)} µs${sink < 0 ? '!' : ''}`);
  return us;
}

// ---- today's text (before issue 25) ----------------------------------------------------------------------------
function sqlFilter(scope: { sql: string; value: unknown }, conditions: Array<[string, string, unknown, string]>) {
  const values: unknown[] = [scope.value];
  const parts = [scope.sql];
  let shape = '';
  for (const [column, op, value, letter] of conditions) {
    if (value === undefined) continue;
    values.push(value);
    parts.push(`${column} ${op} $${values.length}`);
    shape += letter;
  }
  return { sql: parts.join(' AND '), values, shape: shape || 'all' };
}
const EVENT_COLUMNS = `id, delivery_id AS "deliveryId", waba_id AS "wabaId", phone_number_id AS "phoneNumberId", event_type AS "eventType",
  kind, title, status, recipient, user_id AS "userId", message_id AS "messageId", upstream_timestamp AS "upstreamTimestamp", error_code AS "errorCode",
  error_title AS "errorTitle", error_detail AS "errorDetail", raw, pricing, dedupe_key AS "dedupeKey", processed, processed_at AS "processedAt",
  attempts, created_at AS "createdAt"`;
function feedSql(q: {
  table: string;
  xidColumn: string;
  columns: string;
  scope: string;
  where: { sql: string; values: unknown[] };
}): string {
  const n = q.where.values.length;
  return `WITH h AS MATERIALIZED (
            SELECT x.horizon,
                   (SELECT b.${q.xidColumn} FROM ${q.table} b WHERE b.${q.scope} AND b.${q.xidColumn} >= x.horizon ORDER BY b.${q.xidColumn} LIMIT 1) AS beyond
              FROM pg_snapshot_xmin(pg_current_snapshot()) AS x(horizon))
          SELECT h.horizon::text AS horizon, h.beyond::text AS beyond, r.*
            FROM h
            LEFT JOIN LATERAL (
              SELECT ${q.columns}, ${q.xidColumn} AS xid FROM ${q.table}
               WHERE ${q.where.sql} AND (${q.xidColumn}, id) > ($${n + 1}::xid8, $${n + 2}::bigint) AND ${q.xidColumn} < h.horizon
               ORDER BY ${q.xidColumn}, id LIMIT $${n + 3}) r ON true
           ORDER BY r.xid, r.id`;
}
const statement = (name: string, text: string) => (values: unknown[]) => ({ name: `sql_${name}`, text, values });
const oldMarkProcessed = statement(
  'mark_deliveries_processed',
  `UPDATE webhook_deliveries d
      SET status = 'processed', processed_at = now(), event_count = v.events, last_error = NULL, attempts = d.attempts + 1
     FROM unnest($1::bigint[], $2::int[]) AS v(id, events)
    WHERE d.id = v.id AND d.id = ANY($1::bigint[]) AND d.status <> 'processed' AND d.received_at >= $3`,
);

// ---- Kysely -------------------------------------------------------------------------------------------------------
interface Filter {
  kind?: EventKind;
  status?: string;
  recipient?: string;
}
const pageQuery = (wabaId: string, f: Filter, take: number, skip: number) => {
  const given: EventsPageParams = { ...f, wabaId, take, skip };
  return buildEventsPage(builder, given as Required<EventsPageParams>, given);
};
const feedQuery = (wabaId: string, f: Filter, after: { xid: bigint; id: number }, limit: number) => {
  const given: EventsFeedParams = { ...f, wabaId, afterXid: after.xid.toString(), afterId: after.id, limit };
  return buildEventsFeed(builder, given as Required<EventsFeedParams>, given);
};
const markProcessedBuilt = (p: { ids: number[]; events: number[] }) => buildMarkProcessed(builder, p);
const markProcessed = prepared('mark_deliveries_processed', (_db, p: { ids: number[]; events: number[] }) =>
  markProcessedBuilt(p),
);

const filter = { kind: 'status_update' as const, status: 'read' };
const ids = Array.from({ length: 32 }, (_, i) => 1000 + i);
const events = ids.map(() => 3);
const since = new Date();

console.log(
  `data access cost per statement, ${RUNS} runs each; load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (${os.cpus().length} cores)`,
);
const results = {
  pageText: measure("events page: today's text (sqlFilter + template)", (i) => {
    const where = sqlFilter({ sql: 'waba_id = $1', value: `w${i}` }, [
      ['kind', '=', filter.kind, 'k'],
      ['status', '=', filter.status, 's'],
      ['recipient', '=', undefined, 'r'],
    ]);
    const n = where.values.length;
    return {
      name: `sql_events_page_${where.shape}`,
      text: `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
      values: [...where.values, 50, 0],
    };
  }),
  pageKysely: measure('events page: Kysely, built and compiled per call', (i) =>
    pageQuery(`w${i}`, filter, 50, 0).compile(),
  ),
  pagePrepared: measure('events page: prepared per shape (shape, lookup, values bound per run)', (i) => {
    const params = { ...filter, wabaId: `w${i}`, take: 50, skip: 0 };
    return eventsPageOf(params).query(params);
  }),
  feedText: measure("events feed: today's text (sqlFilter + feedSql)", (i) => {
    const where = sqlFilter({ sql: 'waba_id = $1', value: `w${i}` }, [['kind', '=', filter.kind, 'k']]);
    return {
      text: feedSql({ table: 'events', xidColumn: 'xid', columns: EVENT_COLUMNS, scope: 'waba_id = $1', where }),
      values: [...where.values, '0', 0, 100],
    };
  }),
  feedKysely: measure('events feed: Kysely, built and compiled per call', (i) =>
    feedQuery(`w${i}`, { kind: filter.kind }, { xid: 0n, id: i }, 100).compile(),
  ),
  markText: measure("markProcessed: today's statement(name, text)(values)", () =>
    oldMarkProcessed([ids, events, since]),
  ),
  markKysely: measure('markProcessed: Kysely, built and compiled per call', () =>
    markProcessedBuilt({ ids, events }).compile(),
  ),
  markPrepared: measure('markProcessed: prepared (compiled once, values bound per run)', () =>
    markProcessed.query({ ids, events }),
  ),
};
console.log(JSON.stringify(results));
