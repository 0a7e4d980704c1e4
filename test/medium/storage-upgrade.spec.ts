import { migrationNames, scratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';

const UPGRADE = '20261126090000_storage_bigint_partitions';
const TWO_31 = 2 ** 31;

type Row = Record<string, unknown>;

/**
 * The upgrade of migration storage_bigint_partitions on a database holding rows of the previous shape: a database of
 * its own on the test server (the migrations before it, applied as the migration tool does), rows of every growing
 * table written the way the service wrote them (event_counts by the old triggers), then the migration, then what
 * must hold: every row and column as it was, 64-bit ids and sequences, the old rows in the history partition and new
 * ones in this week's, and the counts.
 */
describe('Upgrade to 64-bit ids and weekly partitions (PostgreSQL)', () => {
  let db: ScratchDatabase;
  const q = async <T extends Row = Row>(sql: string, values: unknown[] = []) =>
    (await db.client.query<T>(sql, values)).rows;
  const one = async <T extends Row = Row>(sql: string, values: unknown[] = []) => (await q<T>(sql, values))[0]!;
  /** Every row of a table as JSON (int4 and int8 alike as numbers, timestamps as text), by id. */
  const snapshot = (table: string) =>
    q<{ j: Row }>(`SELECT to_jsonb(t) AS j FROM ${table} t ORDER BY id`).then((rows) => rows.map((r) => r.j));
  const totals = () =>
    q(
      `SELECT waba_id, kind, status, sum(count)::int AS n FROM event_counts GROUP BY 1, 2, 3 HAVING sum(count) <> 0 ORDER BY 1, 2, 3`,
    );
  const countedFromRows = () =>
    q(
      `SELECT waba_id, kind, COALESCE(status, '') AS status, count(*)::int AS n FROM events GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
  const partitionOf = async (table: string, id: number | string) =>
    (await one<{ p: string }>(`SELECT tableoid::regclass::text AS p FROM ${table} WHERE id = $1`, [id])).p;

  const wabaA = '310000000000101';
  const wabaB = '310000000000102';
  let businessAccountId: string;
  let organizationId: string;
  let thisWeek: Date;
  const before: {
    events: Row[];
    deliveries: Row[];
    messages: Row[];
    auditLogs: Row[];
    totals: Row[];
    triggers: string[];
    indexes: string[];
  } = {
    events: [],
    deliveries: [],
    messages: [],
    auditLogs: [],
    totals: [],
    triggers: [],
    indexes: [],
  };

  beforeAll(async () => {
    expect(migrationNames()).toContain(UPGRADE);
    db = await scratchDatabase(UPGRADE);
    organizationId = (
      await one<{ id: string }>(
        `INSERT INTO organizations (id, name) VALUES (gen_random_uuid(), 'Upgrade Org') RETURNING id`,
      )
    ).id;
    businessAccountId = (
      await one<{ id: string }>(
        `INSERT INTO business_accounts (id, organization_id, waba_id, name, access_token_encrypted, updated_at) VALUES (gen_random_uuid(), $1, $2, 'A', 'v1:x', now()) RETURNING id`,
        [organizationId, wabaA],
      )
    ).id;
    await q(
      `INSERT INTO audit_logs (organization_id, operator_email, action, target_type, target_id, details, created_at)
             VALUES ($1, 'op@example.test', 'api_key.create', 'api_key', 'k1', '{"name": "ci"}', now() - interval '20 days'),
                    ($1, NULL, 'business_account.connect', 'business_account', $2, NULL, now())`,
      [organizationId, businessAccountId],
    );
    await q(
      `INSERT INTO messages (business_account_id, api_key_id, phone_number_id, "to", type, template_name, template_language, content, status, upstream_message_id,
                             error_code, error_title, error_detail, error_category, accepted_at, sent_at, delivered_at, read_at, failed_at,
                             pricing_model, pricing_category, pricing_type, pricing_billable, created_at, updated_at)
       VALUES ($1, NULL, '402000000000001', '447700900001', 'template', 'hello_world', 'en_US', '{"components": []}', 'read', 'wamid.up.1',
               NULL, NULL, NULL, NULL, now() - interval '30 days', now() - interval '30 days', now() - interval '30 days', now() - interval '29 days', NULL,
               'PMP', 'utility', 'regular', true, now() - interval '30 days', now() - interval '29 days'),
              ($1, NULL, '402000000000001', '447700900002', 'text', NULL, NULL, '{"body": "hi"}', 'failed', 'wamid.up.2',
               131047, 'Re-engagement message', 'More than 24 hours', 'recipient', now() - interval '400 days', NULL, NULL, NULL, now() - interval '400 days',
               NULL, NULL, NULL, NULL, now() - interval '400 days', now() - interval '400 days'),
              ($1, NULL, '402000000000001', '447700900003', 'template', 'hello_world', 'en_US', NULL, 'pending', NULL,
               NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, now(), now())`,
      [businessAccountId],
    );
    // Deliveries of every status (a dead letter among them), over several weeks and more than a year back.
    const delivery = (
      status: string,
      days: number,
      extra: { attempts?: number; lastError?: string | null; batchId?: string | null } = {},
    ) =>
      one<{ id: number }>(
        `INSERT INTO webhook_deliveries (raw_body, signature, waba_ids, batch_id, status, attempts, last_error, event_count, received_at, processed_at)
         VALUES (convert_to($1, 'UTF8'), 'sha256=' || md5($1), ARRAY[$2], $3, $4, $5, $6, CASE WHEN $4 = 'processed' THEN 2 END,
                 now() - make_interval(days => $7), CASE WHEN $4 = 'processed' THEN now() - make_interval(days => $7) + interval '1 second' END) RETURNING id`,
        [
          `{"object":"whatsapp_business_account","entry":[{"id":"${wabaA}","n":${days}}]}`,
          wabaA,
          extra.batchId ?? null,
          status,
          extra.attempts ?? 1,
          extra.lastError ?? null,
          days,
        ],
      );
    const d1 = await delivery('processed', 400, { batchId: 'b-old' });
    const d2 = await delivery('processed', 17);
    const d3 = await delivery('failed', 10, { attempts: 5, lastError: 'upstream lookup failed' });
    const d4 = await delivery('received', 0, { attempts: 0 });
    // Events of every kind and status over several weeks (one more than a year old; one stored before the feed
    // existed, with xid 0), each week in its own transaction, so their xids differ; event_counts by the old triggers.
    const event = (
      deliveryId: number,
      waba: string,
      days: number,
      kind: string,
      status: string | null,
      n: number,
      extra: { xid0?: boolean; processed?: boolean } = {},
    ) =>
      q(
        `INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, user_id, message_id, upstream_timestamp,
                             error_code, error_title, error_detail, raw, pricing, dedupe_key, processed, processed_at, attempts, created_at${extra.xid0 ? ', xid' : ''})
         VALUES ($1, $2, '402000000000001', CASE WHEN $4 IN ('status_update', 'inbound_message') THEN 'messages' ELSE $4 END, $4, $4 || ' ' || COALESCE($5, '-'), $5,
                 CASE WHEN $4 IN ('status_update', 'inbound_message') THEN '447700900001' END, CASE WHEN $4 = 'inbound_message' THEN 'US.bsuid.1' END,
                 CASE WHEN $4 IN ('status_update', 'inbound_message') THEN 'wamid.up.' || $6 END, now() - make_interval(days => $3) - interval '2 seconds',
                 CASE WHEN $5 = 'failed' THEN 131047 END, CASE WHEN $5 = 'failed' THEN 'Re-engagement message' END, CASE WHEN $5 = 'failed' THEN 'More than 24 hours' END,
                 jsonb_build_object('n', $6, 'kind', $4), CASE WHEN $5 IN ('sent', 'delivered', 'read') THEN '{"pricing_model": "PMP", "category": "utility"}'::jsonb END,
                 'upgrade:' || $6, $7, CASE WHEN $7 THEN now() - make_interval(days => $3) END, CASE WHEN $7 THEN 0 ELSE 2 END, now() - make_interval(days => $3)
                 ${extra.xid0 ? ", '0'" : ''})`,
        [deliveryId, waba, days, kind, status, n, extra.processed ?? true],
      );
    let n = 0;
    await event(d1.id, wabaA, 400, 'status_update', 'read', n++, { xid0: true });
    await event(d1.id, wabaA, 400, 'inbound_message', null, n++);
    for (const days of [45, 24, 17, 10, 3]) {
      await db.client.query('BEGIN');
      for (const status of ['sent', 'delivered', 'read']) await event(d2.id, wabaA, days, 'status_update', status, n++);
      await event(d2.id, wabaB, days, 'status_update', 'sent', n++);
      await event(d3.id, wabaA, days, 'inbound_message', null, n++);
      await db.client.query('COMMIT');
    }
    await event(d3.id, wabaA, 10, 'status_update', 'failed', n++);
    await event(d3.id, wabaA, 24, 'template_status', null, n++);
    await event(d3.id, wabaB, 3, 'account_update', null, n++);
    await event(d4.id, wabaA, 0, 'status_update', 'delivered', n, { processed: false });

    before.events = await snapshot('events');
    before.deliveries = await snapshot('webhook_deliveries');
    before.messages = await snapshot('messages');
    before.auditLogs = await snapshot('audit_logs');
    before.totals = await totals();
    expect(before.totals).toEqual(await countedFromRows());
    before.triggers = (
      await q<{ t: string }>(
        `SELECT tgname AS t FROM pg_trigger WHERE tgrelid = 'events'::regclass AND NOT tgisinternal ORDER BY 1`,
      )
    ).map((r) => r.t);
    before.indexes = (
      await q<{ i: string }>(`SELECT indexname AS i FROM pg_indexes WHERE tablename = 'events' ORDER BY 1`)
    ).map((r) => r.i);
    expect(new Set(before.events.map((e) => e.xid)).size).toBeGreaterThan(5);

    await db.migrate(UPGRADE);
    thisWeek = (await one<{ w: Date }>(`SELECT storage_period_start(now()) AS w`)).w;
  });
  afterAll(async () => {
    await db?.drop();
  });

  const weekName = (table: string, week: Date) => `${table}_p${week.toISOString().slice(0, 10).replace(/-/g, '')}`;

  it('keeps every row with every column: ids, xids, timestamps, payloads', async () => {
    expect(await snapshot('events')).toEqual(before.events);
    expect(await snapshot('messages')).toEqual(before.messages);
    expect(await snapshot('audit_logs')).toEqual(before.auditLogs);
    // Deliveries gain original_received_at (null for what Meta delivered once); the rest is as it was.
    expect(await snapshot('webhook_deliveries')).toEqual(
      before.deliveries.map((d) => ({ ...d, original_received_at: null })),
    );
    const dead = (await snapshot('webhook_deliveries')).filter((d) => d.status === 'failed');
    expect(dead).toEqual([expect.objectContaining({ attempts: 5, last_error: 'upstream lookup failed' })]);
  });

  it('keeps the triggers and the list indexes of events (the dedupe key is no longer unique by index)', async () => {
    const triggers = (
      await q<{ t: string }>(
        `SELECT tgname AS t FROM pg_trigger WHERE tgrelid = 'events'::regclass AND NOT tgisinternal ORDER BY 1`,
      )
    ).map((r) => r.t);
    expect(triggers).toEqual(before.triggers);
    const indexes = (
      await q<{ i: string }>(`SELECT indexname AS i FROM pg_indexes WHERE tablename = 'events' ORDER BY 1`)
    ).map((r) => r.i);
    expect(indexes).toEqual(expect.arrayContaining(before.indexes.filter((i) => i !== 'events_dedupe_key_key')));
    expect(indexes).toContain('events_dedupe_key_created_at_idx');
  });

  it('makes every id column and id sequence 64-bit', async () => {
    const columns = await q<{ t: string; c: string; type: string }>(
      `SELECT table_name AS t, column_name AS c, data_type AS type FROM information_schema.columns
        WHERE table_schema = current_schema() AND (table_name, column_name) IN (('messages', 'id'), ('events', 'id'), ('events', 'delivery_id'),
              ('webhook_deliveries', 'id'), ('audit_logs', 'id')) ORDER BY 1, 2`,
    );
    expect(columns).toHaveLength(5);
    for (const c of columns) expect(`${c.t}.${c.c} ${c.type}`).toBe(`${c.t}.${c.c} bigint`);
    const sequences = await q<{ s: string; type: string; max: string }>(
      `SELECT sequencename AS s, data_type::text AS type, max_value::text AS max FROM pg_sequences
        WHERE sequencename IN ('messages_id_seq', 'events_id_seq', 'webhook_deliveries_id_seq', 'audit_logs_id_seq') ORDER BY 1`,
    );
    expect(sequences).toEqual(
      ['audit_logs_id_seq', 'events_id_seq', 'messages_id_seq', 'webhook_deliveries_id_seq'].map((s) => ({
        s,
        type: 'bigint',
        max: '9223372036854775807',
      })),
    );
    // Each sequence still belongs to its table's id (dropped with it, dumped with it).
    const owned = await q<{ s: string; t: string }>(
      `SELECT s.relname AS s, t.relname AS t FROM pg_depend d JOIN pg_class s ON s.oid = d.objid JOIN pg_class t ON t.oid = d.refobjid
        WHERE s.relkind = 'S' AND d.deptype = 'a' AND s.relname IN ('events_id_seq', 'webhook_deliveries_id_seq') ORDER BY 1`,
    );
    expect(owned).toEqual([
      { s: 'events_id_seq', t: 'events' },
      { s: 'webhook_deliveries_id_seq', t: 'webhook_deliveries' },
    ]);
  });

  it('keeps the old rows in the history partitions, with the weeks from this one on in weekly partitions', async () => {
    for (const e of before.events) {
      const expected = new Date(e.created_at as string) < thisWeek ? 'events_history' : weekName('events', thisWeek);
      const id = e.id as number;
      expect(`${id} ${await partitionOf('events', id)}`).toBe(`${id} ${expected}`);
    }
    for (const d of before.deliveries) {
      const expected =
        new Date(d.received_at as string) < thisWeek
          ? 'webhook_deliveries_history'
          : weekName('webhook_deliveries', thisWeek);
      expect(await partitionOf('webhook_deliveries', d.id as number)).toBe(expected);
    }
    const parts = await q<{ name: string }>(`SELECT name FROM storage_partitions('events')`);
    expect(parts.map((p) => p.name)).toEqual([
      'events_history',
      ...[0, 1, 2, 3, 4].map((k) => weekName('events', new Date(thisWeek.getTime() + k * 7 * 86_400_000))),
    ]);
  });

  it('keeps the counts: the totals per account, kind and status are the old ones, now by week', async () => {
    expect(await totals()).toEqual(before.totals);
    // Each row counted in the week it was stored in.
    const byBucket = await q(
      `SELECT waba_id, kind, status, bucket, sum(count)::int AS n FROM event_counts GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
    );
    const fromRows = await q(
      `SELECT waba_id, kind, COALESCE(status, '') AS status, storage_period_start(created_at) AS bucket, count(*)::int AS n FROM events GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
    );
    expect(byBucket).toEqual(fromRows);
  });

  it('stores new rows after the old ones in this week’s partitions, also with the sequences past 2^31', async () => {
    const maxEvent = Math.max(...before.events.map((e) => e.id as number));
    const next = await one<{ id: string; p: string }>(
      `INSERT INTO events (delivery_id, waba_id, event_type, kind, title, status, raw, dedupe_key) VALUES (1, $1, 'messages', 'status_update', 'Message read', 'read', '{}', 'new:1')
       RETURNING id::text, tableoid::regclass::text AS p`,
      [wabaA],
    );
    expect(Number(next.id)).toBeGreaterThan(maxEvent);
    expect(next.p).toBe(weekName('events', thisWeek));

    for (const seq of ['events_id_seq', 'webhook_deliveries_id_seq', 'messages_id_seq', 'audit_logs_id_seq'])
      await q(`SELECT setval($1, $2)`, [seq, TWO_31 + 10]);
    const event = await one<{ id: string; p: string; xid: string }>(
      `INSERT INTO events (delivery_id, waba_id, event_type, kind, title, status, raw, dedupe_key)
       VALUES ($1, $2, 'messages', 'status_update', 'Message sent', 'sent', '{}', 'new:2') RETURNING id::text, tableoid::regclass::text AS p, xid::text`,
      [TWO_31 + 99, wabaA],
    );
    expect(event).toEqual({
      id: String(TWO_31 + 11),
      p: weekName('events', thisWeek),
      xid: expect.stringMatching(/^[1-9]\d*$/),
    });
    const delivery = await one<{ id: string; p: string }>(
      `INSERT INTO webhook_deliveries (raw_body, signature, waba_ids) VALUES ('\\x7b7d', 'sha256=x', ARRAY[$1]) RETURNING id::text, tableoid::regclass::text AS p`,
      [wabaA],
    );
    expect(delivery).toEqual({ id: String(TWO_31 + 11), p: weekName('webhook_deliveries', thisWeek) });
    const message = await one<{ id: string }>(
      `INSERT INTO messages (business_account_id, phone_number_id, "to", type, status, updated_at) VALUES ($1, '402000000000001', '447700900009', 'text', 'pending', now()) RETURNING id::text`,
      [businessAccountId],
    );
    expect(message.id).toBe(String(TWO_31 + 11));
    const audit = await one<{ id: string }>(
      `INSERT INTO audit_logs (organization_id, action, target_type, target_id) VALUES ($1, 'x', 'y', 'z') RETURNING id::text`,
      [organizationId],
    );
    expect(audit.id).toBe(String(TWO_31 + 11));
    // Found by id above 2^31 (the type of the parameter is bigint on every id column).
    expect(
      await one(`SELECT count(*)::int AS n FROM events WHERE id = $1 AND delivery_id = $2`, [TWO_31 + 11, TWO_31 + 99]),
    ).toEqual({ n: 1 });
  });

  it('keeps the counts exact on insert, update and delete, as the old triggers did', async () => {
    await q(
      `INSERT INTO events (delivery_id, waba_id, event_type, kind, title, status, raw, dedupe_key)
       SELECT 1, w, 'messages', k, 't', s, '{}', 'trig:' || g FROM (VALUES ($1, 'status_update', 'delivered'), ($1, 'inbound_message', NULL), ($2, 'status_update', 'read'))
         AS v(w, k, s), generate_series(1, 3) AS g`,
      [wabaA, wabaB],
    );
    expect(await totals()).toEqual(await countedFromRows());
    // The old update trigger moved a row between totals when a counted column changed.
    await q(`UPDATE events SET status = 'failed' WHERE dedupe_key = 'trig:1' AND status = 'delivered'`);
    await q(`UPDATE events SET processed = true WHERE dedupe_key LIKE 'trig:%'`);
    await q(`DELETE FROM events WHERE dedupe_key = 'trig:2' AND kind = 'inbound_message'`);
    expect(await totals()).toEqual(await countedFromRows());
    // An old row changed: counted out of its old week, into the same one again.
    await q(`UPDATE events SET status = 'delivered' WHERE dedupe_key = 'upgrade:0'`);
    expect(await totals()).toEqual(await countedFromRows());
    expect(await partitionOf('events', before.events[0]!.id as number)).toBe('events_history');
  });
});
