import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { postWebhook, startTestWorker, unixNow, waitFor, type TestWorker } from '../utils/webhooks.js';
import { createTenant, wamid, type Tenant } from '../utils/factories.js';
import { countEvents, deliveriesOf as deliveriesOfWaba, eventsOf } from '../utils/messaging-rows.js';
import { inboundTextValue, messagesValue, statusItem, statusesWebhook } from '../../simulator/payloads/webhooks.js';
import { schemaChange } from '../utils/schema-change.js';

jest.setTimeout(180_000);

/**
 * One delivery can carry entries of several business accounts (of different organizations). Each account's
 * part is its own delivery: processing state, errors and replay belong to one tenant.
 */
describe('Webhooks: a delivery with entries of several business accounts', () => {
  let t: TestApp;
  let worker: TestWorker;

  beforeAll(async () => {
    // One attempt: a delivery that fails is a dead letter at once.
    t = await startTestApp({ WEBHOOK_SWEEP_INTERVAL_MS: '300', WEBHOOK_MAX_ATTEMPTS: '1' });
    worker = await startTestWorker(t.config);
  });
  afterAll(async () => {
    await worker?.close();
    await t?.close();
  });

  const deliveriesOf = (tenant: Tenant) => deliveriesOfWaba(t, tenant.account.wabaId);
  const listDeliveries = async (tenant: Tenant) => {
    const res = await t.http.get('/webhooks/deliveries').set('cookie', tenant.operator.cookie);
    expect(res.status).toBe(200);
    return res.body.data.items as Array<{ id: number; status: string; lastError: string | null; wabaIds: string[] }>;
  };
  const delivered = (recipient: string) => statusItem(wamid(), 'delivered', unixNow(), recipient);
  const inboundValue = (tenant: Tenant, from: string) =>
    messagesValue(
      tenant.account.phoneNumberId,
      inboundTextValue({ from, id: wamid(), timestamp: unixNow(), text: 'hello', name: 'Priya' }),
    );

  it("keeps a poisoned item of one account from blocking another's, shows its error only to its own account, and lets only it replay", async () => {
    const [a, b] = [await createTenant(t), await createTenant(t)];
    // An item the database refuses (as an unforeseen failure would): a trigger on events, for this test's marker only.
    const marker = `4479${randomBytes(4).readUInt32BE() % 10_000_000}`;
    const fn = `poison_${randomBytes(4).toString('hex')}`;
    await t.db.pool.query(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'poisoned item'; END $$`,
    );
    await schemaChange(
      t.db.pool,
      `CREATE TRIGGER ${fn} BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.recipient = '${marker}') EXECUTE FUNCTION ${fn}()`,
    );
    try {
      const payload = {
        object: 'whatsapp_business_account',
        entry: [
          {
            id: a.account.wabaId,
            changes: [
              { field: 'messages', value: messagesValue(a.account.phoneNumberId, { statuses: [delivered(marker)] }) },
            ],
          },
          { id: b.account.wabaId, changes: [{ field: 'messages', value: inboundValue(b, '447700900321') }] },
        ],
      };
      expect((await postWebhook(t, payload)).status).toBe(200);

      // Stored as one delivery per account, each with its own entries only.
      const [ofA] = await waitFor(async () => {
        const rows = await deliveriesOf(a);
        return rows.length === 1 && rows[0]!.status === 'failed' ? rows : undefined;
      }, "A's delivery to be dead-lettered");
      const [ofB] = await waitFor(async () => {
        const rows = await deliveriesOf(b);
        return rows.length === 1 && rows[0]!.status === 'processed' ? rows : undefined;
      }, "B's delivery to be processed");
      expect(ofA!.wabaIds).toEqual([a.account.wabaId]);
      expect(ofB!.wabaIds).toEqual([b.account.wabaId]);
      expect(ofA!.id).not.toBe(ofB!.id);
      // The dead letter keeps its bytes (a replay needs them): its own entry only. B's went once processed.
      expect(JSON.parse(Buffer.from(ofA!.rawBody).toString()).entry.map((e: { id: string }) => e.id)).toEqual([
        a.account.wabaId,
      ]);
      expect(ofB!.rawBody).toEqual(Buffer.alloc(0));
      expect(ofA!.lastError).toContain('poisoned item');

      // B's event is stored and applied; A's is not (yet).
      const eventsOfB = await eventsOf(t, b.account.wabaId);
      expect(eventsOfB).toHaveLength(1);
      expect(eventsOfB[0]).toMatchObject({ kind: 'inbound_message', processed: true });
      expect(await countEvents(t, a.account.wabaId)).toBe(0);

      // Each organization sees its own delivery and its own error only.
      const seenByB = await listDeliveries(b);
      expect(seenByB.map((d) => d.id)).toEqual([ofB!.id]);
      expect(seenByB[0]).toMatchObject({ status: 'processed', lastError: null, wabaIds: [b.account.wabaId] });
      const seenByA = await listDeliveries(a);
      expect(seenByA.map((d) => d.id)).toEqual([ofA!.id]);
      expect(seenByA[0]!.lastError).toContain('poisoned item');

      // B cannot replay A's delivery (nor its own into A's).
      expect(
        (await t.http.post(`/webhooks/deliveries/${ofA!.id}/replay`).set('cookie', b.operator.cookie)).status,
      ).toBe(404);
      expect(
        (await t.http.post(`/webhooks/deliveries/${ofB!.id}/replay`).set('cookie', a.operator.cookie)).status,
      ).toBe(404);
    } finally {
      await schemaChange(t.db.pool, `DROP TRIGGER IF EXISTS ${fn} ON events`);
      await t.db.pool.query(`DROP FUNCTION IF EXISTS ${fn}()`);
    }

    // Once the cause is gone, A replays its own delivery: its event is stored, B's is not stored twice.
    const [ofA] = await deliveriesOf(a);
    expect((await t.http.post(`/webhooks/deliveries/${ofA!.id}/replay`).set('cookie', a.operator.cookie)).status).toBe(
      200,
    );
    await waitFor(
      async () => ((await deliveriesOf(a))[0]!.status === 'processed' ? true : undefined),
      "A's replay to be processed",
    );
    expect(await countEvents(t, a.account.wabaId, { recipient: marker })).toBe(1);
    expect(await countEvents(t, b.account.wabaId)).toBe(1);
  });

  it('keeps a single-account delivery as the exact bytes received, until processed', async () => {
    const a = await createTenant(t);
    // No worker while the stored bytes are read (once processed, its items are in `events` and the bytes go).
    await worker.close();
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        { id: a.account.wabaId, changes: [{ field: 'messages', value: inboundValue(a, '447700900322') }] },
        { id: a.account.wabaId, changes: [{ field: 'messages', value: inboundValue(a, '447700900323') }] },
      ],
    };
    const res = await postWebhook(t, payload);
    expect(res.status).toBe(200);
    const [stored] = await deliveriesOf(a);
    expect(JSON.parse(Buffer.from(stored!.rawBody).toString())).toEqual(payload);
    worker = await startTestWorker(t.config);
    const [row] = await waitFor(async () => {
      const rows = await deliveriesOf(a);
      return rows.length === 1 && rows[0]!.status === 'processed' ? rows : undefined;
    }, 'the delivery to be processed');
    expect(row!.eventCount).toBe(2);
  });

  it('stores an item whose numbers are out of range of the database columns, never failing on them', async () => {
    const a = await createTenant(t);
    const item = statusItem(wamid(), 'failed', unixNow(), '447700900324', {
      errors: [
        {
          code: 99999999999,
          title: 'Something new',
          message: 'Something new',
          error_data: { details: 'A code past 2^31' },
        },
      ],
    });
    const payload = statusesWebhook(a.account.wabaId, a.account.phoneNumberId, [item]);
    expect((await postWebhook(t, payload)).status).toBe(200);
    const [row] = await waitFor(async () => {
      const rows = await deliveriesOf(a);
      return rows.length === 1 && rows[0]!.status !== 'received' ? rows : undefined;
    }, 'the delivery to be processed');
    expect(row).toMatchObject({ status: 'processed', lastError: null, eventCount: 1 });
    const [event] = await eventsOf(t, a.account.wabaId);
    // The column cannot hold it; the stored item keeps it as Meta sent it.
    expect(event).toMatchObject({ status: 'failed', errorCode: null, errorTitle: 'Something new' });
    expect((event!.raw as { errors: Array<{ code: number }> }).errors[0]!.code).toBe(99999999999);
  });
});
