// The `biz_opaque_callback_data` the send path sets on every message (`bm:<message id>`) and Meta echoes in each of
// its statuses: it lets a status find its message before the send's answer (the wamid) is stored
// (webhooks/processing/effects/status-update.effect.ts), and the events keep it as a number (statements/lean-encoding.ts).

const PREFIX = 'bm:';
const FORM = /^bm:([1-9]\d{0,15})$/;

/** The callback data of message `messageId`. */
export const callbackDataFor = (messageId: number): string => `${PREFIX}${messageId}`;

/** The message id a callback data of our form names (digits, no leading zero, a safe integer); null for any other value. */
export function callbackMessageId(data: unknown): number | null {
  const match = typeof data === 'string' ? FORM.exec(data) : null;
  const id = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(id) ? id : null;
}
