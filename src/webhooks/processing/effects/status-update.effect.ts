import { Injectable } from '@nestjs/common';
import type { Prisma } from '../../../generated/prisma/client.js';
import { errorCategoryOf, isDeliveryStatus, nextStatus, type MessageStatus } from '../../../messages/message-status.js';
import { isRecord } from '../classify.js';
import type { EffectOutcome, EventEffect, StoredEvent, Tx } from './event-effect.js';

/** `biz_opaque_callback_data` our send path sets: `bm:<message id>`. */
const CALLBACK_DATA = /^bm:(\d{1,10})$/;

export interface LockedMessage {
  id: number;
  status: string;
  errorCategory: string | null;
  sentAt: Date | null;
  deliveredAt: Date | null;
  readAt: Date | null;
  failedAt: Date | null;
}

/**
 * A delivery status moves its message forward (never back: see messages/message-status.ts) and records
 * when it happened. The message is found by wamid, or, when the send response has not been stored yet (or
 * the send timed out), by the callback data our send path put on it, which also links the wamid.
 */
@Injectable()
export class StatusUpdateEffect implements EventEffect {
  appliesTo(event: StoredEvent): boolean {
    return event.kind === 'status_update' && event.messageId !== null && event.status !== null && isDeliveryStatus(event.status);
  }

  async apply(tx: Tx, event: StoredEvent): Promise<EffectOutcome> {
    const wamid = event.messageId!;
    let message = await lockByWamid(tx, wamid, event.wabaId);
    let link = false;
    if (!message) {
      const messageId = callbackMessageId(event.raw);
      if (messageId !== null) {
        message = await lockUnlinked(tx, messageId, event.wabaId);
        link = message !== null;
      }
    }
    if (!message) return 'waiting';

    const data: Prisma.MessageUpdateInput = statusChanges(message, event);
    if (link) data.upstreamMessageId = wamid;
    if (Object.keys(data).length > 0) await tx.message.update({ where: { id: message.id }, data });
    return 'applied';
  }
}

/** The columns to change on `message` for this status event (pure; empty when nothing changes). */
export function statusChanges(
  message: LockedMessage,
  event: Pick<StoredEvent, 'status' | 'upstreamTimestamp' | 'createdAt' | 'errorCode' | 'errorTitle' | 'errorDetail'>,
): Prisma.MessageUpdateInput {
  const incoming = event.status ?? '';
  const at = event.upstreamTimestamp ?? event.createdAt;
  const next = nextStatus({ status: message.status as MessageStatus, errorCategory: message.errorCategory }, incoming);
  const data: Prisma.MessageUpdateInput = {};
  if (next) data.status = next;
  if (next && next !== 'failed' && message.status === 'failed') {
    // Real progress after a send whose outcome was unknown (timeout): the message did not fail after all.
    Object.assign(data, { failedAt: null, errorCode: null, errorTitle: null, errorDetail: null, errorCategory: null });
  }
  switch (incoming) {
    case 'sent':
      if (!message.sentAt) data.sentAt = at;
      break;
    case 'delivered':
      // Earliest wins: a `read` that arrived first filled deliveredAt with the read time.
      if (!message.deliveredAt || at < message.deliveredAt) data.deliveredAt = at;
      break;
    case 'read':
      if (!message.readAt) data.readAt = at;
      // read implies delivered (Meta skips `delivered` when the message is read at once)
      if (!message.deliveredAt) data.deliveredAt = at;
      break;
    case 'failed': {
      // A failure recorded because the send's outcome was unknown is replaced by the real reason.
      const refinesUnknownOutcome = message.status === 'failed' && message.errorCategory === 'retryable';
      if (next === 'failed' || refinesUnknownOutcome) {
        data.status = 'failed';
        data.failedAt = message.failedAt && !refinesUnknownOutcome ? message.failedAt : at;
        data.errorCode = event.errorCode;
        data.errorTitle = event.errorTitle;
        data.errorDetail = event.errorDetail;
        data.errorCategory = errorCategoryOf(event.errorCode);
      }
      break;
    }
  }
  return data;
}

function callbackMessageId(raw: unknown): number | null {
  const data = isRecord(raw) ? raw.biz_opaque_callback_data : undefined;
  const match = typeof data === 'string' ? CALLBACK_DATA.exec(data) : null;
  return match ? Number(match[1]) : null;
}

async function lockByWamid(tx: Tx, wamid: string, wabaId: string): Promise<LockedMessage | null> {
  const rows = await tx.$queryRaw<LockedMessage[]>`
    SELECT m.id, m.status, m.error_category AS "errorCategory", m.sent_at AS "sentAt", m.delivered_at AS "deliveredAt",
           m.read_at AS "readAt", m.failed_at AS "failedAt"
      FROM messages m JOIN business_accounts b ON b.id = m.business_account_id
     WHERE m.upstream_message_id = ${wamid} AND b.waba_id = ${wabaId}
       FOR UPDATE OF m`;
  return rows[0] ?? null;
}

/** Only a message of this business account that has no wamid yet can be linked by callback data. */
async function lockUnlinked(tx: Tx, messageId: number, wabaId: string): Promise<LockedMessage | null> {
  const rows = await tx.$queryRaw<LockedMessage[]>`
    SELECT m.id, m.status, m.error_category AS "errorCategory", m.sent_at AS "sentAt", m.delivered_at AS "deliveredAt",
           m.read_at AS "readAt", m.failed_at AS "failedAt"
      FROM messages m JOIN business_accounts b ON b.id = m.business_account_id
     WHERE m.id = ${messageId} AND b.waba_id = ${wabaId} AND m.upstream_message_id IS NULL
       FOR UPDATE OF m`;
  return rows[0] ?? null;
}
