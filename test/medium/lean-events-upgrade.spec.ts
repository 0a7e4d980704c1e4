import { AppConfig } from '../../src/core/config/app-config.js';
import { Db } from '../../src/core/db/db.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { EventsRepository, type Event } from '../../src/events/events.repository.js';
import { WebhookDeliveriesRepository } from '../../src/webhooks/deliveries/webhook-deliveries.repository.js';
import { eventRow } from '../utils/factories.js';
import { migrationNames, scratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';
import { testEnv } from '../utils/test-env.js';

const UPGRADE = '20261202210000_lean_events';

type Row = Record<string, unknown>;

/**
 * The upgrade of migration lean_events on a database holding rows of the previous shape (every migration before it,
 * applied as the migration tool does; rows written the way the service wrote them, event_counts by the old triggers),
 * then the migration, then what must hold: every event reads back through the repository exactly as the API showed it
 * before (names of the codes, title, raw item, pricing), totals unchanged and kept by the new triggers, a redelivery of
 * an item stored before the upgrade recognised, and processed deliveries without their bytes while waiting ones and
 * dead letters keep theirs.
 */
describe('Upgrade to lean events (PostgreSQL)', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let events: EventsRepository;
  const q = async <T extends Row = Row>(text: string, values: unknown[] = []) =>
    (await scratch.client.query<T>(text, values)).rows;
  const wabaA = '310000000000201';
  const wabaB = '310000000000202';
  const pricing = { type: 'regular', billable: true, category: 'utility', pricing_model: 'PMP' };
  /** Every event as the API showed it before the upgrade (the same fields EventsRepository reads now). */
  let before: Row[] = [];
  let totalsBefore: Row[] = [];
  const ids: Record<string, number> = {};
  const deliveries: Record<string, number> = {};
  const totals = () =>
    q(
      `SELECT waba_id, kind, status, sum(count)::int AS n FROM event_counts GROUP BY 1, 2, 3 HAVING sum(count) <> 0 ORDER BY 1, 2, 3`,
    );

  beforeAll(async () => {
    expect(migrationNames()).toContain(UPGRADE);
    scratch = await scratchDatabase(UPGRADE);
    const delivery = async (name: string, status: string, body: string) => {
      deliveries[name] = (
        await q<{ id: number }>(
          `INSERT INTO webhook_deliveries (raw_body, signature, waba_ids, batch_id, status, attempts, event_count, processed_at)
           VALUES (convert_to($1, 'UTF8'), 'sha256=' || md5($1), ARRAY[$2], 'b-' || $3, $3, 1,
                   CASE WHEN $3 = 'processed' THEN 1 END, CASE WHEN $3 = 'processed' THEN now() END) RETURNING id::int AS id`,
          [body, wabaA, status],
        )
      )[0]!.id;
    };
    await delivery('processed', 'processed', '{"entry":[{"id":"processed"}]}');
    await delivery('waiting', 'received', '{"entry":[{"id":"waiting"}]}');
    await delivery('dead', 'failed', '{"entry":[{"id":"dead"}]}');
    const event = async (
      name: string,
      e: {
        waba?: string;
        eventType?: string;
        kind: string;
        title: string;
        status?: string | null;
        recipient?: string | null;
        messageId?: string | null;
        error?: [number, string, string];
        raw: Row;
        pricing?: Row | null;
        key: string;
        processed?: boolean;
      },
    ) => {
      ids[name] = (
        await q<{ id: number }>(
          `INSERT INTO events (delivery_id, waba_id, phone_number_id, event_type, kind, title, status, recipient, message_id,
                               upstream_timestamp, error_code, error_title, error_detail, raw, pricing, dedupe_key, processed, processed_at)
           VALUES ($1, $2, '402000000000001', $3, $4, $5, $6, $7, $8, '2026-11-30T10:00:00Z', $9, $10, $11, $12, $13, $14, $15,
                   CASE WHEN $15 THEN now() END) RETURNING id::int AS id`,
          [
            deliveries.processed,
            e.waba ?? wabaA,
            e.eventType ?? 'messages',
            e.kind,
            e.title,
            e.status ?? null,
            e.recipient ?? null,
            e.messageId ?? null,
            e.error?.[0] ?? null,
            e.error?.[1] ?? null,
            e.error?.[2] ?? null,
            JSON.stringify(e.raw),
            e.pricing ? JSON.stringify(e.pricing) : null,
            e.key,
            e.processed ?? true,
          ],
        )
      )[0]!.id;
    };
    const item = (id: string, status: string) => ({
      id,
      status,
      timestamp: '1764496800',
      recipient_id: '447700900001',
      pricing,
      metadata: { display_phone_number: '15550001111', phone_number_id: '402000000000001' },
    });
    await event('delivered', {
      kind: 'status_update',
      title: 'Message delivered',
      status: 'delivered',
      recipient: '447700900001',
      messageId: 'wamid.up.1',
      raw: item('wamid.up.1', 'delivered'),
      pricing,
      key: 'status:wamid.up.1:delivered:1764496800',
    });
    await event('failed', {
      kind: 'status_update',
      title: 'Message failed: Re-engagement message (131047)',
      status: 'failed',
      recipient: '447700900001',
      messageId: 'wamid.up.2',
      error: [131047, 'Re-engagement message', 'More than 24 hours'],
      raw: { ...item('wamid.up.2', 'failed'), errors: [{ code: 131047, title: 'Re-engagement message' }] },
      pricing,
      key: 'status:wamid.up.2:failed:1764496800',
    });
    await event('unknownStatus', {
      waba: wabaB,
      eventType: 'a_field_from_2027',
      kind: 'status_update',
      title: 'Message status: zapped',
      status: 'zapped',
      messageId: 'wamid.up.3',
      raw: { id: 'wamid.up.3', status: 'zapped' },
      key: 'status:wamid.up.3:zapped:1764496800',
      processed: false,
    });
    await event('inbound', {
      kind: 'inbound_message',
      title: 'Inbound text from 447700900001: hello',
      recipient: '447700900001',
      messageId: 'wamid.in.1',
      raw: { id: 'wamid.in.1', from: '447700900001', type: 'text', text: { body: 'hello' } },
      key: 'inbound:wamid.in.1',
    });
    await event('template', {
      eventType: 'message_template_status_update',
      kind: 'template_status',
      title: 'Template order_update (en_US) approved',
      raw: { event: 'APPROVED', message_template_name: 'order_update' },
      key: 'message_template_status_update:310000000000201:1764496800:abc',
    });

    // As the API read them before (the columns as they were).
    before = await q(
      `SELECT id::int AS id, delivery_id::int AS "deliveryId", waba_id AS "wabaId", phone_number_id AS "phoneNumberId", event_type AS "eventType",
              kind, title, status, recipient, user_id AS "userId", message_id AS "messageId", upstream_timestamp AS "upstreamTimestamp",
              error_code AS "errorCode", error_title AS "errorTitle", error_detail AS "errorDetail", raw, pricing, processed, attempts,
              created_at AS "createdAt"
         FROM events ORDER BY id`,
    );
    totalsBefore = await totals();
    expect(totalsBefore.length).toBeGreaterThan(3);

    await scratch.migrate(UPGRADE);
    // And every migration after it, as a deployment does (the repository reads today's columns): rows stored before them
    // must read back the same.
    for (const later of migrationNames().filter((m) => m > UPGRADE)) await scratch.migrate(later);
    db = new Db(AppConfig.fromEnv(testEnv({ DATABASE_URL: scratch.url })));
    events = new EventsRepository(db);
  });

  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  const read = async (id: number, waba = wabaA): Promise<Event> => (await events.findInAccounts([waba], id))!;

  it('reads every event back as the API showed it before: names, title, raw item, pricing', async () => {
    for (const b of before) {
      const after = await read(b.id as number, b.wabaId as string);
      expect(after).toEqual(b);
      // The very JSON text the API answered (jsonb keeps its own key order, which the rewrite did not change).
      expect(JSON.stringify(after.raw)).toBe(JSON.stringify(b.raw));
    }
  });

  it('stored the events lean: codes, the derivable title as NULL, a status item without its columns, 16-byte keys', async () => {
    const rows = await q<{
      id: number;
      kind: number;
      status: number | null;
      title: string | null;
      raw: Row;
      k: Buffer;
    }>(`SELECT id::int AS id, kind, status, title, raw, dedupe_key AS k FROM events ORDER BY id`);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(ids.delivered!)).toMatchObject({ kind: 2, status: 2, title: null });
    expect(Object.keys(byId.get(ids.delivered!)!.raw).sort()).toEqual(['metadata', 'pricing', 'timestamp']);
    expect(byId.get(ids.failed!)).toMatchObject({ title: null });
    expect(byId.get(ids.unknownStatus!)).toMatchObject({ status: 0, title: null });
    expect(byId.get(ids.inbound!)).toMatchObject({
      kind: 1,
      status: null,
      title: 'Inbound text from 447700900001: hello',
    });
    expect(rows.every((r) => r.k.length === 16)).toBe(true);
    const columns = await q<{ c: string }>(
      `SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'events' AND column_name IN ('pricing', 'processed_at')`,
    );
    expect(columns).toEqual([]);
  });

  it('keeps the totals, and its triggers count new events under their names', async () => {
    expect(await totals()).toEqual(totalsBefore);
    const delivery = deliveries.waiting!;
    const fresh = eventRow(delivery, wabaB, { status: 'zapped', title: 'Message status: zapped' });
    await new UnitOfWork(db).run((tx) => events.insert(tx, [fresh]));
    const page = await events.page(wabaB, { status: 'zapped' }, { page: 1, limit: 10 });
    expect(page.total).toBe(2);
    expect(page.rows.map((e) => e.status)).toEqual(['zapped', 'zapped']);
  });

  it('recognises a redelivery of an item stored before the upgrade (the hashed key of the same text)', async () => {
    const again = eventRow(deliveries.waiting!, wabaA, {
      messageId: 'wamid.up.1',
      dedupeKey: 'status:wamid.up.1:delivered:1764496800',
    });
    const newer = eventRow(deliveries.waiting!, wabaA, { dedupeKey: 'status:wamid.up.1:read:1764496900' });
    const inserted = await new UnitOfWork(db).run((tx) => events.insert(tx, [again, newer]));
    expect([...inserted.keys()]).toEqual([newer.dedupeKey]);
  });

  it('drops the bytes of processed deliveries only: waiting ones and dead letters keep theirs for a replay', async () => {
    type Stored = { id: number; status: string; raw_body: Buffer; signature: string; batch_id: string | null };
    const rows = await q<Stored & { inbox: boolean }>(
      `SELECT id::int AS id, status, raw_body, signature, batch_id, false AS inbox FROM webhook_deliveries
       UNION ALL SELECT id::int, status, raw_body, signature, batch_id, true FROM webhook_inbox ORDER BY id`,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    // And the later migration webhook_inbox moved the unfinished ones into the inbox, with their ids; the processed
    // one stays in the weekly table.
    expect(rows.map((r) => [r.id, r.status, r.inbox])).toEqual([
      [deliveries.processed, 'processed', false],
      [deliveries.waiting, 'received', true],
      [deliveries.dead, 'failed', true],
    ]);
    expect(byId.get(deliveries.processed!)).toMatchObject({ raw_body: Buffer.alloc(0), signature: '', batch_id: null });
    expect(byId.get(deliveries.waiting!)!.raw_body.toString()).toBe('{"entry":[{"id":"waiting"}]}');
    expect(byId.get(deliveries.dead!)!.raw_body.toString()).toBe('{"entry":[{"id":"dead"}]}');
    expect(byId.get(deliveries.dead!)!.signature).toMatch(/^sha256=/);
    // The worker still finds the waiting one with its bytes, and the sweeper's index holds the unfinished ones.
    const found = await new WebhookDeliveriesRepository(db).findForProcessing([deliveries.waiting!]);
    expect(found.map((d) => d.rawBody.toString())).toEqual(['{"entry":[{"id":"waiting"}]}']);
    expect(
      await new WebhookDeliveriesRepository(db).stillReceived(new Date(Date.now() + 60_000), undefined, 10),
    ).toEqual([expect.objectContaining({ id: deliveries.waiting })]);
  });
});
