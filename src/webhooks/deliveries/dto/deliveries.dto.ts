import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { ApiRowId } from '../../../core/contract/row-id.js';
import { PageQueryDto } from '../../../core/contract/pagination.js';

export const DELIVERY_STATUSES = ['received', 'processed', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export class DeliveriesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES, description: '`failed` lists the dead letters' })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;
}

export class DeliveryView {
  @ApiRowId(812) id: number;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: string;
  @ApiProperty({ description: 'Processing attempts so far' }) attempts: number;
  @ApiProperty({ nullable: true, type: String, description: 'Why the last attempt failed' }) lastError: string | null;
  @ApiProperty({ nullable: true, type: Number, description: 'Events the delivery carried, once processed' })
  eventCount: number | null;
  @ApiProperty({ type: [String], description: 'Business accounts of your organization the delivery concerns' })
  wabaIds: string[];
  @ApiProperty() receivedAt: string;
  @ApiProperty({ nullable: true, type: String }) processedAt: string | null;
}

export class DeliveriesHealthQueryDto {
  @ApiPropertyOptional({
    example: '310000000000001',
    description: 'One business account of your organization (default: all of them)',
  })
  @IsOptional()
  @Matches(/^\d{1,32}$/, { message: 'wabaId must be a business account id (digits)' })
  wabaId?: string;
}

/** The webhook backlog of one business account: what the worker still has to do, and what it gave up on. */
export class AccountDeliveryHealthView {
  @ApiProperty({ example: '310000000000001' }) wabaId: string;
  @ApiProperty({ description: 'Deliveries stored but not processed yet (status received)' }) pending: number;
  @ApiProperty({
    description:
      'Dead letters (status failed): list them with GET /webhooks/deliveries?status=failed, replay with POST …/:id/replay',
  })
  failed: number;
  @ApiProperty({ nullable: true, type: String, description: 'When the oldest pending delivery arrived' })
  oldestPendingAt: string | null;
  @ApiProperty({ description: 'Processing lag: age of the oldest pending delivery in seconds (0 when nothing waits)' })
  lagSeconds: number;
}
