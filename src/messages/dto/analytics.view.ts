import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Analytics, PricingCounts } from '../query/analytics.service.js';

/** OpenAPI shape of GET /messages/analytics and the console's per-account analytics (the type is AnalyticsService's). */
@ApiSchema({ name: 'MessageCounts' })
class MessageCountsDoc {
  @ApiProperty({ example: 120, description: 'Messages created in the period' }) total!: number;
  @ApiProperty({ example: 118, description: 'Accepted by the upstream platform' }) sent!: number;
  @ApiProperty({ example: 110, description: 'Delivered (read included)' }) delivered!: number;
  @ApiProperty({ example: 64 }) read!: number;
  @ApiProperty({ example: 2 }) failed!: number;
}

/** Fractions of all messages created in the period, to 4 decimals. */
@ApiSchema({ name: 'AnalyticsRates' })
class AnalyticsRatesDoc {
  @ApiProperty({ example: 0.9167, description: 'delivered / total (0 when nothing was created in the period)' })
  delivery!: number;
  @ApiProperty({ example: 0.5333, description: 'read / total' }) read!: number;
  @ApiProperty({ example: 0.0167, description: 'failed / total' }) failure!: number;
}

/** Counts only: the upstream platform bills the customer directly. */
@ApiSchema({ name: 'AnalyticsPricing' })
class PricingCountsDoc implements PricingCounts {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'number' },
    example: { marketing: 3, utility: 40, authentication: 0, service: 12, group_service: 0, general_purpose_ai: 2 },
    description:
      "Messages by the category of the pricing object of their status webhooks. Meta's categories are always listed (zeros included): marketing, utility, authentication, authentication_international, service, marketing_lite, referral_conversion, group_marketing, group_utility, group_service, general_purpose_ai; any other category Meta sends is listed as it comes",
  })
  byCategory!: Record<string, number>;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'number' },
    example: { regular: 43, free_customer_service: 12, free_entry_point: 0 },
    description: 'Messages by pricing type: regular, free_customer_service, free_entry_point',
  })
  byType!: Record<string, number>;
  @ApiProperty({
    example: 45,
    description:
      'Messages Meta billed: those whose pricing type is `regular` (the free types are free_customer_service and free_entry_point). Since 2026-10-01 service messages and utility templates inside an open window are billed too',
  })
  billable!: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'number' },
    example: { marketing: 3, utility: 30, service: 12 },
    description: 'The billable messages by category (every category of byCategory listed)',
  })
  billableByCategory!: Record<string, number>;
}

@ApiSchema({ name: 'AnalyticsBucket' })
class AnalyticsBucketDoc {
  @ApiProperty({ format: 'date-time', description: 'Start of the day or hour (UTC)' }) bucket!: string;
  @ApiProperty() sent!: number;
  @ApiProperty() delivered!: number;
  @ApiProperty() read!: number;
  @ApiProperty() failed!: number;
  @ApiProperty({ description: 'Inbound messages (customers wrote) received in the bucket' }) inbound!: number;
  @ApiProperty({ type: PricingCountsDoc }) pricing!: PricingCountsDoc;
}

@ApiSchema({ name: 'AnalyticsFailureReason' })
class FailureReasonDoc {
  @ApiProperty({ type: Number, nullable: true, example: 131047 }) code!: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'Re-engagement message' }) title!: string | null;
  @ApiProperty({ example: 2 }) count!: number;
}

@ApiSchema({ name: 'AnalyticsTemplate' })
class TemplateFiguresDoc {
  @ApiProperty({ example: 'order_update' }) templateName!: string;
  @ApiProperty() total!: number;
  @ApiProperty() delivered!: number;
  @ApiProperty() read!: number;
  @ApiProperty() failed!: number;
}

@ApiSchema({ name: 'MessageAnalytics' })
export class AnalyticsDoc implements Analytics {
  @ApiProperty({ format: 'date-time' }) since!: string;
  @ApiProperty({ format: 'date-time' }) until!: string;
  @ApiProperty({ enum: ['day', 'hour'] }) granularity!: 'day' | 'hour';
  @ApiProperty({ type: MessageCountsDoc, description: 'Sent messages (outbound) only' }) totals!: MessageCountsDoc;
  @ApiProperty({
    example: 37,
    description:
      'Inbound messages (customers wrote) received in the period, counted apart from the sends in totals and rates',
  })
  inbound!: number;
  @ApiProperty({ type: AnalyticsRatesDoc }) rates!: AnalyticsRatesDoc;
  @ApiProperty({ type: [AnalyticsBucketDoc] }) series!: AnalyticsBucketDoc[];
  @ApiProperty({ type: PricingCountsDoc, description: 'Over the whole period; each series bucket has its own' })
  pricing!: PricingCountsDoc;
  @ApiProperty({ type: [FailureReasonDoc], description: 'Most frequent first' }) failureReasons!: FailureReasonDoc[];
  @ApiProperty({ type: [TemplateFiguresDoc] }) templates!: TemplateFiguresDoc[];
}
