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

/** The category shown with a failed message's error: read from the one Meta error catalogue. */
export { errorCategoryOf, isMarketingStop, type ErrorCategory } from '../upstream/meta-error-catalogue.js';
