// How `events` is read back as the API names it. The table stores a lean row (migration 20261202210000_lean_events,
// docs/storage.md "Lean events: the layout"): smallint codes for the webhook field, kind and status (named by SQL
// functions, an unknown field or status kept as text beside code 0), a status's title left NULL where
// events_status_title words it the same, a status's raw item without the keys its columns hold (events_raw puts them
// back), and no copy of the pricing (the status item's own). Every read of whole events selects these expressions, so
// the rows look as they did before.
import type { ExpressionBuilder } from 'kysely';
import type { Database, JsonValue } from '../../core/db/database.js';
import type { EventKind } from '../classify.js';

type Eb = ExpressionBuilder<Database, 'events'>;

/** A kind's code, by the migration's function (a parameter: generic plans keep it an index condition). */
export const kindCode = <TB extends keyof Database>(eb: ExpressionBuilder<Database, TB>, kind: EventKind) =>
  eb.fn<number>('events_kind_code', [eb.val(kind)]);

const statusName = (eb: Eb) => eb.fn<string | null>('events_status_name', ['status', 'status_other']);
const isStatus = (eb: Eb) => eb('kind', '=', kindCode(eb, 'status_update'));

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
    eb.fn<JsonValue>('events_raw', ['raw', isStatus(eb), 'message_id', statusName(eb), 'recipient']).as('raw'),
    eb
      .case()
      .when(isStatus(eb))
      .then(eb.ref('raw', '->').key('pricing' as never))
      .end()
      .$castTo<JsonValue | null>()
      .as('pricing'),
    'created_at as createdAt',
  ] as const;

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
