// Item 3 of issue 7: GET /webhooks/events with 5 million events stored for one business account (plus events of
// other accounts): page 1, limit 50, without and with a kind filter; p50/p99 over BENCH_REQUESTS requests each,
// and `total` checked against COUNT(*).
//
//   npm run bench:events      (env: BENCH_EVENTS=5000000 BENCH_OTHER_EVENTS=500000 BENCH_REQUESTS=500)
import { check, fmt, load, machine, printMachine, writeResult, type Check, type LoadSummary } from './lib/report.js';
import { CpuMeter, formatCpu } from './lib/cpu.js';
import { log, runBench, type Stack } from './lib/bench.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 5_000_000);
const OTHER_EVENTS = Number(process.env.BENCH_OTHER_EVENTS ?? 500_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 500);
const OTHER_WABAS = 4;
const CHUNK = 500_000;

/**
 * One SQL statement per chunk, all generated in PostgreSQL (no rows cross the wire). 100 row templates (i % 100):
 * 85 % status updates (sent/delivered/read/failed), 12 % inbound messages, 2 % template statuses, 1 % account
 * updates, each with a realistic raw payload; per row only the time (one event every 1.5 s back from now), the
 * recipient, the wamid and the dedupe key are computed, which keeps the load CPU-cheap.
 */
const SEED_SQL = `
WITH t AS (
  SELECT r,
         CASE WHEN r < 97 THEN 'messages' WHEN r < 99 THEN 'message_template_status_update' ELSE 'account_update' END AS event_type,
         CASE WHEN r < 85 THEN 'status_update' WHEN r < 97 THEN 'inbound_message' WHEN r < 99 THEN 'template_status' ELSE 'account_update' END AS kind,
         CASE WHEN r < 85 THEN (ARRAY['sent','delivered','read','failed'])[1 + r % 4] END AS status,
         CASE WHEN r < 85 THEN (ARRAY['Message sent','Message delivered','Message read','Message failed: Re-engagement message (131047)'])[1 + r % 4]
              WHEN r < 97 THEN 'Inbound text' WHEN r < 99 THEN 'Template hello_world (en_US): APPROVED' ELSE 'Account update: VERIFIED_ACCOUNT' END AS title,
         CASE WHEN r < 85 AND r % 4 = 3 THEN 131047 END AS error_code,
         CASE WHEN r < 85 AND r % 4 = 3 THEN 'Re-engagement message' END AS error_title,
         CASE WHEN r < 85 THEN jsonb_build_object('id', 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAERgSQzA2' || r, 'status', (ARRAY['sent','delivered','read','failed'])[1 + r % 4],
                                                  'timestamp', '1763800000', 'recipient_id', '447700900123',
                                                  'pricing', jsonb_build_object('billable', true, 'pricing_model', 'PMP', 'category', 'utility'),
                                                  'metadata', jsonb_build_object('display_phone_number', '15550001111', 'phone_number_id', $2::text))
              WHEN r < 97 THEN jsonb_build_object('id', 'wamid.HBgMNDQ3NzAwOTAwMTIzFQIAEhgUM0' || r, 'from', '447700900123', 'type', 'text',
                                                  'timestamp', '1763800000', 'text', jsonb_build_object('body', 'Hello, is my parcel on its way?'),
                                                  'contact', jsonb_build_object('wa_id', '447700900123', 'profile', jsonb_build_object('name', 'Ana')))
              WHEN r < 99 THEN jsonb_build_object('event', 'APPROVED', 'message_template_id', 1234567890 + r, 'message_template_name', 'hello_world',
                                                  'message_template_language', 'en_US', 'reason', 'NONE')
              ELSE jsonb_build_object('event', 'VERIFIED_ACCOUNT', 'phone_number', '15550001111') END AS raw
    FROM generate_series(0, 99) AS r
)
INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                    upstream_timestamp, error_code, error_title, raw, dedupe_key, processed, created_at)
SELECT 0, $1, $2, events_type_code(t.event_type), events_kind_code(t.kind), t.title, events_status_code(t.status),
       CASE WHEN t.r < 97 THEN (447700000000 + i % 1000000)::text END,
       CASE WHEN t.r < 97 THEN 'wamid.seed.' || (i / 3) END,
       x.at, t.error_code, t.error_title, t.raw, events_dedupe_hash($3 || i), true, x.at
  FROM generate_series($4::int, $5::int) AS i
  JOIN t ON t.r = i % 100
  CROSS JOIN LATERAL (SELECT $7::timestamptz - ($6::int - i) * interval '1500 milliseconds' AS at) AS x`;

async function seed(
  stack: Stack,
  wabaId: string,
  phoneNumberId: string,
): Promise<{ seconds: number; droppedIndexes: boolean }> {
  const t = Date.now();
  const db = stack.db;
  // On a database this bench started itself (fresh, nothing else in events) the secondary indexes are dropped for
  // the load and rebuilt after it, exactly as they were defined: several times faster than maintaining them row by row.
  const own = !process.env.DATABASE_URL;
  let indexes: { indexname: string; indexdef: string }[] = [];
  if (own) {
    // A bulk load writes ~3 GB of WAL: room for it between checkpoints (this private server only).
    await db.query(`ALTER SYSTEM SET max_wal_size = '16GB'`);
    await db.query(`ALTER SYSTEM SET checkpoint_timeout = '30min'`);
    await db.query('SELECT pg_reload_conf()');
    indexes = (
      await db.query<{ indexname: string; indexdef: string }>(
        `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'events' AND indexname <> 'events_pkey'`,
      )
    ).rows;
    for (const ix of indexes) await db.query(`DROP INDEX "${ix.indexname}"`);
  }
  const jobs: { waba: string; phone: string; prefix: string; from: number; to: number; total: number }[] = [];
  const now = new Date();
  for (let from = 1; from <= EVENTS; from += CHUNK)
    jobs.push({
      waba: wabaId,
      phone: phoneNumberId,
      prefix: `seed:${wabaId}:`,
      from,
      to: Math.min(from + CHUNK - 1, EVENTS),
      total: EVENTS,
    });
  const perOther = Math.floor(OTHER_EVENTS / OTHER_WABAS);
  for (let k = 0; k < OTHER_WABAS && perOther > 0; k++) {
    const waba = `3199${stack.runId.replace(/\D/g, '').slice(0, 6).padEnd(6, '0')}${String(k).padStart(3, '0')}`;
    jobs.push({ waba, phone: `40299900000${k}`, prefix: `seed:${waba}:`, from: 1, to: perOther, total: perOther });
  }
  // Two connections (two cores), each taking the next chunk.
  let next = 0;
  const runner = async () => {
    const client = await db.connect();
    try {
      await client.query('SET synchronous_commit = off');
      for (let j = next++; j < jobs.length; j = next++) {
        const job = jobs[j]!;
        await client.query(SEED_SQL, [job.waba, job.phone, job.prefix, job.from, job.to, job.total, now]);
      }
    } finally {
      client.release();
    }
  };
  await Promise.all([runner(), runner()]);
  log(`inserted ${EVENTS} + ${perOther * OTHER_WABAS} events (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  // Visibility map and hint bits first (a cheap pass while there are no secondary indexes), as autovacuum
  // would leave a long-lived table; then the indexes; then statistics.
  const tv = Date.now();
  await db.query('VACUUM events');
  log(`VACUUM events (${((Date.now() - tv) / 1000).toFixed(1)} s)`);
  if (indexes.length > 0) {
    const ti = Date.now();
    // Two at a time (two cores), each with room to sort in memory.
    let k = 0;
    const builder = async () => {
      const client = await db.connect();
      try {
        await client.query(`SET maintenance_work_mem = '1GB'`);
        await client.query('SET max_parallel_maintenance_workers = 0');
        // events is partitioned: pg_indexes gives the parent's definition as `ON ONLY events`, which would build no
        // partition's index; `ON events` builds every partition's.
        for (let j = k++; j < indexes.length; j = k++)
          await client.query(indexes[j]!.indexdef.replace(' ON ONLY ', ' ON '));
      } finally {
        client.release();
      }
    };
    await Promise.all([builder(), builder()]);
    log(`rebuilt ${indexes.length} indexes (${((Date.now() - ti) / 1000).toFixed(1)} s)`);
  }
  await db.query('ANALYZE events');
  return { seconds: (Date.now() - t) / 1000, droppedIndexes: indexes.length > 0 };
}

await runBench({ name: 'events', workers: 0, limitMs: 480_000 }, async (stack) => {
  const m = machine();
  printMachine(m);
  const tenant = await stack.onboard();
  const seeded = await seed(stack, tenant.account.wabaId, tenant.account.phoneNumberId);
  log(`seed: ${fmt(seeded.seconds)} s in all`);

  const expected: Record<string, number> = {};
  for (const kind of ['', 'status_update', 'inbound_message']) {
    const r = await stack.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM events WHERE waba_id = $1${kind ? ' AND kind = $2' : ''}`,
      kind ? [tenant.account.wabaId, kind] : [tenant.account.wabaId],
    );
    expected[kind || 'all'] = Number(r.rows[0]!.n);
  }
  log(`COUNT(*) for the account: ${JSON.stringify(expected)}`);

  const headers = { cookie: tenant.operator.cookie };
  const url = stack.apiUrl;
  const results: Record<string, { load: LoadSummary; total: number | null; totalExact: boolean; items: number }> = {};
  const meter = new CpuMeter(() => stack.cpuLabels());
  meter.begin();
  for (const [name, kind] of [
    ['no filter', ''],
    ['kind=status_update', 'status_update'],
    ['kind=inbound_message', 'inbound_message'],
  ] as const) {
    const path = `/webhooks/events?wabaId=${tenant.account.wabaId}&page=1&limit=50${kind ? `&kind=${kind}` : ''}`;
    const res = await fetch(url + path, { headers });
    const body = (await res.json()) as { data?: { total: number; items: unknown[] } };
    if (res.status !== 200 || !body.data)
      throw new Error(`GET ${path} → ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    await load(`${name} (warm-up)`, { url: url + path, connections: 1, amount: 50, headers });
    const serial = await load(name, { url: url + path, connections: 1, amount: REQUESTS, headers });
    const total = body.data.total;
    results[name] = {
      load: serial,
      total,
      totalExact: total === expected[kind || 'all'],
      items: body.data.items.length,
    };
    console.log(
      `    total ${total} (COUNT(*) ${expected[kind || 'all']}) ${total === expected[kind || 'all'] ? 'exact' : 'WRONG'}; ${body.data.items.length} items`,
    );
  }
  const queryCpu = meter.end();
  console.log(formatCpu(queryCpu));
  // The same with some concurrency (4 connections), for the record.
  const concurrent = await load('no filter, 4 connections', {
    url: `${url}/webhooks/events?wabaId=${tenant.account.wabaId}&page=1&limit=50`,
    connections: 4,
    amount: REQUESTS,
    headers,
  });

  console.log('\nTargets');
  const checks: Check[] = [];
  for (const [name, r] of Object.entries(results)) {
    checks.push(
      check(
        `${name}: p99 (1 connection, ${REQUESTS} requests)`,
        '< 20 ms',
        `${fmt(r.load.latencyMs.p99)} ms (p50 ${fmt(r.load.latencyMs.p50)} ms)`,
        r.load.latencyMs.p99 < 20 && r.load.non2xx === 0,
      ),
    );
    checks.push(check(`${name}: total exact`, `= COUNT(*)`, `${r.total}`, r.totalExact));
  }
  checks.push(check('seed time', '≤ 120 s', `${fmt(seeded.seconds)} s`, seeded.seconds <= 120));
  writeResult('events', {
    machine: m,
    config: { EVENTS, OTHER_EVENTS, REQUESTS },
    seed: seeded,
    expected,
    results,
    queryCpu,
    concurrent,
    checks,
  });
});
