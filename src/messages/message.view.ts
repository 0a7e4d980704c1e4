import { ApiProperty } from '@nestjs/swagger';
import { PricingView } from '../core/contract/pricing.view.js';
import type { StoredMessage } from './messages.repository.js';
import { ApiRowId } from '../core/contract/row-id.js';
import { MESSAGE_TYPES } from './dto/send-message.dto.js';

export const MESSAGE_DIRECTIONS = ['outbound', 'inbound'] as const;
export type MessageDirection = (typeof MESSAGE_DIRECTIONS)[number];

export class MessageErrorView {
  @ApiProperty({ type: Number, nullable: true, example: 131047 }) code: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'Re-engagement message' }) title: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'More than 24 hours have passed since the customer last replied.',
  })
  detail: string | null;
  @ApiProperty({
    enum: ['retryable', 'permanent', 'policy', 'window', 'credential', 'throughput', 'pair_rate_limit'],
    nullable: true,
  })
  category: string | null;
}

/** The spec's fuller Message form, plus the failure reason when there is one. */
export class MessageView {
  @ApiRowId(1) id: number;
  @ApiProperty({
    enum: MESSAGE_DIRECTIONS,
    example: 'outbound',
    description: '`outbound`: sent with a key pair; `inbound`: a customer wrote to the business',
  })
  direction: MessageDirection;
  @ApiProperty({ nullable: true, type: String, example: 'wamid.HBgM…' }) upstreamMessageId: string | null;
  @ApiProperty({
    example: '402000000000011',
    description: 'The sending number (outbound) or the number that received the message (inbound)',
  })
  phoneNumberId: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: '447700900123',
    description: 'Recipient, E.164 digits (outbound); null when sent to a userId, and for inbound messages',
  })
  to: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description:
      "Inbound: the customer's number (E.164 digits), or null when Meta gives only the business-scoped user id (a user with a username)",
  })
  from: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description:
      "The customer's business-scoped user id (BSUID): the recipient of a send to a userId, or the sender of an inbound message when Meta gives one",
  })
  userId: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    enum: ['meta_business_agent'],
    example: null,
    description:
      "Inbound: who handled the conversation when the customer wrote. `meta_business_agent`: Meta's AI agent held it (the message came on Meta's `standby` webhook field; the agent may answer it, and a reply you send takes the conversation over); null: your app held it. Always null for outbound messages",
  })
  handledBy: string | null;
  @ApiProperty({
    enum: ['cloud_api', 'marketing_messages'],
    example: 'cloud_api',
    description:
      'Which upstream API carried it: the Cloud API (/messages) or the Marketing Messages API (/marketing_messages: MARKETING templates of an onboarded account)',
  })
  upstreamApi: string;
  @ApiProperty({
    type: String,
    example: 'template',
    description: `Outbound: one of ${MESSAGE_TYPES.join(', ')}. Inbound: Meta's type of the customer's message, which adds button (a template's quick reply), order, system, unsupported, …`,
  })
  type: string;
  @ApiProperty({
    enum: ['pending', 'sent', 'delivered', 'read', 'failed', 'received'],
    example: 'sent',
    description: '`received` for inbound messages',
  })
  status: string;
  @ApiProperty({ nullable: true, type: String, example: 'parcel_update', description: 'Template messages only' })
  templateName: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'en_GB', description: 'Template messages only' })
  templateLanguage: string | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: null,
    description:
      'The campaign that sent it (GET /business-accounts/{wabaId}/campaigns/{id}); null for POST /messages and inbound messages',
  })
  campaignId: number | null;
  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' }) createdAt: string;
  @ApiProperty({ type: MessageErrorView, nullable: true, description: 'Why it failed (upstream error), when it did' })
  error: MessageErrorView | null;
}

const CONTENT_DESCRIPTION =
  'What was sent (or received), in the shape it is sent: `{components}` for templates, `{text: {body}}`, or the field named after the type (`{image: {link|id, caption}}`, `{interactive: {…}}`, …), plus `context: {message_id}` for replies. ' +
  "Inbound: Meta's object under the type (`{image: {id, mime_type, sha256, caption}}`, `{interactive: {type: 'button_reply', button_reply: {id, title}}}`, `{location: {…}}`, `{reaction: {message_id, emoji}}`, …)";

/** The media of an inbound image, video, audio, document or sticker, with a link that serves its bytes. */
export class InboundMediaView {
  @ApiProperty({ nullable: true, type: String, example: 'image/jpeg' }) mimeType: string | null;
  @ApiProperty({
    nullable: true,
    type: Number,
    example: null,
    description: 'Bytes, when Meta gave the size (the download answers Content-Length)',
  })
  size: number | null;
  @ApiProperty({ nullable: true, type: String, description: "Meta's SHA-256 of the file" }) sha256: string | null;
  @ApiProperty({ nullable: true, type: String }) caption: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Documents' }) filename: string | null;
  @ApiProperty({
    example: 'https://api.example.com/media/inbound/djE6…​.q2-7wAAAAAAAAAAAAAAAA',
    description:
      'GET it without key headers (hand it to a storage job): the bytes, streamed from Meta. Signed, bound to this message, expires at `expiresAt` (minutes); ' +
      'read the message again for a fresh one. Tampered → 404, expired → 410, Meta no longer has the media (about 7 days) → 404 naming it, too many downloads of the account at once → 429.',
  })
  url: string;
  @ApiProperty({ example: '2026-11-26T10:05:00.000Z' }) expiresAt: string;
}

/** A message in a list: the Message form plus what was sent and how Meta priced it. */
export class MessageListItemView extends MessageView {
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: CONTENT_DESCRIPTION })
  content: unknown;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description:
      "When the organization's content retention removed what the message said (content is null from then on; statuses, pricing and addresses stay)",
  })
  contentScrubbedAt: string | null;
  @ApiProperty({
    type: PricingView,
    nullable: true,
    description: 'Null until a status webhook with a pricing object arrived',
  })
  pricing: PricingView | null;
  @ApiProperty({ type: InboundMediaView, nullable: true, description: 'Inbound media messages only' })
  media: InboundMediaView | null;
}

export const toMessageListItem = (m: StoredMessage, media: InboundMediaView | null = null): MessageListItemView => ({
  ...toMessageView(m),
  content: m.content,
  contentScrubbedAt: m.contentScrubbedAt?.toISOString() ?? null,
  pricing: pricingViewOf(m),
  media,
});

function pricingViewOf(m: StoredMessage): PricingView | null {
  if (m.pricingModel === null && m.pricingCategory === null && m.pricingType === null && m.pricingBillable === null)
    return null;
  return {
    pricingModel: m.pricingModel,
    category: m.pricingCategory,
    type: m.pricingType,
    billable: m.pricingBillable,
  };
}

export class StatusHistoryItem {
  @ApiProperty({ example: 'delivered' }) status: string;
  @ApiProperty({ nullable: true, type: String, description: 'When the upstream platform says it happened' }) timestamp:
    string | null;
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
    direction: m.direction as MessageDirection,
    upstreamMessageId: m.upstreamMessageId,
    phoneNumberId: m.phoneNumberId,
    to: m.to,
    from: m.from,
    userId: m.userId,
    handledBy: m.handledBy,
    upstreamApi: m.upstreamApi,
    type: m.type,
    status: m.status,
    templateName: m.templateName,
    templateLanguage: m.templateLanguage,
    campaignId: m.campaignId,
    createdAt: m.createdAt.toISOString(),
    error:
      m.errorCode !== null || m.errorTitle !== null
        ? { code: m.errorCode, title: m.errorTitle, detail: m.errorDetail, category: m.errorCategory }
        : null,
  };
}

export function toMessageDetailView(
  m: StoredMessage,
  history: StatusHistoryItem[],
  media: InboundMediaView | null = null,
): MessageDetailView {
  return {
    ...toMessageListItem(m, media),
    sentAt: iso(m.sentAt),
    deliveredAt: iso(m.deliveredAt),
    readAt: iso(m.readAt),
    failedAt: iso(m.failedAt),
    statusHistory: history,
  };
}
