/**
 * Message status rules, shared by the send path (API) and webhook processing (worker).
 *
 * pending → sent → delivered → read, moving forward only: a late or duplicated lower status is kept as an
 * event but never downgrades the message. `read` implies `delivered`. `failed` ends a message that was not
 * yet delivered; the one exception is a send whose outcome was unknown (timeout, network, 5xx): if the
 * upstream platform later reports progress for it, that evidence wins.
 */
export const MESSAGE_STATUSES = ['pending', 'sent', 'delivered', 'read', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export type ErrorCategory = 'retryable' | 'permanent' | 'policy' | 'window' | 'credential';

const RANK: Record<Exclude<MessageStatus, 'failed'>, number> = { pending: 0, sent: 1, delivered: 2, read: 3 };

export interface StatusState {
  status: MessageStatus;
  errorCategory: string | null;
}

/** The status a message should have after `incoming` is reported, or null if it must not change. */
export function nextStatus(current: StatusState, incoming: string): MessageStatus | null {
  if (!isDeliveryStatus(incoming)) return null;
  if (current.status === 'failed') {
    // A failure we recorded because the send's outcome was unknown is overridden by real progress.
    return current.errorCategory === 'retryable' && incoming !== 'failed' ? incoming : null;
  }
  if (incoming === 'failed') return current.status === 'pending' || current.status === 'sent' ? 'failed' : null;
  return RANK[incoming] > RANK[current.status] ? incoming : null;
}

export function isDeliveryStatus(value: string): value is 'sent' | 'delivered' | 'read' | 'failed' {
  return value === 'sent' || value === 'delivered' || value === 'read' || value === 'failed';
}

/** The category shown with a failed message's error, from Meta's error code. */
export function errorCategoryOf(code: number | null | undefined, errorClass?: string): ErrorCategory {
  if (code === 131047) return 'window';
  if (code === 0 || code === 190 || code === 3 || code === 10 || (code !== undefined && code !== null && code >= 200 && code <= 299)) {
    return 'credential';
  }
  if (code !== undefined && code !== null && [131048, 131049, 131050, 368, 130497, 131031, 131042].includes(code)) return 'policy';
  if (errorClass === 'retryable') return 'retryable';
  if (code !== undefined && code !== null && [4, 80007, 130429, 131056, 1, 2, 131000, 131016, 131057, 133004].includes(code)) {
    return 'retryable';
  }
  if (errorClass === 'credential') return 'credential';
  if (errorClass === 'account_blocked') return 'policy';
  return 'permanent';
}
