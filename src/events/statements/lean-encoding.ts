// The lean columns of an event as the worker's insert writes them (docs/storage.md, "Lean events: the layout"),
// computed here rather than by SQL functions per row: PostgreSQL does not inline events_raw_lean and
// events_status_title, and each row then ran the SQL-function executor (bench/history/
// 2026-12-03-issue-40-where-the-time-goes.md). The migration's SQL functions stay the one definition for the rows it
// converted and for every read (event-columns.ts names the codes with them); test/medium/lean-encoding.spec.ts holds
// these encoders to those functions, value by value.
import type { JsonRecord } from '../payload-values.js';
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
