import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { LimitQueryDto, PageNumber } from '../../core/contract/pagination.js';
import { FeedAfter, FeedWait } from './feed-query.decorators.js';
import { EVENT_KINDS, type EventKind } from '../classify.js';

/**
 * Two forms on one route: pages (`page`, newest first, for people browsing) or the feed (`after`, oldest
 * first, for pollers). `page` has no default here so that giving both is seen (and refused).
 */
export class EventsQueryDto extends LimitQueryDto {
  @IsOptional()
  @PageNumber()
  page?: number;

  @FeedAfter(
    "Feed form: `0` for the oldest retained event (or `now` for only what comes next), then the previous answer's `nextCursor`. Items oldest first in the order they became visible; following `nextCursor` yields every event of the account exactly once. Opaque, bound to `wabaId`, valid as long as events are kept. Not with `page`.",
  )
  after?: string;

  @FeedWait()
  wait?: number;

  @ApiProperty({
    example: '310987654321098',
    description: 'Business account whose events are listed (one of your organization)',
  })
  @IsString({ message: 'wabaId is required' })
  @IsNotEmpty({ message: 'wabaId is required' })
  @MaxLength(64, { message: 'wabaId must be at most 64 characters' })
  wabaId: string;

  @ApiPropertyOptional({ enum: EVENT_KINDS })
  @IsOptional()
  @IsIn(EVENT_KINDS, { message: `kind must be one of ${EVENT_KINDS.join(', ')}` })
  kind?: EventKind;

  @ApiPropertyOptional({
    example: 'delivered',
    description: 'Delivery status: sent, delivered, read, failed (played for voice)',
  })
  @IsOptional()
  @IsString({ message: 'status must be a string' })
  @MaxLength(32, { message: 'status must be at most 32 characters' })
  status?: string;

  @ApiPropertyOptional({ description: "Upstream message id (wamid): a message's upstreamMessageId" })
  @IsOptional()
  @IsString({ message: 'messageId must be a string' })
  @MaxLength(256, { message: 'messageId must be at most 256 characters' })
  messageId?: string;

  @ApiPropertyOptional({
    example: '447700900123',
    description: 'Recipient of a status, or sender of an inbound message',
  })
  @IsOptional()
  @IsString({ message: 'recipient must be a string' })
  @MaxLength(32, { message: 'recipient must be at most 32 characters' })
  recipient?: string;

  @ApiPropertyOptional({
    example: 'US.13491208655302741918',
    description:
      "Business-scoped user id (BSUID) of a status's recipient or an inbound message's sender: finds a user's events with or without a phone number",
  })
  @IsOptional()
  @IsString({ message: 'userId must be a string' })
  @MaxLength(160, { message: 'userId must be at most 160 characters' })
  userId?: string;

  @ApiPropertyOptional({
    example: '2026-01-01T00:00:00.000Z',
    description: 'Only events stored at or after this time (ISO 8601)',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 date-time' })
  since?: string;

  @ApiPropertyOptional({
    example: '2026-01-02T00:00:00.000Z',
    description: 'Only events stored at or before this time (ISO 8601)',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'until must be an ISO 8601 date-time' })
  until?: string;
}
