// How `events` is read back as the API names it. The table stores a lean row (migrations 20261202210000_lean_events and
// 20261203060000_lean_status_items, docs/storage.md "Lean events: the layout"): smallint codes for the webhook field,
// kind and status (named by SQL functions, an unknown field or status kept as text beside code 0), a status's title left
// NULL where events_status_title words it the same, and a status's raw item without the keys other columns hold, put
// back by `readEvent` (lean-encoding.ts's readRaw) once the rows are in: every read of whole events selects these
// columns and maps its rows with it, so the rows look as they did before.
import type { ExpressionBuilder } from 'kysely';
import type { Database, JsonValue } from '../../core/db/database.js';
import type { EventKind } from '../classify.js';
import { pricingOfItem, readRaw, type StoredItem } from './lean-encoding.js';

type Eb = ExpressionBuilder<Database, 'events'>;

/** A kind's code, by the migration's function (a parameter: generic plans keep it an index condition). */
export const kindCode = <TB extends keyof Database>(eb: ExpressionBuilder<Database, TB>, kind: EventKind) =>
  eb.fn<number>('events_kind_code', [eb.val(kind)]);

const statusName = (eb: Eb) => eb.fn<string | null>('events_status_name', ['status', 'status_other']);

/** The columns an effect reads (all but the title and the event's own processing state). */
export const storedEventColumns = (eb: Eb) =>
  [
    'id',
    'delivery_id as deliveryId',
    'waba_id as wabaId',
    'phone_number_id as phoneNumberId',
    eb.fn<string>('events_type_name', ['event_type', 'event_type_other']).as('eventType'),
    eb.fn<string>('events_kind_name', ['kind']).as('kind'),
    statusName(eb).as('status'),
    'recipient',
    'user_id as userId',
    'message_id as messageId',
    'upstream_timestamp as upstreamTimestamp',
    'error_code as errorCode',
    'error_title as errorTitle',
    'error_detail as errorDetail',
    'raw',
    'lean',
    'display_phone as displayPhone',
    'callback_id as callbackId',
    'created_at as createdAt',
  ] as const;

/** An event as the API and the effects read it: its item whole, and a status's `pricing` (from the item). */
export type ReadEvent<R extends StoredItem> = Omit<R, 'lean' | 'displayPhone' | 'callbackId' | 'raw'> & {
  raw: JsonValue;
  pricing: JsonValue | null;
};

/**
 * A row of `storedEventColumns` or `eventColumns` as the API names it (its raw item put back whole, a status's pricing
 * beside it), in place: `lean`, `displayPhone` and `callbackId` are left undefined rather than deleted (JSON leaves it out), since a copy of the row
 * without it (or a `delete`, which turns the row into a dictionary) cost 3–4 µs per row, more than the rest together.
 */
export function readEvent<R extends StoredItem>(row: R): ReadEvent<R> {
  const raw = readRaw(row) as JsonValue;
  const out = row as unknown as {
    raw: JsonValue;
    pricing: JsonValue | null;
    lean?: number | null;
    displayPhone?: number | null;
    callbackId?: number | null;
  };
  out.raw = raw;
  out.pricing = pricingOfItem(row.kind, raw) as JsonValue | null;
  out.lean = undefined;
  out.displayPhone = undefined;
  out.callbackId = undefined;
  return out as unknown as ReadEvent<R>;
}

/** A whole event as the API shows it. */
export const eventColumns = (eb: Eb) =>
  [
    ...storedEventColumns(eb),
    eb
      .fn<string>('coalesce', ['title', eb.fn('events_status_title', [statusName(eb), 'error_title', 'error_code'])])
      .as('title'),
    'processed',
    'attempts',
  ] as const;
