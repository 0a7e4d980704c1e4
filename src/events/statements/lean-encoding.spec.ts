import { classify } from '../classify.js';
import { PRICING_CATEGORIES, PRICING_TYPES } from '../pricing.js';
import { decodePricing, encodePricing, leanItem, readRaw } from './lean-encoding.js';

const PHONE = '402345678901234';
const metadata = { display_phone_number: '447700900500', phone_number_id: PHONE };

/** A status as Meta sends it (reference, "Statuses"), classified as the worker does. */
const draftOf = (status: Record<string, unknown>) =>
  classify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '310987654321098',
        changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata, statuses: [status] } }],
      },
    ],
  }).drafts[0]!;

/** How a read gets the stored row back (the names, not the codes). */
const readBack = (d: ReturnType<typeof draftOf>) => {
  const stored = leanItem(d);
  return {
    stored,
    read: readRaw({
      raw: JSON.parse(JSON.stringify(stored.raw)) as unknown,
      kind: d.kind,
      status: d.status,
      messageId: d.messageId,
      recipient: d.recipient,
      phoneNumberId: d.phoneNumberId,
      upstreamTimestamp: d.upstreamTimestamp,
      lean: stored.lean,
      displayPhone: stored.displayPhone,
      callbackId: stored.callbackId,
    }),
  };
};

describe('lean status items', () => {
  const delivered = {
    id: 'wamid.HBgLMTU1NTAwMDAwMDEVAgARGBI',
    status: 'delivered',
    timestamp: '1796262642',
    recipient_id: '447700900123',
    pricing: { billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' },
  };

  it("stores a status's timestamp, phone numbers and pricing once, and reads the item back whole", () => {
    const { stored, read } = readBack(draftOf(delivered));
    // What the row keeps of it: nothing (NULL); it is all in its columns, `lean` and `display_phone`.
    expect(stored.raw).toBeNull();
    expect(stored.displayPhone).toBe(447700900500);
    expect(stored.lean).not.toBeNull();
    expect(read).toEqual({ ...delivered, metadata });
    // In jsonb's key order (shorter keys first), as the API showed it when the item was stored whole.
    expect(JSON.stringify(read)).toBe(
      JSON.stringify({
        id: delivered.id,
        status: 'delivered',
        pricing: { type: 'regular', billable: true, category: 'utility', pricing_model: 'PMP' },
        metadata: { phone_number_id: PHONE, display_phone_number: '447700900500' },
        timestamp: delivered.timestamp,
        recipient_id: delivered.recipient_id,
      }),
    );
  });

  it('keeps a display number a bigint would not give back, and what else Meta puts in metadata', () => {
    for (const display of ['+44 7700 900500', '0447700900500', '4477009005001234', '']) {
      const m = { display_phone_number: display, phone_number_id: PHONE };
      const d = { ...draftOf(delivered), raw: { ...draftOf(delivered).raw, metadata: m } };
      const { stored, read } = readBack(d);
      expect(stored.raw).toEqual({ metadata: { display_phone_number: display } });
      expect(stored.displayPhone).toBeNull();
      expect(read).toEqual({ ...delivered, metadata: m });
    }
    const m = { ...metadata, a_key_from_2027: 1 };
    const d = { ...draftOf(delivered), raw: { ...draftOf(delivered).raw, metadata: m } };
    const { stored, read } = readBack(d);
    expect(stored.raw).toEqual({ metadata: { a_key_from_2027: 1 } });
    expect(read).toEqual({ ...delivered, metadata: m });
    expect(Object.keys((read as { metadata: object }).metadata)).toEqual([
      'a_key_from_2027',
      'phone_number_id',
      'display_phone_number',
    ]);
  });

  it('reads back an item stored before migration lean_list_indexes (its display number in raw, no bit 12)', () => {
    const d = draftOf(delivered);
    const now = leanItem(d);
    const before = { raw: { metadata: { display_phone_number: '447700900500' } }, lean: now.lean! & ~(1 << 12) };
    const read = readRaw({ ...d, ...before, displayPhone: null, callbackId: null });
    expect(JSON.stringify(read)).toBe(JSON.stringify(readBack(d).read));
    expect(read).toEqual({ ...delivered, metadata });
  });

  it('keeps whatever would not read back exactly as sent', () => {
    const odd = [
      { ...delivered, timestamp: '01796262642' },
      { ...delivered, timestamp: 1796262642 },
      { ...delivered, pricing: { ...delivered.pricing, category: 'a_category_from_2027' } },
      { ...delivered, pricing: { ...delivered.pricing, conversation: 'x' } },
      { ...delivered, pricing: {} },
      { ...delivered, pricing: null },
      { ...delivered, pricing: { ...delivered.pricing, billable: 'true' } },
    ];
    for (const item of odd) {
      const { stored, read } = readBack(draftOf(item));
      expect(read).toEqual({ ...item, metadata });
      const kept = stored.raw;
      if (typeof item.timestamp !== 'string' || item.timestamp.startsWith('0'))
        expect(kept).toHaveProperty('timestamp');
      if (item.pricing !== delivered.pricing) expect(kept).toHaveProperty('pricing', item.pricing);
    }
  });

  it('keeps the phone number id when it is not the one the event is stored under', () => {
    const d = draftOf(delivered);
    const { raw } = leanItem({ ...d, phoneNumberId: '999' });
    expect(raw).toHaveProperty('metadata', { phone_number_id: PHONE });
  });

  it('leaves the items of other kinds as they are', () => {
    const d = { ...draftOf(delivered), kind: 'inbound_message' as const };
    expect(leanItem(d)).toEqual({ raw: d.raw, lean: null, displayPhone: null, callbackId: null });
  });

  describe('the callback data of a message sent through the service', () => {
    // The send path sets `bm:<message id>` (messages/send), and Meta echoes it in each status of that message.
    const ours = { ...delivered, biz_opaque_callback_data: 'bm:184467440737' };

    it('keeps it once, in `callback_id`, and reads the item back whole in jsonb order', () => {
      const { stored, read } = readBack(draftOf(ours));
      expect(stored.raw).toBeNull();
      expect(stored.callbackId).toBe(184467440737);
      expect(read).toEqual({ ...ours, metadata });
      expect(Object.keys(read as object)).toEqual([
        'id',
        'status',
        'pricing',
        'metadata',
        'timestamp',
        'recipient_id',
        'biz_opaque_callback_data',
      ]);
    });

    it("keeps any other value as sent: a customer's own, a leading zero, a number past a safe integer", () => {
      for (const value of ['order-42', 'bm:0123', 'bm:9007199254740993', 'bm:', 'BM:12', 12]) {
        const item = { ...delivered, biz_opaque_callback_data: value };
        const { stored, read } = readBack(draftOf(item));
        expect(stored.raw).toEqual({ biz_opaque_callback_data: value });
        expect(stored.callbackId).toBeNull();
        expect(read).toEqual({ ...item, metadata });
      }
    });

    it('reads back an item stored before migration lean_callback_data (the data in raw, no bit 13)', () => {
      const d = draftOf(ours);
      const now = leanItem(d);
      const before = { raw: { biz_opaque_callback_data: ours.biz_opaque_callback_data }, lean: now.lean! & ~(1 << 13) };
      const read = readRaw({ ...d, ...before, displayPhone: now.displayPhone, callbackId: null });
      expect(JSON.stringify(read)).toBe(JSON.stringify(readBack(d).read));
    });
  });

  it('packs every pricing Meta documents into bits and back', () => {
    const choices: Record<string, readonly unknown[]> = {
      billable: [undefined, true, false],
      pricing_model: [undefined, 'PMP', 'CBP'],
      type: [undefined, ...PRICING_TYPES],
      category: [undefined, ...PRICING_CATEGORIES],
    };
    const codes = new Set<number>();
    let objects: Record<string, unknown>[] = [{}];
    for (const [key, values] of Object.entries(choices))
      objects = objects.flatMap((o) => values.map((v) => (v === undefined ? o : { ...o, [key]: v })));
    for (const p of objects) {
      const code = encodePricing(p);
      if (Object.keys(p).length === 0) {
        expect(code).toBe(0);
        continue;
      }
      expect(code).toBeGreaterThan(0);
      expect(code).toBeLessThan(1 << 10);
      expect(decodePricing(code)).toEqual(p);
      codes.add(code);
    }
    expect(codes.size).toBe(objects.length - 1);
    // Stored codes do not move: the lists only grow at their end (src/events/pricing.ts).
    expect(encodePricing({ billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' })).toBe(149);
    expect(encodePricing({ billable: false, category: 'general_purpose_ai' })).toBe(2 + (11 << 6));
  });
});
