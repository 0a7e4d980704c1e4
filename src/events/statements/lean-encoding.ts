// The lean columns of an event as the worker's insert writes them (docs/storage.md, "Lean events: the layout"),
// computed here rather than by SQL functions per row: PostgreSQL does not inline events_raw_lean and
// events_status_title, and each row then ran the SQL-function executor (bench/history/
// 2026-12-03-issue-40-where-the-time-goes.md). The migration's SQL functions stay the one definition of the codes for
// the rows it converted and for the reads' filters and names (event-columns.ts); test/medium/events.repository.spec.ts
// holds these encoders to those functions, value by value. A status item's raw is put back whole here too, on every
// read (readRaw): the keys its columns hold (events_raw's, and those of `lean`, migration lean_status_items).
import { callbackDataFor, callbackMessageId } from '../callback-data.js';
import { isRecord, type JsonRecord } from '../payload-values.js';
import { PRICING_CATEGORIES, PRICING_TYPES } from '../pricing.js';
import type { EventKind } from '../classify.js';

/** events_kind_code: a closed list (an unknown kind fails the insert: NOT NULL). */
const KIND_CODES: Record<EventKind, number> = {
  inbound_message: 1,
  status_update: 2,
  template_status: 3,
  account_update: 4,
  call: 5,
  handover: 6,
  agent_message: 7,
};

/** events_status_code: Meta's statuses (an open list: another one is code 0, its text in status_other). */
const STATUS_CODES: Readonly<Record<string, number>> = {
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 4,
  played: 5,
  deleted: 6,
  warning: 7,
  connect: 8,
  terminate: 9,
  ringing: 10,
  accepted: 11,
  rejected: 12,
  completed: 13,
};

/** events_type_code: Meta's webhook fields (an open list: another one is code 0, its text in event_type_other). */
const TYPE_CODES: Readonly<Record<string, number>> = {
  messages: 1,
  message_template_status_update: 2,
  message_template_quality_update: 3,
  template_category_update: 4,
  message_template_components_update: 5,
  account_update: 6,
  phone_number_quality_update: 7,
  phone_number_name_update: 8,
  account_review_update: 9,
  business_capability_update: 10,
  user_preferences: 11,
  account_alerts: 12,
  calls: 13,
  messaging_handovers: 14,
  standby: 15,
  smb_message_echoes: 16,
  history: 17,
  smb_app_state_sync: 18,
  security: 19,
};

const own = (table: Readonly<Record<string, number>>, key: string): number | undefined =>
  Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;

export function encodeKind(kind: EventKind): number {
  const code = own(KIND_CODES, kind);
  if (code === undefined) throw new Error(`no code for the event kind ${kind}`);
  return code;
}

/** [code, the text kept beside code 0]; null stays null. */
export function encodeStatus(status: string | null): [number | null, string | null] {
  if (status === null) return [null, null];
  const code = own(STATUS_CODES, status);
  return code === undefined ? [0, status] : [code, null];
}

export function encodeEventType(eventType: string | null): [number, string | null] {
  const code = eventType === null ? undefined : own(TYPE_CODES, eventType);
  return code === undefined ? [0, eventType] : [code, null];
}

/** events_status_title: a status's title as classify() words it from its columns. */
export function statusTitle(status: string | null, errorTitle: string | null, errorCode: number | null): string {
  if (status === null) return 'Message status update';
  if (status === 'failed') {
    if (errorTitle === null && errorCode === null) return 'Message failed';
    return `Message failed: ${errorTitle ?? 'Unknown error'}${errorCode === null ? '' : ` (${errorCode})`}`;
  }
  return Object.prototype.hasOwnProperty.call(USUAL_TITLES, status)
    ? USUAL_TITLES[status]!
    : `Message status: ${status}`;
}

const USUAL_TITLES: Readonly<Record<string, string>> = {
  sent: 'Message sent',
  delivered: 'Message delivered',
  read: 'Message read',
  played: 'Message played',
  deleted: 'Message deleted',
};

/** The stored title: NULL for a status whose title the read words the same (events_status_title). */
export function leanTitle(e: {
  kind: EventKind;
  title: string | null;
  status: string | null;
  errorTitle: string | null;
  errorCode: number | null;
}): string | null {
  return e.kind === 'status_update' && e.title === statusTitle(e.status, e.errorTitle, e.errorCode) ? null : e.title;
}

/**
 * events_raw_lean: a status's item without the keys its columns hold (`id` = message_id, `status`, `recipient_id` =
 * recipient), only when each of them is exactly that value (events_raw puts them back on read); any other item whole.
 */
export function leanRaw(e: {
  kind: EventKind;
  raw: JsonRecord;
  messageId: string | null;
  status: string | null;
  recipient: string | null;
}): JsonRecord {
  const raw = e.raw;
  if (
    e.kind !== 'status_update' ||
    e.messageId === null ||
    typeof raw !== 'object' ||
    raw === null ||
    Array.isArray(raw)
  )
    return e.raw;
  if (raw.id !== e.messageId) return e.raw;
  if (e.status !== null && raw.status !== e.status) return e.raw;
  if (e.recipient !== null && raw.recipient_id !== e.recipient) return e.raw;
  const { id: _id, ...rest } = raw;
  if (e.status !== null) delete rest.status;
  if (e.recipient !== null) delete rest.recipient_id;
  return rest;
}

// ---- `lean`: the keys of a status item kept in other columns (migration 20261203060000_lean_status_items)

/** Bit 0: `timestamp` is `upstream_timestamp` in Unix seconds. */
const LEAN_TIMESTAMP = 1;
/** Bit 1: `metadata.phone_number_id` is the `phone_number_id` column. */
const LEAN_PHONE_NUMBER_ID = 2;
/** Bits 2–11: the `pricing` object, packed (encodePricing); 0 there: not packed. */
const PRICING_SHIFT = 2;
const PRICING_MASK = (1 << 10) - 1;
/** Bit 12: `metadata.display_phone_number` is the `display_phone` column in decimal (migration lean_list_indexes). */
const LEAN_DISPLAY_PHONE = 1 << 12;
/** A display number that reads back exactly from a bigint: digits, no leading zero, at most 15 (E.164). */
const DISPLAY_DIGITS = /^[1-9]\d{0,14}$/;
/**
 * Bit 13: `biz_opaque_callback_data` is the send path's callback data of the message `callback_id` (migration
 * lean_callback_data, ../callback-data.ts): Meta's status of every message sent through the service carries it. Any
 * other value stays in the item as sent.
 */
const LEAN_CALLBACK = 1 << 13;

/**
 * Meta's pricing object (reference, "Statuses"): each key one of a closed list (its position + 1 in `bits` bits; 0: the
 * key is absent). A pricing with another key or value, or none of these, stays in the item as sent. The lists are
 * append only (src/events/pricing.ts): a value past what its bits hold is not packed either.
 */
const PRICING_FIELDS: readonly { key: string; values: readonly unknown[]; bits: number }[] = [
  { key: 'billable', values: [true, false], bits: 2 },
  { key: 'pricing_model', values: ['PMP', 'CBP'], bits: 2 },
  { key: 'type', values: PRICING_TYPES, bits: 2 },
  { key: 'category', values: PRICING_CATEGORIES, bits: 4 },
];

/** The pricing object packed into 10 bits; 0 when it cannot be (it then stays in the item). */
export function encodePricing(pricing: unknown): number {
  if (!isRecord(pricing)) return 0;
  const keys = Object.keys(pricing);
  let code = 0;
  let shift = 0;
  let known = 0;
  for (const f of PRICING_FIELDS) {
    if (Object.hasOwn(pricing, f.key)) {
      const at = f.values.indexOf(pricing[f.key]);
      if (at < 0 || at + 1 >= 1 << f.bits) return 0;
      code |= (at + 1) << shift;
      known++;
    }
    shift += f.bits;
  }
  return known > 0 && known === keys.length ? code : 0;
}

/** The pricing object back from its bits, keys in jsonb's order (as every read of the item has them). */
export function decodePricing(code: number): JsonRecord {
  const pricing: JsonRecord = {};
  let shift = 0;
  for (const f of PRICING_FIELDS) {
    const at = (code >> shift) & ((1 << f.bits) - 1);
    if (at > 0) pricing[f.key] = f.values[at - 1];
    shift += f.bits;
  }
  return jsonbOrdered(pricing);
}

/**
 * A status item as stored: leanRaw's item without, besides, the keys `lean` names (returned with it; null: none). Only
 * values that read back exactly are taken out: `timestamp` the decimal Unix seconds of `upstream_timestamp`,
 * `metadata.phone_number_id` the `phone_number_id` column, a `pricing` that packs, `metadata.display_phone_number` as
 * digits (returned as `displayPhone`, for the column of that name), a `biz_opaque_callback_data` of the send path's
 * form (`callbackId`). A `metadata` left empty goes too (a read puts it
 * back with its keys), and an item left empty is NULL.
 */
export function leanItem(e: {
  kind: EventKind;
  raw: JsonRecord;
  messageId: string | null;
  status: string | null;
  recipient: string | null;
  phoneNumberId: string | null;
  upstreamTimestamp: Date | null;
}): LeanItem {
  const thinned = leanRaw(e);
  if (e.kind !== 'status_update' || !isRecord(thinned)) return { ...NOT_LEAN, raw: thinned };
  const raw = thinned === e.raw ? { ...thinned } : thinned;
  let lean = 0;
  const ts = raw.timestamp;
  if (
    typeof ts === 'string' &&
    e.upstreamTimestamp !== null &&
    /^[1-9]\d{0,11}$/.test(ts) &&
    Number(ts) * 1000 === e.upstreamTimestamp.getTime()
  ) {
    delete raw.timestamp;
    lean |= LEAN_TIMESTAMP;
  }
  let displayPhone: number | null = null;
  if (isRecord(raw.metadata)) {
    const metadata = { ...raw.metadata };
    if (e.phoneNumberId !== null && metadata.phone_number_id === e.phoneNumberId) {
      delete metadata.phone_number_id;
      lean |= LEAN_PHONE_NUMBER_ID;
    }
    const display = metadata.display_phone_number;
    if (typeof display === 'string' && DISPLAY_DIGITS.test(display)) {
      delete metadata.display_phone_number;
      displayPhone = Number(display);
      lean |= LEAN_DISPLAY_PHONE;
    }
    if (lean & (LEAN_PHONE_NUMBER_ID | LEAN_DISPLAY_PHONE)) {
      if (Object.keys(metadata).length === 0) delete raw.metadata;
      else raw.metadata = metadata;
    }
  }
  const pricing = encodePricing(raw.pricing);
  if (pricing !== 0) {
    delete raw.pricing;
    lean |= pricing << PRICING_SHIFT;
  }
  let callbackId: number | null = null;
  const callback = callbackMessageId(raw.biz_opaque_callback_data);
  if (callback !== null) {
    delete raw.biz_opaque_callback_data;
    callbackId = callback;
    lean |= LEAN_CALLBACK;
  }
  if (lean === 0) return { ...NOT_LEAN, raw: thinned };
  // Nothing left of the item: NULL in the row (no bytes, where `{}` took 5 and its alignment), `lean` says it was one.
  return { raw: Object.keys(raw).length === 0 ? null : raw, lean, displayPhone, callbackId };
}

/** A status item as the insert stores it: what is left of it, and the columns that hold the rest (leanItem). */
export interface LeanItem {
  raw: JsonRecord | null;
  lean: number | null;
  displayPhone: number | null;
  callbackId: number | null;
}

const NOT_LEAN = { lean: null, displayPhone: null, callbackId: null } as const;

/** What a read needs of a stored event to put its raw item back whole. */
export interface StoredItem {
  raw: unknown;
  /** The names, as the reads give them (events_kind_name, events_status_name). */
  kind: string;
  status: string | null;
  messageId: string | null;
  recipient: string | null;
  phoneNumberId: string | null;
  upstreamTimestamp: Date | null;
  lean: number | null;
  displayPhone: number | null;
  callbackId: number | null;
}

/**
 * The item as Meta sent it (as jsonb keeps it: keys in jsonb's order): events_raw's keys (`id`, `status`,
 * `recipient_id`, taken out by leanRaw, which the item then lacks `id` to say) and those `lean` names. Any other row
 * as stored.
 */
export function readRaw(e: StoredItem): unknown {
  const raw = e.raw === null && e.lean !== null ? {} : e.raw;
  if (e.kind !== 'status_update' || !isRecord(raw)) return raw;
  const ids = e.messageId !== null && !Object.hasOwn(raw, 'id');
  const lean = e.lean ?? 0;
  if (!ids && lean === 0) return raw;
  // [key, value] pairs, sorted once into jsonb's order: the stored keys, then those put back.
  const pairs: [string, unknown][] = [];
  const phone = lean & (LEAN_PHONE_NUMBER_ID | LEAN_DISPLAY_PHONE);
  for (const key of Object.keys(raw)) if (key !== 'metadata' || !phone) pairs.push([key, raw[key]]);
  if (phone) {
    const metadata: JsonRecord = isRecord(raw.metadata) ? { ...raw.metadata } : {};
    if (lean & LEAN_PHONE_NUMBER_ID) metadata.phone_number_id = e.phoneNumberId;
    if (lean & LEAN_DISPLAY_PHONE && e.displayPhone !== null) metadata.display_phone_number = String(e.displayPhone);
    pairs.push(['metadata', jsonbOrdered(metadata)]);
  }
  if (ids) {
    pairs.push(['id', e.messageId]);
    if (e.status !== null) pairs.push(['status', e.status]);
    if (e.recipient !== null) pairs.push(['recipient_id', e.recipient]);
  }
  if (lean & LEAN_CALLBACK && e.callbackId !== null)
    pairs.push(['biz_opaque_callback_data', callbackDataFor(e.callbackId)]);
  if (lean & LEAN_TIMESTAMP && e.upstreamTimestamp !== null)
    pairs.push(['timestamp', String(Math.floor(e.upstreamTimestamp.getTime() / 1000))]);
  const pricing = (lean >> PRICING_SHIFT) & PRICING_MASK;
  if (pricing !== 0) pairs.push(['pricing', decodePricing(pricing)]);
  return objectOf(pairs.sort(byJsonbKey));
}

/** An event's `pricing`: a status item's own (null for other kinds or without one), from its item read back whole. */
export function pricingOfItem(kind: string, item: unknown): unknown {
  return kind === 'status_update' && isRecord(item) && Object.hasOwn(item, 'pricing') ? item.pricing : null;
}

/** jsonb's order of an object's keys: shorter first, then bytewise (what every read of a stored item gives). */
function jsonbOrdered(o: JsonRecord): JsonRecord {
  return objectOf(Object.entries(o).sort(byJsonbKey));
}

function objectOf(pairs: [string, unknown][]): JsonRecord {
  const out: JsonRecord = {};
  for (const [k, v] of pairs) out[k] = v;
  return out;
}

const byJsonbKey = (a: [string, unknown], b: [string, unknown]) => jsonbKeyOrder(a[0], b[0]);

/** By UTF-8 length, then bytewise; for ASCII keys (Meta's) the string's own length and order are the bytes'. */
function jsonbKeyOrder(a: string, b: string): number {
  if (ascii(a) && ascii(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const [la, lb] = [Buffer.byteLength(a), Buffer.byteLength(b)];
  return la !== lb ? la - lb : Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function ascii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}
