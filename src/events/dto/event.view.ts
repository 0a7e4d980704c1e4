import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PricingView } from '../../core/contract/pricing.view.js';
import { ApiRowId } from '../../core/contract/row-id.js';
import type { Event } from '../events.repository.js';
import { EVENT_KINDS, inboundMediaOf, pricingOf } from '../classify.js';

export class EventErrorView {
  @ApiProperty({ nullable: true, type: Number, example: 131047 }) code: number | null;
  @ApiProperty({ nullable: true, type: String, example: 'Re-engagement message' }) title: string | null;
  @ApiProperty({ nullable: true, type: String }) detail: string | null;
}

export class EventMediaView {
  @ApiProperty({ example: '1037543291543636', description: "Meta's media id (kept by Meta for about 7 days)" })
  id: string;
  @ApiProperty({ nullable: true, type: String, example: 'image/jpeg' }) mimeType: string | null;
  @ApiProperty({ nullable: true, type: String }) sha256: string | null;
  @ApiProperty({ nullable: true, type: String }) caption: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'invoice.pdf' }) filename: string | null;
  @ApiProperty({
    example: '/business-accounts/310987654321098/media/1037543291543636',
    description: 'Console route that streams the bytes',
  })
  downloadPath: string;
}

/**
 * The pricing view (PricingView, as on the message), plus `pricing_model`, Meta's spelling of `pricingModel`, which
 * status events carried before 2026-12: deprecated, kept with the same value for clients written against it until
 * 2027-06-01 (docs/receiving-and-feeds.md), then removed.
 */
export class EventPricingView extends PricingView {
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'PMP',
    deprecated: true,
    description:
      "The same as pricingModel, in Meta's spelling: kept for existing clients until 2027-06-01; read pricingModel",
  })
  pricing_model: string | null;
}

export class EventView {
  @ApiRowId(1042) id: number;
  @ApiProperty({ example: 'messages', description: 'Upstream category: the webhook field' }) eventType: string;
  @ApiProperty({ enum: EVENT_KINDS }) kind: string;
  @ApiProperty({ example: 'Message delivered' }) title: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'delivered',
    description: 'Delivery status (status updates only)',
  })
  status: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: '447700900123',
    description: 'Phone number of the recipient (status) or sender (inbound); null when Meta sent only a user id',
  })
  recipient: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'US.13491208655302741918',
    description: 'Business-scoped user id (BSUID) of the recipient or sender, when Meta sent one',
  })
  userId: string | null;
  @ApiProperty({ nullable: true, type: String, description: "Equals the related message's upstreamMessageId" })
  messageId: string | null;
  @ApiProperty({ example: '310987654321098' }) wabaId: string;
  @ApiProperty({ nullable: true, type: String, example: '402345678901234' }) phoneNumberId: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'When the upstream platform says it happened (ISO 8601)' })
  upstreamTimestamp: string | null;
  @ApiProperty({
    nullable: true,
    type: EventErrorView,
    description:
      'The upstream error (statuses[].errors, messages[].errors or value.errors): code, title and error_data.details',
  })
  error: EventErrorView | null;
  @ApiProperty({
    nullable: true,
    type: EventPricingView,
    description: 'Status updates: the pricing object Meta sent with it',
  })
  pricing: EventPricingView | null;
  @ApiProperty({
    description: 'Whether asynchronous processing (updating the message, window or template) has completed',
  })
  processed: boolean;
  @ApiProperty({ example: '2026-01-01T12:00:05.123Z' }) createdAt: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The upstream item as received' })
  raw: unknown;
  @ApiPropertyOptional({
    type: EventMediaView,
    nullable: true,
    description: 'Inbound image, video, audio, document or sticker messages: the media and where to download it',
  })
  media?: EventMediaView | null;
}

export function toEventView(e: Event): EventView {
  const hasError = e.errorCode !== null || e.errorTitle !== null || e.errorDetail !== null;
  return {
    id: e.id,
    eventType: e.eventType,
    kind: e.kind,
    title: e.title,
    status: e.status,
    recipient: e.recipient,
    userId: e.userId,
    messageId: e.messageId,
    wabaId: e.wabaId,
    phoneNumberId: e.phoneNumberId,
    upstreamTimestamp: e.upstreamTimestamp?.toISOString() ?? null,
    error: hasError ? { code: e.errorCode, title: e.errorTitle, detail: e.errorDetail } : null,
    pricing: eventPricingOf(e.pricing),
    processed: e.processed,
    createdAt: e.createdAt.toISOString(),
    raw: e.raw,
    media: mediaViewOf(e),
  };
}

/** Meta's object (its four documented keys) with `pricingModel` first; null when it carried none. */
function eventPricingOf(value: unknown): EventPricingView | null {
  const pricing = pricingOf(value);
  return pricing ? { pricingModel: pricing.pricing_model, ...pricing } : null;
}

function mediaViewOf(e: Event): EventMediaView | null {
  const media = e.kind === 'inbound_message' ? inboundMediaOf(e.raw) : null;
  return media ? { ...media, downloadPath: `/business-accounts/${e.wabaId}/media/${media.id}` } : null;
}
