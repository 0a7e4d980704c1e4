import { ACCOUNT_TITLES, accountTitle, templateTitle } from './event-titles.js';
import { firstError, hashOf, humanise, isRecord, str, timeKey, unixTime, type JsonRecord } from './payload-values.js';

export { isRecord, unixTime, type JsonRecord } from './payload-values.js';

/**
 * Turns one webhook payload into one event per item, without any I/O. Meta batches: every `entry[]`, every
 * `changes[]`, every `statuses[]` and `messages[]` item becomes its own event. Nothing here throws on an
 * unexpected shape: whatever arrives is kept as an event (classified as well as possible) and reported in
 * `anomalies`, so the caller can log it.
 */

export const EVENT_KINDS = [
  'inbound_message',
  'status_update',
  'template_status',
  'account_update',
  'call',
  'handover',
  'agent_message',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export interface EventDraft {
  wabaId: string;
  phoneNumberId: string | null;
  /** The upstream category: the change's `field` (`messages`, `message_template_status_update`, …). */
  eventType: string;
  kind: EventKind;
  title: string;
  status: string | null;
  recipient: string | null;
  /**
   * Business-scoped user id (BSUID) of the status's recipient or the inbound message's sender: Meta sends it
   * with or without the phone number (a user with a username may have none).
   */
  userId: string | null;
  messageId: string | null;
  upstreamTimestamp: Date | null;
  errorCode: number | null;
  errorTitle: string | null;
  errorDetail: string | null;
  raw: JsonRecord;
  /** A status's pricing object, in Meta's shape (the four documented keys only); null elsewhere. */
  pricing: Pricing | null;
  /** Same item delivered again (Meta retries, duplicates) → same key → stored once. */
  dedupeKey: string;
}

/** Meta's pricing object of a status (per-message pricing, PMP). `billable` is deprecated in favour of `type`. */
export interface Pricing {
  pricing_model: string | null;
  category: string | null;
  type: string | null;
  billable: boolean | null;
}

export interface Classification {
  drafts: EventDraft[];
  /** Shapes that did not look like Meta's documented payloads; the events are still produced. */
  anomalies: string[];
}

const TEMPLATE_FIELDS = new Set([
  'message_template_status_update',
  'message_template_quality_update',
  'template_category_update',
  'message_template_components_update',
]);

/** Fields of a number's conversations: a change of one that carries no item is stored without an anomaly. */
const MESSAGE_FIELDS = new Set(['messages', 'standby', 'calls']);

/** Every field that is not a message or template field is an account-level update, known or not. */
export function kindOfField(field: string): Extract<EventKind, 'template_status' | 'account_update'> {
  if (TEMPLATE_FIELDS.has(field) || field.startsWith('message_template') || field.startsWith('template_'))
    return 'template_status';
  return 'account_update';
}

export function classify(payload: unknown): Classification {
  const out: Classification = { drafts: [], anomalies: [] };
  if (!isRecord(payload) || !Array.isArray(payload.entry)) {
    out.anomalies.push('payload has no entry array');
    return out;
  }
  payload.entry.forEach((entry, e) => classifyEntry(entry, e, out));
  return out;
}

function classifyEntry(entry: unknown, e: number, out: Classification): void {
  if (!isRecord(entry)) {
    out.anomalies.push(`entry[${e}] is not an object`);
    out.drafts.push(unknownDraft('', null, { entry }, 'unknown', null));
    return;
  }
  const wabaId = str(entry.id) ?? (typeof entry.id === 'number' ? String(entry.id) : '');
  if (!wabaId) out.anomalies.push(`entry[${e}] has no id`);
  const entryTime = unixTime(entry.time);
  if (!Array.isArray(entry.changes)) {
    out.anomalies.push(`entry[${e}] has no changes array`);
    out.drafts.push(unknownDraft(wabaId, entry.time, entry, 'unknown', entryTime));
    return;
  }
  entry.changes.forEach((change, c) => {
    if (!isRecord(change)) {
      out.anomalies.push(`entry[${e}].changes[${c}] is not an object`);
      out.drafts.push(unknownDraft(wabaId, entry.time, { change }, 'unknown', entryTime));
      return;
    }
    const field = str(change.field) ?? 'unknown';
    if (field === 'unknown') out.anomalies.push(`entry[${e}].changes[${c}] has no field`);
    const value = isRecord(change.value) ? change.value : {};
    const metadata = isRecord(value.metadata) ? value.metadata : undefined;
    const phoneNumberId = str(metadata?.phone_number_id) ?? null;
    const statuses = Array.isArray(value.statuses) ? value.statuses : [];
    const messages = Array.isArray(value.messages) ? value.messages : [];

    if (field === 'calls' && (Array.isArray(value.calls) || Array.isArray(value.statuses))) {
      const contacts = Array.isArray(value.contacts) ? value.contacts.filter(isRecord) : [];
      const items: unknown[] = [
        ...(Array.isArray(value.calls) ? (value.calls as unknown[]) : []),
        ...(statuses as unknown[]),
      ];
      for (const item of items) out.drafts.push(callDraft(wabaId, phoneNumberId, item, metadata, contacts));
      if (items.length > 0) return;
    }
    if (field === 'messaging_handovers') {
      out.drafts.push(handoverDraft(wabaId, phoneNumberId, entry.time, entryTime, value));
      return;
    }
    const echoes = Array.isArray(value.message_echoes) ? value.message_echoes : [];
    const preferences =
      field === 'user_preferences' && Array.isArray(value.user_preferences) ? value.user_preferences : [];
    if (preferences.length > 0) {
      for (const item of preferences)
        out.drafts.push(preferenceDraft(wabaId, phoneNumberId, item, metadata, entryTime));
      return;
    }
    if (statuses.length === 0 && messages.length === 0 && echoes.length === 0) {
      out.drafts.push(changeDraft(wabaId, entry.time, entryTime, field, change.value, phoneNumberId));
      if (!MESSAGE_FIELDS.has(field) && !TEMPLATE_FIELDS.has(field) && !ACCOUNT_TITLES[field])
        out.anomalies.push(`unknown webhook field ${field}`);
      return;
    }
    const base = { wabaId, phoneNumberId, eventType: field };
    const contacts = Array.isArray(value.contacts) ? value.contacts.filter(isRecord) : [];
    for (const item of statuses) out.drafts.push(statusDraft(base, item, metadata, contacts));
    // While Meta Business Agent holds a conversation (field `standby`), its replies come back as echoes: in
    // `message_echoes[]`, or as `messages[]` items sent from the business number (`from` is the display number or a
    // `to` names the customer). They are the agent's messages, never a customer's.
    const display = str(metadata?.display_phone_number)?.replace(/\D/g, '');
    for (const item of echoes) out.drafts.push(echoDraft(base, item, metadata));
    for (const item of messages) {
      const echo =
        field === STANDBY && isRecord(item) && (str(item.to) !== undefined || (display && item.from === display));
      out.drafts.push(echo ? echoDraft(base, item, metadata) : inboundDraft(base, item, metadata, contacts));
    }
  });
}

/** The field Meta uses while another sender (Meta Business Agent) handles the conversation: same shape as `messages`. */
export const STANDBY = 'standby';

interface DraftBase {
  wabaId: string;
  phoneNumberId: string | null;
  eventType: string;
}

const STATUS_TITLES: Record<string, string> = {
  sent: 'Message sent',
  delivered: 'Message delivered',
  read: 'Message read',
  played: 'Message played',
  deleted: 'Message deleted',
};

function statusDraft(
  base: DraftBase,
  item: unknown,
  metadata: JsonRecord | undefined,
  contacts: JsonRecord[],
): EventDraft {
  const s = isRecord(item) ? item : { item };
  const recipient = str(s.recipient_id) ?? null;
  // BSUID era: `recipient_user_id` on the status (and `contacts[].user_id` beside it); the phone number may be absent.
  const ownUserId = str(s.recipient_user_id) ?? str(s.user_id) ?? null;
  const contact = contactOf(contacts, recipient, ownUserId);
  const wamid = str(s.id) ?? null;
  const status = str(s.status) ?? null;
  const timestamp = timeKey(s.timestamp);
  const error = firstError(s.errors);
  let title = status ? (STATUS_TITLES[status] ?? `Message status: ${status}`) : 'Message status update';
  if (status === 'failed')
    title = error
      ? `Message failed: ${error.title ?? 'Unknown error'}${error.code !== null ? ` (${error.code})` : ''}`
      : 'Message failed';
  return {
    // Not `...base`: every property after a spread in an object literal is defined one by one through the
    // runtime, which made parsing and classifying a status 7× slower (bench:floor: 14 µs → 2 µs per status).
    wabaId: base.wabaId,
    phoneNumberId: base.phoneNumberId,
    eventType: base.eventType,
    kind: 'status_update',
    title,
    status,
    recipient,
    userId: ownUserId ?? str(contact?.user_id) ?? null,
    messageId: wamid,
    upstreamTimestamp: unixTime(s.timestamp),
    errorCode: error?.code ?? null,
    errorTitle: error?.title ?? null,
    errorDetail: error?.detail ?? null,
    raw: metadata ? { ...s, metadata } : s,
    pricing: pricingOf(s.pricing),
    dedupeKey: wamid && status ? `status:${wamid}:${status}:${timestamp}` : `status:?:${hashOf(s)}`,
  };
}

const INBOUND_MEDIA_TYPES = new Set(['image', 'video', 'audio', 'document', 'sticker']);

/** The media of an inbound message (its raw item): Meta's media id, MIME type, caption and file name. */
export interface InboundMedia {
  id: string;
  mimeType: string | null;
  sha256: string | null;
  caption: string | null;
  filename: string | null;
}

export function inboundMediaOf(raw: unknown): InboundMedia | null {
  if (!isRecord(raw) || typeof raw.type !== 'string' || !INBOUND_MEDIA_TYPES.has(raw.type)) return null;
  const m = raw[raw.type];
  if (!isRecord(m) || typeof m.id !== 'string') return null;
  return {
    id: m.id,
    mimeType: str(m.mime_type) ?? null,
    sha256: str(m.sha256) ?? null,
    caption: str(m.caption) ?? null,
    filename: str(m.filename) ?? null,
  };
}

function inboundDraft(
  base: DraftBase,
  item: unknown,
  metadata: JsonRecord | undefined,
  contacts: JsonRecord[],
): EventDraft {
  const m = isRecord(item) ? item : { item };
  const wamid = str(m.id) ?? null;
  const from = str(m.from) ?? null;
  const type = str(m.type) ?? 'message';
  const error = firstError(m.errors);
  // BSUID era: `from` is absent for a user with a username; `from_user_id` and `contacts[].user_id` carry the user.
  const ownUserId = str(m.from_user_id) ?? str(m.user_id) ?? null;
  const contact = contactOf(contacts, from, ownUserId);
  const userId = ownUserId ?? str(contact?.user_id) ?? null;
  const raw: JsonRecord = { ...m };
  if (metadata) raw.metadata = metadata;
  if (contact) raw.contact = contact;
  return {
    wabaId: base.wabaId,
    phoneNumberId: base.phoneNumberId,
    eventType: base.eventType,
    kind: 'inbound_message',
    title: `Inbound ${type} from ${from ?? userId ?? 'unknown sender'}${inboundTitleDetail(type, m)}${base.eventType === STANDBY ? ' (handled by Meta Business Agent)' : ''}`,
    status: null,
    recipient: from,
    userId,
    messageId: wamid,
    upstreamTimestamp: unixTime(m.timestamp),
    errorCode: error?.code ?? null,
    errorTitle: error?.title ?? null,
    errorDetail: error?.detail ?? null,
    raw,
    pricing: null,
    dedupeKey: wamid ? `inbound:${wamid}` : `inbound:?:${hashOf(m)}`,
  };
}

/**
 * A message Meta Business Agent (or another sender on the number) sent to a customer, echoed on `standby`: stored as
 * an event of kind agent_message, never as a customer's message. `recipient` is the customer (`to`).
 */
function echoDraft(base: DraftBase, item: unknown, metadata: JsonRecord | undefined): EventDraft {
  const m = isRecord(item) ? item : { item };
  const wamid = str(m.id) ?? null;
  const to = str(m.to) ?? null;
  const userId = str(m.to_user_id) ?? str(m.recipient_user_id) ?? null;
  const type = str(m.type) ?? 'message';
  const sender = base.eventType === STANDBY ? 'Meta Business Agent' : 'Another sender';
  return {
    wabaId: base.wabaId,
    phoneNumberId: base.phoneNumberId,
    eventType: base.eventType,
    kind: 'agent_message',
    title: `${sender} sent ${type} to ${to ?? userId ?? 'unknown recipient'}${inboundTitleDetail(type, m)}`,
    status: null,
    recipient: to,
    userId,
    messageId: wamid,
    upstreamTimestamp: unixTime(m.timestamp),
    errorCode: null,
    errorTitle: null,
    errorDetail: null,
    raw: metadata ? { ...m, metadata } : m,
    pricing: null,
    dedupeKey: wamid ? `echo:${wamid}` : `echo:?:${hashOf(m)}`,
  };
}

const CALL_DIRECTIONS: Record<string, string> = {
  USER_INITIATED: 'from',
  BUSINESS_INITIATED: 'to',
};

/**
 * One item of a `calls` change: a call event (`event` connect | terminate, `direction`, `duration` and `status` on
 * terminate) or a business-initiated call's status (`statuses[]`: RINGING, ACCEPTED, REJECTED…). `recipient` is the
 * customer (the caller of a user-initiated call, the callee otherwise), `messageId` the call id (`wacid.…`), `status`
 * the event (or the call status of a status item).
 */
function callDraft(
  wabaId: string,
  phoneNumberId: string | null,
  item: unknown,
  metadata: JsonRecord | undefined,
  contacts: JsonRecord[],
): EventDraft {
  const c = isRecord(item) ? item : { item };
  const callId = str(c.id) ?? null;
  const direction = str(c.direction) ?? (str(c.recipient_id) ? 'BUSINESS_INITIATED' : null);
  const userInitiated = direction === 'USER_INITIATED';
  const customer = (userInitiated ? str(c.from) : (str(c.to) ?? str(c.recipient_id))) ?? null;
  const ownUserId =
    (userInitiated ? str(c.from_user_id) : (str(c.to_user_id) ?? str(c.recipient_user_id))) ?? str(c.user_id) ?? null;
  const contact = contactOf(contacts, customer, ownUserId);
  const event = str(c.event) ?? null;
  const callStatus = str(c.status) ?? null;
  const status = event ?? callStatus?.toLowerCase() ?? null;
  const duration =
    typeof c.duration === 'number' || (typeof c.duration === 'string' && /^\d+$/.test(c.duration))
      ? Number(c.duration)
      : null;
  const who = customer ?? ownUserId ?? str(contact?.user_id) ?? 'unknown user';
  const way = direction ? `${CALL_DIRECTIONS[direction] ?? direction.toLowerCase()} ` : '';
  let title = `Call ${way}${who}: ${status ?? 'update'}`;
  if (event === 'connect') title = `Call ${way}${who}: connect${userInitiated ? ' (user initiated)' : ''}`;
  if (event === 'terminate')
    title = `Call ${way}${who} ended${callStatus ? ` (${callStatus})` : ''}${duration !== null ? ` after ${duration} s` : ''}`;
  const error = firstError(c.errors);
  return {
    wabaId,
    phoneNumberId,
    eventType: 'calls',
    kind: 'call',
    title,
    status,
    recipient: customer,
    userId: ownUserId ?? str(contact?.user_id) ?? null,
    messageId: callId,
    upstreamTimestamp: unixTime(c.timestamp),
    errorCode: error?.code ?? null,
    errorTitle: error?.title ?? null,
    errorDetail: error?.detail ?? null,
    raw: metadata ? { ...c, metadata } : c,
    pricing: null,
    dedupeKey: callId ? `call:${callId}:${status ?? ''}:${timeKey(c.timestamp)}` : `call:?:${hashOf(c)}`,
  };
}

/** Who a `messaging_handovers` notification names as owner: a role (`ai_agent`, …) or an app id. */
function ownerOf(value: unknown, role: unknown, appId: unknown): string | null {
  const o = isRecord(value) ? value : {};
  const r = str(o.role) ?? str(role) ?? str(value);
  const id = str(o.app_id) ?? str(appId) ?? (typeof appId === 'number' ? String(appId) : undefined);
  if (r) return OWNER_NAMES[r.toLowerCase()] ?? humanise(r);
  return id ? `app ${id}` : null;
}

const OWNER_NAMES: Record<string, string> = {
  ai_agent: 'Meta Business Agent',
  meta_business_agent: 'Meta Business Agent',
  app: 'the business app',
  business: 'the business app',
  escalation_partner: 'the business app',
};

/**
 * A `messaging_handovers` change: the conversation with one user changed hands between Meta Business Agent and the
 * business app. Meta's notification names its type (`control_passed`: the owner passed it; `control_taken`: the
 * escalation partner took it, explicitly or by sending a service message) and an object of that name with the
 * previous and new owners (roles and/or app ids) and an optional `metadata` string; other shapes (the Messenger
 * handover protocol's `pass_thread_control` / `take_thread_control`) are read the same way. Kind handover; the title
 * says who holds the conversation now.
 */
function handoverDraft(
  wabaId: string,
  phoneNumberId: string | null,
  time: unknown,
  entryTime: Date | null,
  value: JsonRecord,
): EventDraft {
  const type =
    str(value.type) ??
    ['control_passed', 'control_taken', 'pass_thread_control', 'take_thread_control', 'request_thread_control'].find(
      (k) => isRecord(value[k]),
    ) ??
    null;
  const detail = type && isRecord(value[type]) ? value[type] : value;
  const contacts = Array.isArray(value.contacts) ? value.contacts.filter(isRecord) : [];
  const sender = isRecord(value.sender) ? value.sender : isRecord(detail.sender) ? detail.sender : {};
  const recipient =
    str(detail.wa_id) ?? str(value.wa_id) ?? str(sender.phone_number) ?? str(contacts[0]?.wa_id) ?? null;
  const userId = str(detail.user_id) ?? str(value.user_id) ?? str(sender.user_id) ?? str(contacts[0]?.user_id) ?? null;
  const next = ownerOf(detail.new_owner ?? detail.new_owner_role, detail.new_owner_role, detail.new_owner_app_id);
  const previous = ownerOf(
    detail.previous_owner ?? detail.previous_owner_role,
    detail.previous_owner_role,
    detail.previous_owner_app_id,
  );
  const who = recipient ?? userId ?? 'unknown user';
  const verb = type === 'control_taken' || type === 'take_thread_control' ? 'took' : 'now holds';
  const title = next
    ? `Conversation with ${who}: ${next} ${verb} control${previous ? ` from ${previous}` : ''}`
    : `Conversation with ${who}: control changed${type ? ` (${humanise(type)})` : ''}`;
  const at = unixTime(detail.timestamp) ?? unixTime(value.timestamp) ?? entryTime;
  return {
    wabaId,
    phoneNumberId,
    eventType: 'messaging_handovers',
    kind: 'handover',
    title,
    status: type,
    recipient,
    userId,
    messageId: null,
    upstreamTimestamp: at,
    errorCode: null,
    errorTitle: null,
    errorDetail: null,
    raw: value,
    pricing: null,
    dedupeKey: `messaging_handovers:${wabaId}:${timeKey(time)}:${hashOf(value)}`,
  };
}

/**
 * The contact of an item: by phone number, else by user id, else the only one when it names no other user (a
 * batch of statuses for several users may carry one contact: it must not lend its user id to the others).
 */
function contactOf(contacts: JsonRecord[], phone: string | null, userId: string | null): JsonRecord | undefined {
  const lone = contacts.length === 1 ? contacts[0]! : undefined;
  const consistent =
    lone &&
    (phone === null || lone.wa_id === undefined || lone.wa_id === phone) &&
    (userId === null || lone.user_id === undefined || lone.user_id === userId);
  return (
    (phone !== null ? contacts.find((c) => c.wa_id === phone) : undefined) ??
    (userId !== null ? contacts.find((c) => c.user_id === userId) : undefined) ??
    (consistent ? lone : undefined)
  );
}

/** Meta's pricing object reduced to its documented keys; null when absent or not an object. */
export function pricingOf(value: unknown): Pricing | null {
  if (!isRecord(value)) return null;
  const pricing: Pricing = {
    pricing_model: str(value.pricing_model) ?? null,
    category: str(value.category) ?? null,
    type: str(value.type) ?? null,
    billable: typeof value.billable === 'boolean' ? value.billable : null,
  };
  return Object.values(pricing).every((v) => v === null) ? null : pricing;
}

/** What identifies an inbound non-text message at a glance: a file name, a caption, a reply or a reaction. */
function inboundTitleDetail(type: string, m: JsonRecord): string {
  const content = isRecord(m[type]) ? m[type] : {};
  const reply = isRecord(content.button_reply)
    ? content.button_reply
    : isRecord(content.list_reply)
      ? content.list_reply
      : undefined;
  const detail =
    str(content.filename) ??
    str(content.caption) ??
    (reply ? str(reply.title) : undefined) ??
    (type === 'reaction' ? str(content.emoji) : undefined) ??
    (type === 'location' ? str(content.name) : undefined) ??
    (type === 'system' ? (str(content.body) ?? str(content.type)) : undefined);
  return detail ? `: ${detail.slice(0, 80)}` : '';
}

/**
 * One item of a `user_preferences` change: a user stopped or resumed a category of messages (`marketing_messages`),
 * named by `wa_id` and/or `user_id` (BSUID). An account-level update of the user's preference: kind account_update.
 */
function preferenceDraft(
  wabaId: string,
  phoneNumberId: string | null,
  item: unknown,
  metadata: JsonRecord | undefined,
  entryTime: Date | null,
): EventDraft {
  const p = isRecord(item) ? item : { item };
  const recipient = str(p.wa_id) ?? null;
  const userId = str(p.user_id) ?? null;
  const value = str(p.value) ?? 'unknown';
  const category = str(p.category) ?? 'unknown';
  const who = recipient ?? userId ?? 'unknown user';
  return {
    wabaId,
    phoneNumberId,
    eventType: 'user_preferences',
    kind: 'account_update',
    title: `${category === 'marketing_messages' ? 'Marketing messages' : humanise(category)}: ${value} (${who})`,
    status: null,
    recipient,
    userId,
    messageId: null,
    upstreamTimestamp: unixTime(p.timestamp) ?? entryTime,
    errorCode: null,
    errorTitle: null,
    errorDetail: null,
    raw: metadata ? { ...p, metadata } : p,
    pricing: null,
    dedupeKey: `user_preferences:${wabaId}:${recipient ?? ''}:${userId ?? ''}:${category}:${value}:${timeKey(p.timestamp)}`,
  };
}

/** A change that is not a batch of statuses or messages: one event for the whole change. */
function changeDraft(
  wabaId: string,
  time: unknown,
  entryTime: Date | null,
  field: string,
  value: unknown,
  phoneNumberId: string | null,
): EventDraft {
  const v = isRecord(value) ? value : {};
  const error = firstError(v.errors);
  const kind = field === 'messages' ? 'account_update' : kindOfField(field);
  let title = kind === 'template_status' ? templateTitle(field, v) : accountTitle(field, v);
  if (field === 'messages' && error)
    title = `Error${error.code !== null ? ` ${error.code}` : ''}: ${error.title ?? 'unknown'}`;
  return {
    wabaId,
    phoneNumberId,
    eventType: field,
    kind,
    title,
    status: null,
    recipient: null,
    userId: null,
    messageId: null,
    upstreamTimestamp: entryTime,
    errorCode: error?.code ?? null,
    errorTitle: error?.title ?? null,
    errorDetail: error?.detail ?? null,
    raw: isRecord(value) ? value : { value: value ?? null },
    pricing: null,
    dedupeKey: `${field}:${wabaId}:${timeKey(time)}:${hashOf(value ?? null)}`,
  };
}

function unknownDraft(
  wabaId: string,
  time: unknown,
  raw: JsonRecord,
  field: string,
  entryTime: Date | null,
): EventDraft {
  return {
    wabaId,
    phoneNumberId: null,
    eventType: field,
    kind: 'account_update',
    title: `Update: ${field}`,
    status: null,
    recipient: null,
    userId: null,
    messageId: null,
    upstreamTimestamp: entryTime,
    errorCode: null,
    errorTitle: null,
    errorDetail: null,
    raw,
    pricing: null,
    dedupeKey: `${field}:${wabaId}:${timeKey(time)}:${hashOf(raw)}`,
  };
}
