import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../core/http/pagination.js';
import { EVENT_KINDS, type EventKind } from '../../processing/classify.js';

export class EventsQueryDto extends PageQueryDto {
  @ApiProperty({ example: '310987654321098', description: 'Business account whose events are listed (one of your organization)' })
  @IsString({ message: 'wabaId is required' })
  @IsNotEmpty({ message: 'wabaId is required' })
  @MaxLength(64, { message: 'wabaId must be at most 64 characters' })
  wabaId: string;

  @ApiPropertyOptional({ enum: EVENT_KINDS })
  @IsOptional()
  @IsIn(EVENT_KINDS, { message: `kind must be one of ${EVENT_KINDS.join(', ')}` })
  kind?: EventKind;

  @ApiPropertyOptional({ example: 'delivered', description: 'Delivery status: sent, delivered, read, failed (played for voice)' })
  @IsOptional()
  @IsString({ message: 'status must be a string' })
  @MaxLength(32, { message: 'status must be at most 32 characters' })
  status?: string;

  @ApiPropertyOptional({ description: "Upstream message id (wamid): a message's upstreamMessageId" })
  @IsOptional()
  @IsString({ message: 'messageId must be a string' })
  @MaxLength(256, { message: 'messageId must be at most 256 characters' })
  messageId?: string;

  @ApiPropertyOptional({ example: '447700900123', description: 'Recipient of a status, or sender of an inbound message' })
  @IsOptional()
  @IsString({ message: 'recipient must be a string' })
  @MaxLength(32, { message: 'recipient must be at most 32 characters' })
  recipient?: string;

  @ApiPropertyOptional({ example: '2026-01-01T00:00:00.000Z', description: 'Only events stored at or after this time (ISO 8601)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 date-time' })
  since?: string;

  @ApiPropertyOptional({ example: '2026-01-02T00:00:00.000Z', description: 'Only events stored at or before this time (ISO 8601)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'until must be an ISO 8601 date-time' })
  until?: string;
}
