import { ApiProperty } from '@nestjs/swagger';
import type { StoredMessage } from './messages.repository.js';
import { ApiRowId } from '../core/http/openapi.js';
import { MESSAGE_TYPES } from './dto/send-message.dto.js';

export class MessageErrorView {
  @ApiProperty({ type: Number, nullable: true, example: 131047 }) code: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'Re-engagement message' }) title: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'More than 24 hours have passed since the customer last replied.' }) detail: string | null;
  @ApiProperty({ enum: ['retryable', 'permanent', 'policy', 'window', 'credential'], nullable: true }) category: string | null;
}

/** The spec's fuller Message form, plus the failure reason when there is one. */
export class MessageView {
  @ApiRowId(1) id: number;
  @ApiProperty({ nullable: true, type: String, example: 'wamid.HBgM…' }) upstreamMessageId: string | null;
  @ApiProperty({ example: '402000000000011' }) phoneNumberId: string;
  @ApiProperty({ type: String, nullable: true, example: '447700900123', description: 'The recipient’s phone number; null when sent to a userId' }) to: string | null;
  @ApiProperty({ type: String, nullable: true, example: null, description: 'The recipient’s business-scoped user id (BSUID) when sent to one; null when sent to a phone number' })
  userId: string | null;
  @ApiProperty({
    enum: ['cloud_api', 'marketing_messages'],
    example: 'cloud_api',
    description: 'Which upstream API carried it: the Cloud API (/messages) or the Marketing Messages API (/marketing_messages: MARKETING templates of an onboarded account)',
  })
  upstreamApi: string;
  @ApiProperty({ enum: MESSAGE_TYPES }) type: string;
  @ApiProperty({ enum: ['pending', 'sent', 'delivered', 'read', 'failed'], example: 'sent' }) status: string;
  @ApiProperty({ nullable: true, type: String, example: 'parcel_update', description: 'Template messages only' }) templateName: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'en_GB', description: 'Template messages only' }) templateLanguage: string | null;
  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' }) createdAt: string;
  @ApiProperty({ type: MessageErrorView, nullable: true, description: 'Why it failed (upstream error), when it did' }) error: MessageErrorView | null;
}

const CONTENT_DESCRIPTION =
  'What was sent, in the shape it was sent: `{components}` for templates, `{text}`, or the field named after the type (`{image: {link|id, caption}}`, `{interactive: {…}}`, …), plus `context` for replies';

/** The pricing object of the message's status webhooks (per-message pricing): counts, not amounts. */
export class MessagePricingView {
  @ApiProperty({ nullable: true, type: String, example: 'PMP' }) pricingModel: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'utility' }) category: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'regular', description: 'regular, free_customer_service or free_entry_point' }) type: string | null;
  @ApiProperty({ nullable: true, type: Boolean, description: 'Deprecated by Meta in favour of type' }) billable: boolean | null;
}

/** A message in a list: the Message form plus what was sent and how Meta priced it. */
export class MessageListItemView extends MessageView {
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: CONTENT_DESCRIPTION }) content: unknown;
  @ApiProperty({ type: MessagePricingView, nullable: true, description: 'Null until a status webhook with a pricing object arrived' }) pricing: MessagePricingView | null;
}

export const toMessageListItem = (m: StoredMessage): MessageListItemView => ({ ...toMessageView(m), content: m.content, pricing: pricingViewOf(m) });

function pricingViewOf(m: StoredMessage): MessagePricingView | null {
  if (m.pricingModel === null && m.pricingCategory === null && m.pricingType === null && m.pricingBillable === null) return null;
  return { pricingModel: m.pricingModel, category: m.pricingCategory, type: m.pricingType, billable: m.pricingBillable };
}

export class StatusHistoryItem {
  @ApiProperty({ example: 'delivered' }) status: string;
  @ApiProperty({ nullable: true, type: String, description: 'When the upstream platform says it happened' }) timestamp: string | null;
  @ApiProperty({ description: 'When we received it' }) receivedAt: string;
  @ApiProperty({ enum: ['send', 'webhook'] }) source: 'send' | 'webhook';
}

export class MessageDetailView extends MessageListItemView {
  @ApiProperty({ nullable: true, type: String }) sentAt: string | null;
  @ApiProperty({ nullable: true, type: String }) deliveredAt: string | null;
  @ApiProperty({ nullable: true, type: String }) readAt: string | null;
  @ApiProperty({ nullable: true, type: String }) failedAt: string | null;
  @ApiProperty({ type: [StatusHistoryItem] }) statusHistory: StatusHistoryItem[];
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function toMessageView(m: StoredMessage): MessageView {
  return {
    id: m.id,
    upstreamMessageId: m.upstreamMessageId,
    phoneNumberId: m.phoneNumberId,
    to: m.to,
    userId: m.userId,
    upstreamApi: m.upstreamApi,
    type: m.type,
    status: m.status,
    templateName: m.templateName,
    templateLanguage: m.templateLanguage,
    createdAt: m.createdAt.toISOString(),
    error:
      m.errorCode !== null || m.errorTitle !== null
        ? { code: m.errorCode, title: m.errorTitle, detail: m.errorDetail, category: m.errorCategory }
        : null,
  };
}

export function toMessageDetailView(m: StoredMessage, history: StatusHistoryItem[]): MessageDetailView {
  return {
    ...toMessageListItem(m),
    sentAt: iso(m.sentAt),
    deliveredAt: iso(m.deliveredAt),
    readAt: iso(m.readAt),
    failedAt: iso(m.failedAt),
    statusHistory: history,
  };
}
