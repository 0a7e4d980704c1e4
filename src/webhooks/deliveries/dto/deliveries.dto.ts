import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../../core/http/pagination.js';

export const DELIVERY_STATUSES = ['received', 'processed', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export class DeliveriesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES, description: '`failed` lists the dead letters' })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;
}

export class DeliveryView {
  @ApiProperty({ example: 812 }) id: number;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: string;
  @ApiProperty({ description: 'Processing attempts so far' }) attempts: number;
  @ApiProperty({ nullable: true, type: String, description: 'Why the last attempt failed' }) lastError: string | null;
  @ApiProperty({ nullable: true, type: Number, description: 'Events the delivery carried, once processed' }) eventCount: number | null;
  @ApiProperty({ type: [String], description: "Business accounts of your organization the delivery concerns" }) wabaIds: string[];
  @ApiProperty() receivedAt: string;
  @ApiProperty({ nullable: true, type: String }) processedAt: string | null;
}
