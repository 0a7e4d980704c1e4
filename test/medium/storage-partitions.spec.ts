import pg from 'pg';
import { AppConfig } from '../../src/core/config/app-config.js';
import { Metrics } from '../../src/core/metrics/metrics.js';
import { isMissingPartition, WEEK_MS } from '../../src/core/db/partitions.js';
import { Db, txOn } from '../../src/core/db/db.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { WebhookDeliveriesRepository } from '../../src/webhooks/deliveries/webhook-deliveries.repository.js';
import { EventsRepository, type EventRow } from '../../src/events/events.repository.js';
import { dedupeHash } from '../../src/events/dedupe-key.js';
import { dedupeUuids } from '../../src/events/statements/index-keys.js';
import { storedKeys } from '../../src/events/statements/insert.js';
import { PartitionMaintenance } from '../../src/webhooks/storage/partition-maintenance.js';
import { DeliveryProcessor } from '../../src/webhooks/processing/delivery.processor.js';
import { eventRow, incomingDelivery, insertDelivery, metaId, wamid } from '../utils/factories.js';
import { scratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';
import { testEnv } from '../utils/test-env.js';
import { startTestWorker } from '../utils/webhooks.js';
import { inboundWebhook } from '../../simulator/payloads/webhooks.js';

const DAY_MS = 24 * 3600_000;
/** Monday 00:00 UTC of the week holding `t` (the partitions' weeks). */
const weekStart = (t: Date) => {
  const monday = Date.UTC(2000, 0, 3);
  return new Date(monday + Math.floor((t.getTime() - monday) / WEEK_MS) * WEEK_MS);
};
const partitionName = (week: Date) => `events_p${week.toISOString().slice(0, 10).replace(/-/g, '')}`;

/**
 * The weekly partitions of events and webhook_deliveries, on a database of their own (retention drops whole
 * partitions: on the suite's shared database it would drop other tests' rows). The history partition the upgrade
 * makes (empty on a fresh database) is replaced by weekly partitions of the past 20 weeks, as a service that has
 * run that long has them.
 */
describe('Storage partitions (PostgreSQL)', () => {
  let db: ScratchDatabase;
  /** The data access on the scratch database. */
  let data: Db;
  let events: EventsRepository;
  let deliveries: WebhookDeliveriesRepository;
  const logged: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const logger = {
    info: (obj: Record<string, unknown>, msg: string) => logged.push({ level: 'info', obj, msg }),
    warn: (obj: Record<string, unknown>, msg: string) => logged.push({ level: 'warn', obj, msg }),
    error: (obj: Record<string, unknown>, msg: string) => logged.push({ level: 'error', obj, msg }),
  };
  const now = new Date();
  const thisWeek = weekStart(now);

  beforeAll(async () => {
    db = await scratchDatabase();
    await db.client.query('DROP TABLE events_history; DROP TABLE webhook_deliveries_history');
    data = new Db(AppConfig.fromEnv(testEnv({ DATABASE_URL: db.url })));
    events = new EventsRepository(data);
    deliveries = new WebhookDeliveriesRepository(data);
    const from = new Date(thisWeek.getTime() - 20 * WEEK_MS);
    await events.ensurePartitions(from, now);
    await deliveries.ensurePartitions(from, now);
  });
  afterAll(async () => {
    await data?.close();
    await db?.drop();
  });

  const maintenance = (env: Record<string, string>, metrics = new Metrics()) =>
    new PartitionMaintenance(
      events,
      deliveries,
      AppConfig.fromEnv(testEnv({ DATABASE_URL: db.url, ...env })),
      metrics,
      logger as never,
    );
  const insertAt = (rows: EventRow[], at: Date) => new UnitOfWork(data).run((tx) => events.insert(tx, rows, at));
  const stored = async (wabaId: string) => (await events.page(wabaId, {}, { page: 1, limit: 100 })).rows;
  const partitionOf = async (id: number) =>
    (await db.client.query<{ p: string }>('SELECT tableoid::regclass::text AS p FROM events WHERE id = $1', [id]))
      .rows[0]?.p;

  it('makes weekly partitions ahead, once however often it is asked, and says until when', async () => {
    const metrics = new Metrics();
    // As if the migration had run weeks ago: nothing after this week yet.
    for (const table of ['events', 'webhook_deliveries']) {
      const { rows } = await db.client.query<{ name: string }>(
        'SELECT name FROM storage_partitions($1) WHERE lower_bound > $2',
        [table, thisWeek],
      );
      for (const { name } of rows) await db.client.query(`DROP TABLE ${name}`);
    }
    const first = await maintenance({}, metrics).ensureAhead(now);
    const again = await maintenance({}, metrics).ensureAhead(now);
    const fourWeeksOn = new Date(thisWeek.getTime() + 5 * WEEK_MS);
    expect(first.until).toEqual({ events: fourWeeksOn, webhook_deliveries: fourWeeksOn });
    expect(first.created).toEqual({ events: 4, webhook_deliveries: 4 });
    expect(again.created).toEqual({ events: 0, webhook_deliveries: 0 });
    const names = (await events.partitions()).map((p) => p.name);
    expect(names.at(-1)).toBe(partitionName(new Date(fourWeeksOn.getTime() - WEEK_MS)));
    expect(
      await metrics.registry.getSingleMetricAsString('bmapi_storage_partitions_until_timestamp_seconds'),
    ).toContain(`table="events"} ${fourWeeksOn.getTime() / 1000}`);
  });

  it("makes a week's events with the 8-byte columns first: a status row stored without a byte of padding", async () => {
    const wabaId = metaId();
    const w = wamid();
    const item = eventRow(1, wabaId, {
      messageId: w,
      dedupeKey: `${w}:read`,
      status: 'read',
      title: 'Message read',
      raw: {
        id: w,
        status: 'read',
        timestamp: '1772359200',
        pricing: { billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' },
        metadata: { display_phone_number: '15550001111' },
        biz_opaque_callback_data: 'bm:4242',
      },
    });
    const id = (await insertAt([item], now)).get(item.dedupeKey)!.id;
    const part = partitionName(thisWeek);
    const { rows: columns } = await db.client.query<{ name: string; len: number }>(
      `SELECT attname AS name, attlen AS len FROM pg_attribute
        WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
      [part],
    );
    // 8-byte ones, then 4, 2 and 1, then the variable-length ones (which, short, need no alignment).
    const widths = columns.map((c) => (c.len < 0 ? 0 : c.len));
    expect(widths).toEqual([...widths].sort((a, b) => b - a));
    const sizes = columns.map((c) => `coalesce(pg_column_size(e.${c.name}), 0)`).join(' + ');
    const { rows } = await db.client.query<{ tuple: number; values: number; header: number; parentOrder: number }>(
      `SELECT pg_column_size(e.*) AS tuple, ${sizes} AS values,
              (SELECT pg_column_size(p.*) FROM events p WHERE p.id = $1) AS "parentOrder"
         FROM ${part} e WHERE e.id = $1`,
      [id],
    );
    // The tuple is its 32-byte header (with the null bitmap) and the values, nothing between them.
    expect(rows[0]!.tuple - rows[0]!.values).toBe(32);
    // In the parent's order (the columns as the migrations added them) the same row held padding.
    expect(rows[0]!.parentOrder).toBeGreaterThan(rows[0]!.tuple);
  });

  describe('dedupe across partitions', () => {
    it('stores an item redelivered in the next week (7 days later) once, and again only past the 8-day window', async () => {
      const wabaId = metaId();
      const endOfWeek = new Date(thisWeek.getTime() - 3 * WEEK_MS - 1000); // Sunday 23:59:59, four weeks back
      const item = eventRow(1, wabaId, { upstreamTimestamp: new Date(endOfWeek.getTime() - 40 * DAY_MS) });

      const first = await insertAt([item], endOfWeek);
      expect(first.size).toBe(1);
      const redelivered = await insertAt([{ ...item, title: 'again' }], new Date(endOfWeek.getTime() + 7 * DAY_MS));
      expect(redelivered.size).toBe(0);
      expect(await stored(wabaId)).toHaveLength(1);
      expect(await partitionOf(first.get(item.dedupeKey)!.id)).toBe(partitionName(weekStart(endOfWeek)));

      // Past the window (Meta redelivers for 7 days), a key no longer keeps an item out.
      const muchLater = await insertAt([item], new Date(endOfWeek.getTime() + 9 * DAY_MS));
      expect(muchLater.size).toBe(1);
    });

    it("analyzes a week's partition a moment after its first rows: the probe is planned on the dedupe key's index", async () => {
      const wabaId = metaId();
      const at = new Date(thisWeek.getTime() + 3 * WEEK_MS + DAY_MS); // a week made ahead: empty, never analyzed
      await events.ensurePartitions(at, at);
      const partition = partitionName(weekStart(at));
      const reltuples = async () =>
        Number(
          (await db.client.query<{ n: number }>('SELECT reltuples AS n FROM pg_class WHERE relname = $1', [partition]))
            .rows[0]!.n,
        );
      expect(await reltuples()).toBeLessThan(0); // never analyzed
      // Analyzed while empty (a VACUUM ANALYZE of the database, say): PostgreSQL still holds no statistics of it.
      await db.client.query(`ANALYZE ${partition}`);
      expect(await reltuples()).toBe(0);
      const rows = Array.from({ length: 300 }, (_, i) => eventRow(i + 1, wabaId));
      expect((await insertAt(rows, at)).size).toBe(300);
      // A moment later (the insert's transaction committed), not at autovacuum's next pass (a minute).
      let analyzed = 0;
      for (let i = 0; i < 50 && analyzed <= 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        analyzed = await reltuples();
      }
      expect(analyzed).toBe(300);
      // The probe of a chunk of 40 keys, planned on the partition's statistics: by the dedupe key's index, not a scan
      // of the week's per-account index by created_at (the plan without statistics).
      const keys = dedupeUuids(rows.slice(0, 40).map((r) => dedupeHash(r.dedupeKey)));
      const { text, values } = storedKeys.query({ keys, at });
      const { rows: plan } = await db.client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values);
      const lines = plan.map((r) => r['QUERY PLAN']).join('\n');
      expect(lines).toContain(`${partition}_encode_idx`);
      expect(lines).not.toContain(`${partition}_hashtextextended_created_at`);
    });

    it('stores an item once when two transactions on either side of a week boundary store it at the same time', async () => {
      const wabaId = metaId();
      const boundary = new Date(thisWeek.getTime() - 2 * WEEK_MS);
      const item = eventRow(1, wabaId);
      const a = await data.pool.connect();
      try {
        await a.query('BEGIN');
        const before = await events.insert(txOn(a), [item], new Date(boundary.getTime() - 500));
        expect(before.size).toBe(1);
        // The other transaction (the next week's partition) waits for the first one's key...
        let settled = false;
        const other = insertAt([item, eventRow(1, wabaId)], new Date(boundary.getTime() + 500)).finally(
          () => (settled = true),
        );
        await new Promise((r) => setTimeout(r, 300));
        expect(settled).toBe(false);
        await a.query('COMMIT');
        // ...and then stores only what the first did not.
        expect((await other).size).toBe(1);
      } finally {
        a.release();
      }
      const rows = await stored(wabaId);
      expect(rows.filter((e) => e.messageId === item.messageId && e.status === item.status)).toHaveLength(1);
      expect(rows).toHaveLength(2);
    });

    it('stores items timestamped in the far past or the future (clock skew) in the week they arrive, once', async () => {
      const wabaId = metaId();
      const old = eventRow(1, wabaId, { upstreamTimestamp: new Date('2019-05-01T00:00:00Z') });
      const future = eventRow(1, wabaId, { upstreamTimestamp: new Date(now.getTime() + 3 * 365 * DAY_MS) });
      const first = await insertAt([old, future], now);
      expect(first.size).toBe(2);
      expect((await insertAt([old, future], new Date(now.getTime() + 1000))).size).toBe(0);
      for (const { id } of first.values()) expect(await partitionOf(id)).toBe(partitionName(thisWeek));
    });
  });

  it('refuses loudly a row with no partition, and stores it once the partitions are made', async () => {
    const farAhead = new Date(thisWeek.getTime() + 30 * WEEK_MS);
    const item = eventRow(1, metaId());
    const failure = await insertAt([item], farAhead).catch((e: unknown) => e);
    expect(isMissingPartition(failure)).toBe(true);
    await events.ensurePartitions(farAhead, farAhead);
    expect((await insertAt([item], farAhead)).size).toBe(1);
  });

  it('the worker whose events and processed delivery find no partition makes the partitions and stores them, nothing lost', async () => {
    const worker = await startTestWorker(AppConfig.fromEnv(testEnv({ DATABASE_URL: db.url })));
    try {
      // As if the maintenance task had not run for weeks: no partition for this week nor any later one.
      for (const table of ['events', 'webhook_deliveries']) {
        const { rows } = await db.client.query<{ name: string }>(
          'SELECT name FROM storage_partitions($1) WHERE upper_bound > $2',
          [table, now],
        );
        for (const { name } of rows) await db.client.query(`DROP TABLE ${name}`);
      }
      const wabaId = metaId();
      const body = JSON.stringify(
        inboundWebhook(wabaId, metaId(), {
          from: '447700900123',
          id: wamid(),
          timestamp: String(Math.floor(Date.now() / 1000)),
          text: 'hi',
        }),
      );
      const [deliveryId] = await deliveries.storeBatch('b', [
        { rawBody: Buffer.from(body), signature: 'sha256=x', wabaIds: [wabaId] },
      ]);

      const result = await worker.context.get(DeliveryProcessor).process([deliveryId!]);
      expect(result).toMatchObject({ events: 1, inserted: 1, applied: 1 });
      const [event] = await stored(wabaId);
      expect(await partitionOf(event!.id)).toBe(partitionName(thisWeek));
      expect((await deliveries.findForProcessing([deliveryId!]))[0]!.status).toBe('processed');
    } finally {
      await worker.close();
    }
  });

  describe('retention', () => {
    it('drops whole weeks of events past EVENTS_RETENTION_DAYS; totals and counts match what is left', async () => {
      const wabaId = metaId();
      const ages = [70, 45, 20, 1]; // days
      for (const days of ages) {
        const at = new Date(now.getTime() - days * DAY_MS);
        await insertAt([eventRow(1, wabaId), eventRow(1, wabaId, { kind: 'inbound_message', status: null })], at);
      }
      expect((await events.page(wabaId, {}, { page: 1, limit: 50 })).total).toBe(8);

      const pass = await maintenance({ EVENTS_RETENTION_DAYS: '30', WEBHOOK_RETENTION_DAYS: '0' }).pass(now);
      const cutoff = now.getTime() - 30 * DAY_MS;
      expect(pass.dropped.events.length).toBeGreaterThan(0);
      for (const p of pass.dropped.events) expect(p.upperBound.getTime()).toBeLessThanOrEqual(cutoff);
      expect((await events.partitions())[0]!.upperBound.getTime()).toBeGreaterThan(cutoff);

      const left = await events.page(wabaId, {}, { page: 1, limit: 50 });
      // 70 and 45 days old are in weeks wholly past 30 days; 20 and 1 are not.
      expect(left.rows.map((e) => e.createdAt.getTime()).every((t) => t > cutoff - WEEK_MS)).toBe(true);
      expect(left.total).toBe(4);
      expect(left.rows).toHaveLength(4);
      expect((await events.page(wabaId, { kind: 'inbound_message' }, { page: 1, limit: 50 })).total).toBe(2);
      const orphanCounts = await db.client.query('SELECT count(*)::int AS n FROM event_counts WHERE bucket < $1', [
        (await events.partitions())[0]!.lowerBound,
      ]);
      expect(orphanCounts.rows[0].n).toBe(0);
      expect(logged.find((l) => l.msg === 'storage partitions maintained')?.obj).toMatchObject({
        droppedEvents: pass.dropped.events.map((p) => p.name),
      });
    });

    it('drops weeks of processed deliveries past WEBHOOK_RETENTION_DAYS; dead letters and waiting ones stay in the inbox with their time', async () => {
      const wabaId = metaId();
      const old = new Date(now.getTime() - 50 * DAY_MS);
      const make = async (status: 'processed' | 'failed' | 'received') =>
        (await insertDelivery(data, { wabaIds: [wabaId], status, receivedAt: old })).id;
      const [processed, dead, waiting] = [await make('processed'), await make('failed'), await make('received')];
      const recent = (await deliveries.storeBatch('b', [incomingDelivery({ wabaIds: [wabaId] })]))[0]!;

      const pass = await maintenance({ EVENTS_RETENTION_DAYS: '0', WEBHOOK_RETENTION_DAYS: '30' }).pass(now);
      expect(pass.dropped.webhook_deliveries.length).toBeGreaterThan(0);

      const listed = await deliveries.listForAccounts([{ wabaId }], { page: 1, limit: 10 });
      expect(listed.rows.map((d) => d.id).sort()).toEqual([dead, waiting, recent].sort());
      expect(listed.total).toBe(3);
      for (const id of [dead, waiting]) expect(listed.rows.find((d) => d.id === id)!.receivedAt).toEqual(old);
      expect((await deliveries.findForProcessing([processed, dead])).map((d) => d.id)).toEqual([dead]);
      // A dead letter kept this way can still be replayed.
      expect(await deliveries.resetForReplay([{ wabaId }], dead)).toMatchObject({
        id: dead,
        status: 'received',
        receivedAt: old,
      });
      // Processed then, 50 days after it arrived: stored in this week (its own week is gone), listed under its time.
      await deliveries.markProcessed([{ id: dead, events: 1 }]);
      const processedNow = await deliveries.listForAccounts([{ wabaId }], { page: 1, limit: 10, status: 'processed' });
      expect(processedNow.rows).toEqual([expect.objectContaining({ id: dead, status: 'processed', receivedAt: old })]);
    });

    it('drops a partition left detached by a pass that stopped between its detach and its DROP TABLE', async () => {
      await db.client.query('CREATE TABLE events_p20010101 (LIKE events)');
      await maintenance({ EVENTS_RETENTION_DAYS: '3650', WEBHOOK_RETENTION_DAYS: '0' }).pass(now);
      expect((await db.client.query(`SELECT to_regclass('events_p20010101') AS t`)).rows[0].t).toBeNull();
    });

    it('keeps everything with retention 0', async () => {
      const before = (await events.partitions()).length;
      const pass = await maintenance({ EVENTS_RETENTION_DAYS: '0', WEBHOOK_RETENTION_DAYS: '0' }).pass(now);
      expect(pass.dropped).toEqual({ events: [], webhook_deliveries: [] });
      expect((await events.partitions()).length).toBe(before);
    });
  });

  describe('ended weeks compacted once (storage-compaction)', () => {
    // As if it were Wednesday of this week: last week ended more than a day before, this week has not ended.
    const wednesday = new Date(thisWeek.getTime() + 2 * DAY_MS);
    const lastWeek = new Date(thisWeek.getTime() - WEEK_MS);
    const lastWeekEvents = partitionName(lastWeek);
    const deliveriesOf = (eventsPartition: string) => eventsPartition.replace('events_p', 'webhook_deliveries_p');
    const lastWeekDeliveries = deliveriesOf(lastWeekEvents);
    const indexesOf = async (partition: string) =>
      (
        await db.client.query<{ name: string; valid: boolean; parent: string | null }>(
          `SELECT i.relname AS name, x.indisvalid AS valid, h.inhparent::regclass::text AS parent
             FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid LEFT JOIN pg_inherits h ON h.inhrelid = x.indexrelid
            WHERE x.indrelid = $1::regclass ORDER BY 3`,
          [partition],
        )
      ).rows;
    /** A partition's heap and each index's bytes, by the index's name without the partition's prefix. */
    const bytesOf = async (partition: string) => {
      const { rows } = await db.client.query<{ name: string; bytes: string }>(
        `SELECT i.relname AS name, pg_relation_size(i.oid) AS bytes
           FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = $1::regclass`,
        [partition],
      );
      const index = Object.fromEntries(rows.map((r) => [r.name.slice(partition.length + 1), Number(r.bytes)]));
      const heap = Number((await db.client.query(`SELECT pg_relation_size($1::regclass) AS b`, [partition])).rows[0].b);
      return { heap, index, indexes: rows.reduce((sum, r) => sum + Number(r.bytes), 0) };
    };
    const recorded = async (partition: string) =>
      (
        await db.client.query<{ before: string; after: string; finished: Date | null }>(
          `SELECT bytes_before AS before, bytes_after AS after, finished_at AS finished
             FROM storage_compactions WHERE partition = $1`,
          [partition],
        )
      ).rows[0];
    /**
     * Deliveries of `week` as a week stored before the inbox (migration webhook_inbox) holds them: inserted into the
     * weekly table with their bytes, then processed in place (bytes emptied), each leaving its first version behind.
     */
    const processedDeliveriesIn = async (week: Date, n: number, wabaId: string) => {
      const { rows } = await db.client.query<{ id: string }>(
        `INSERT INTO webhook_deliveries (raw_body, signature, waba_ids, batch_id, status, received_at)
         SELECT convert_to(json_build_object('pad', repeat('x', 600))::text, 'UTF8'), 'sha256=00', ARRAY[$1], 'b',
                'received', $3
           FROM generate_series(1, $2) RETURNING id`,
        [wabaId, n, new Date(week.getTime() + 3 * DAY_MS)],
      );
      const ids = rows.map((r) => Number(r.id));
      await db.client.query(
        `UPDATE webhook_deliveries SET status = 'processed', raw_body = '', signature = '', batch_id = NULL,
                processed_at = now(), event_count = 1 WHERE id = ANY($1::bigint[])`,
        [ids],
      );
      return ids;
    };
    const deliveryRows = async (ids: number[]) =>
      (await db.client.query('SELECT * FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id', [ids])).rows;
    const compactAll = async () => {
      const runs: string[][] = [];
      for (;;) {
        const done = await maintenance({}).compact(wednesday);
        if (!done.length) return runs;
        runs.push(done.map((c) => c.partition));
      }
    };

    it("compacts an ended week once, the newest week first: indexes rebuilt at their fill factor, the deliveries' heap without the processing's leftovers; everything reads the same", async () => {
      // Three accounts' statuses interleaved, as Meta sends them: each account appends within its own index range.
      const accounts = [metaId(), metaId(), metaId()];
      const at = new Date(lastWeek.getTime() + 3 * DAY_MS);
      for (let chunk = 0; chunk < 12; chunk++)
        await insertAt(
          Array.from({ length: 600 }, (_, i) =>
            eventRow(1, accounts[i % 3]!, i % 7 === 0 ? { status: 'read', title: 'Message read' } : {}),
          ),
          new Date(at.getTime() + chunk * 1000),
        );
      const ids = await processedDeliveriesIn(lastWeek, 1500, accounts[0]!);
      const read = async () =>
        Promise.all(
          accounts.flatMap((wabaId) => [
            events.page(wabaId, {}, { page: 1, limit: 100 }),
            events.page(wabaId, { status: 'read' }, { page: 3, limit: 50 }),
            events.page(wabaId, { kind: 'status_update' }, { page: 2, limit: 100 }),
          ]),
        );
      const before = await read();
      const deliveriesBefore = await deliveryRows(ids);
      const listBefore = await deliveries.listForAccounts([{ wabaId: accounts[0]! }], { page: 2, limit: 50 });
      const indexesBefore = {
        events: await indexesOf(lastWeekEvents),
        deliveries: await indexesOf(lastWeekDeliveries),
      };
      const partitionsBefore = (await deliveries.partitions()).map((p) => p.name);
      const bytesBefore = await bytesOf(lastWeekEvents);

      const runs = await compactAll();

      // One partition of each table per run, the newest ended week first; each partition once, this week's never.
      expect(runs[0]).toEqual([lastWeekEvents, lastWeekDeliveries]);
      const all = runs.flat();
      expect(new Set(all).size).toBe(all.length);
      expect(all).not.toContain(partitionName(thisWeek));
      // The week's 7,200 events: the heap as it was (insert-only), the per-account indexes each account appended to
      // rebuilt at their fill factor (67 % of their bytes: 8 of 12 pages; their keys pack as an account appends, and
      // one transaction's rows of an account share one entry), the whole partition smaller (about 90 %: the indexes
      // on hashed or interleaved keys were about 75 % full), as recorded.
      const bytesAfter = await bytesOf(lastWeekEvents);
      expect(bytesAfter.heap).toBe(bytesBefore.heap);
      for (const index of ['hashtextextended_created_at_idx', 'hashtextextended_xid_idx'])
        expect(bytesAfter.index[index]).toBeLessThan(bytesBefore.index[index]! * 0.75);
      const ev = (await recorded(lastWeekEvents))!;
      expect(Number(ev.before)).toBeGreaterThanOrEqual(bytesBefore.heap + bytesBefore.indexes);
      expect(Number(ev.after)).toBeLessThan(Number(ev.before) * 0.95);
      expect(ev.finished).toBeInstanceOf(Date);
      // The week's 1,500 deliveries: their 600-byte bodies' space gone with the rewrite.
      const dv = (await recorded(lastWeekDeliveries))!;
      expect(Number(dv.after)).toBeLessThan(Number(dv.before) * 0.5);
      expect(logged.find((l) => l.msg.startsWith(`storage partition ${lastWeekEvents}: compacted`))).toBeDefined();
      // The same partitions and indexes by name, valid and still the partitions of the tables' indexes; every list,
      // filter, total and delivery the same.
      expect((await deliveries.partitions()).map((p) => p.name)).toEqual(partitionsBefore);
      for (const [partition, was] of [
        [lastWeekEvents, indexesBefore.events],
        [lastWeekDeliveries, indexesBefore.deliveries],
      ] as const) {
        const now = await indexesOf(partition);
        expect(now).toEqual(was);
        expect(now.every((i) => i.valid && i.parent !== null)).toBe(true);
      }
      expect(await read()).toEqual(before);
      expect(await deliveryRows(ids)).toEqual(deliveriesBefore);
      expect(await deliveries.listForAccounts([{ wabaId: accounts[0]! }], { page: 2, limit: 50 })).toEqual(listBefore);
      // A delivery of that week can still be written (a late processing, a replay).
      await db.client.query(`UPDATE webhook_deliveries SET attempts = attempts + 1 WHERE id = $1`, [ids[0]]);
    });

    it("a deliveries partition its week's writers hold: given back after 200 ms, compacted at the next pass", async () => {
      const week = new Date(thisWeek.getTime() - 2 * WEEK_MS);
      const partition = deliveriesOf(partitionName(week));
      const ids = await processedDeliveriesIn(week, 100, metaId());
      await db.client.query(
        `UPDATE storage_compactions SET started_at = now() - interval '7 hours', finished_at = NULL WHERE partition = $1`,
        [partition],
      );
      // A transaction writing one of that week's deliveries (a replay, say), open while the pass runs.
      const writer = new pg.Client({ connectionString: db.url });
      await writer.connect();
      await writer.query('BEGIN');
      await writer.query('UPDATE webhook_deliveries SET attempts = 1 WHERE id = $1', [ids[0]]);
      try {
        const t = Date.now();
        const pass = await maintenance({}).compact(wednesday);
        expect(pass.map((c) => c.partition)).not.toContain(partition);
        expect(Date.now() - t).toBeLessThan(5_000);
        expect(await recorded(partition)).toBeUndefined();
      } finally {
        await writer.query('COMMIT');
        await writer.end();
      }
      const [again] = await maintenance({}).compact(wednesday);
      expect(again).toMatchObject({ partition, rewrittenRows: 100 });
      expect((await deliveryRows(ids))[0]).toMatchObject({ attempts: 1 });
    });

    it('a rebuild interrupted in its middle: its invalid index is dropped and its claim taken over, after 6 hours only', async () => {
      const week = new Date(thisWeek.getTime() - 2 * WEEK_MS);
      const partition = partitionName(week);
      await insertAt([eventRow(1, metaId()), eventRow(1, metaId())], new Date(week.getTime() + DAY_MS));
      // What a REINDEX CONCURRENTLY stopped half-way leaves: an invalid index beside the valid ones, a claim not finished.
      await db.client
        .query(`CREATE UNIQUE INDEX CONCURRENTLY ${partition}_kind_ccnew ON ${partition} (kind)`)
        .catch(() => undefined);
      expect((await indexesOf(partition)).filter((i) => !i.valid).map((i) => i.name)).toEqual([
        `${partition}_kind_ccnew`,
      ]);
      await db.client.query(
        `UPDATE storage_compactions SET started_at = now() - interval '1 hour', finished_at = NULL WHERE partition = $1`,
        [partition],
      );
      expect((await maintenance({}).compact(wednesday)).map((c) => c.partition)).not.toContain(partition);

      await db.client.query(
        `UPDATE storage_compactions SET started_at = now() - interval '7 hours' WHERE partition = $1`,
        [partition],
      );
      const [taken] = await maintenance({}).compact(wednesday);
      expect(taken).toMatchObject({ partition, leftovers: [`${partition}_kind_ccnew`], rewrittenRows: null });
      expect((await indexesOf(partition)).every((i) => i.valid)).toBe(true);
    });

    it("a dropped week's record goes with it", async () => {
      const { rows } = await db.client.query<{ partition: string }>(
        `SELECT partition FROM storage_compactions WHERE partition LIKE 'events_p%' ORDER BY partition LIMIT 1`,
      );
      const oldest = rows[0]!.partition;
      await maintenance({ EVENTS_RETENTION_DAYS: '8', WEBHOOK_RETENTION_DAYS: '0' }).pass(now);
      expect((await db.client.query(`SELECT to_regclass($1) AS t`, [oldest])).rows[0].t).toBeNull();
      const left = await db.client.query('SELECT 1 FROM storage_compactions WHERE partition = $1', [oldest]);
      expect(left.rowCount).toBe(0);
    });
  });

  it('a pass that fails (PostgreSQL unreachable) changes nothing, counts the failure and logs how far ahead partitions exist', async () => {
    const broken = new Db(AppConfig.fromEnv(testEnv({ DATABASE_URL: db.url })));
    const metrics = new Metrics();
    const m = new PartitionMaintenance(
      new EventsRepository(broken),
      new WebhookDeliveriesRepository(broken),
      AppConfig.fromEnv(testEnv({ DATABASE_URL: db.url })),
      metrics,
      logger as never,
    );
    const { until } = await m.ensureAhead(now);
    await broken.close(); // as good as PostgreSQL gone, for this process
    const partitionsBefore = (await events.partitions()).map((p) => p.name);

    await expect(m.pass(now)).rejects.toThrow();
    expect(
      await metrics.registry.getSingleMetricAsString('bmapi_storage_partition_maintenance_failures_total'),
    ).toMatch(/ 1$/m);
    expect(
      await metrics.registry.getSingleMetricAsString('bmapi_storage_partitions_until_timestamp_seconds'),
    ).toContain(`${until.events.getTime() / 1000}`);
    expect(logged.at(-1)).toMatchObject({ level: 'error', obj: { eventsPartitionsUntil: until.events.toISOString() } });
    expect((await events.partitions()).map((p) => p.name)).toEqual(partitionsBefore);
    // The next pass, on a working connection, goes on where it was.
    await expect(maintenance({}).pass(now)).resolves.toBeDefined();
  });
});
