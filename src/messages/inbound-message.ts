import type { InboundMessageRow } from './messages.repository.js';

type JsonRecord = Record<string, unknown>;
const isRecord = (v: unknown): v is JsonRecord => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An inbound event as the worker has it: Meta's message item (with `metadata` and `contact` added) in `raw`. */
export interface InboundItem {
  wabaId: string;
  phoneNumberId: string | null;
  recipient: string | null;
  userId: string | null;
  messageId: string | null;
  /** The webhook field it came on: `standby` while Meta Business Agent handled the conversation. */
  eventType: string;
  raw: unknown;
}

/**
 * A customer's message as a stored message: its content in the shapes of outbound content, `{[type]: Meta's
 * object}` (`{text: {body}}`, `{image: {id, mime_type, sha256, caption}}`, `{location: {…}}`, `{interactive:
 * {type, button_reply|list_reply|nfm_reply}}` (a flow's answer with its `response_json` parsed as `response`), `{reaction: {message_id, emoji}}`, `{contacts: […]}`, …) plus
 * `context: {message_id}` for a reply (Meta's `context.id`; forwarded flags kept). Null for an item without the
 * receiving number (nothing to file it under).
 */
export function inboundMessageOf(item: InboundItem): InboundMessageRow | null {
  if (item.phoneNumberId === null) return null;
  const raw = isRecord(item.raw) ? item.raw : {};
  const type = typeof raw.type === 'string' && raw.type !== '' ? raw.type : 'unknown';
  const content: JsonRecord = { [type]: type === 'interactive' ? withFlowResponse(raw[type]) : (raw[type] ?? null) };
  if (isRecord(raw.context)) {
    const { id, from: _from, ...flags } = raw.context;
    content.context = { ...(typeof id === 'string' ? { message_id: id } : {}), ...flags };
  }
  // Meta's reason for an unsupported message (errors[]), so that a reader sees why there is no content.
  if (Array.isArray(raw.errors)) content.errors = raw.errors;
  return {
    wabaId: item.wabaId,
    phoneNumberId: item.phoneNumberId,
    from: item.recipient,
    userId: item.userId,
    handledBy: item.eventType === 'standby' ? 'meta_business_agent' : null,
    type,
    content,
    wamid: item.messageId,
  };
}

/**
 * A flow's answer (`interactive.type: nfm_reply`) with Meta's `response_json` (a JSON string) also parsed, as
 * `nfm_reply.response`, so readers get the user's answers as an object. A string that is not a JSON object is kept
 * as it came, with nothing added (tolerant: the message is stored whatever Meta sent).
 */
export function withFlowResponse(interactive: unknown): unknown {
  if (!isRecord(interactive) || interactive.type !== 'nfm_reply' || !isRecord(interactive.nfm_reply))
    return interactive ?? null;
  const reply = interactive.nfm_reply;
  if (typeof reply.response_json !== 'string') return interactive;
  let response: unknown;
  try {
    response = JSON.parse(reply.response_json);
  } catch {
    return interactive;
  }
  return isRecord(response) ? { ...interactive, nfm_reply: { ...reply, response } } : interactive;
}
