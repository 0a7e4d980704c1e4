import { ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { LimitQueryDto, PageNumber } from '../../core/contract/pagination.js';
import { FeedAfter, FeedWait } from '../../events/dto/feed-query.decorators.js';
import { MESSAGE_STATUSES } from '../message-status.js';
import { MESSAGE_DIRECTIONS, type MessageDirection } from '../message.view.js';
import { BSUID, E164_DIGITS, MESSAGE_TYPES } from './send-message.dto.js';

/** Statuses a listed message may have: those of sends, and `received` (inbound). */
const LISTED_STATUSES = [...MESSAGE_STATUSES, 'received'] as const;

/** Filters shared by the message list and analytics: sending number, template, type, createdAt range. */
export class MessageScopeFilters {
  @ApiPropertyOptional()
  @IsOptional()
  @Matches(/^\d{1,32}$/, { message: 'phoneNumberId must be the numeric phone number id' })
  phoneNumberId?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @IsNotEmpty({ message: 'templateName must not be empty' })
  @MaxLength(512)
  templateName?: string;

  @ApiPropertyOptional({ enum: MESSAGE_TYPES })
  @IsOptional()
  @IsIn(MESSAGE_TYPES, { message: `type must be one of ${MESSAGE_TYPES.join(', ')}` })
  type?: string;

  @ApiPropertyOptional({ description: 'createdAt ≥ since (ISO 8601)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 date-time' })
  since?: string;

  @ApiPropertyOptional({ description: 'createdAt < until (ISO 8601)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'until must be an ISO 8601 date-time' })
  until?: string;
}

/**
 * Two forms on one route: pages (`page`, newest first) or the feed (`after`, oldest first, for pollers). `page`
 * has no default here so that giving both is seen (and refused).
 */
export class ListMessagesQuery extends IntersectionType(LimitQueryDto, MessageScopeFilters) {
  @IsOptional()
  @PageNumber()
  page?: number;

  @ApiPropertyOptional({ enum: LISTED_STATUSES, description: '`received`: inbound messages' })
  @IsOptional()
  @IsIn(LISTED_STATUSES, { message: `status must be one of ${LISTED_STATUSES.join(', ')}` })
  status?: string;

  @ApiPropertyOptional({
    enum: MESSAGE_DIRECTIONS,
    description: '`inbound`: what customers sent; `outbound`: what was sent with key pairs',
  })
  @IsOptional()
  @IsIn(MESSAGE_DIRECTIONS, { message: `direction must be one of ${MESSAGE_DIRECTIONS.join(', ')}` })
  direction?: MessageDirection;

  @FeedAfter(
    "Feed form: `0` (or empty) for the beginning, then the previous answer's `nextCursor`. Items oldest first in the order they were created or changed " +
      "(status, error, pricing), each in its current state: following `nextCursor` yields every change once. Opaque, bound to the key's business account, never expires. Not with `page`.",
  )
  after?: string;

  @FeedWait()
  wait?: number;

  @ApiPropertyOptional({ description: 'Recipient, E.164 digits' })
  @IsOptional()
  @Matches(E164_DIGITS, { message: 'to must be E.164 digits without plus or spaces' })
  to?: string;

  @ApiPropertyOptional({ type: Number, description: 'Messages a campaign sent (its id)', example: 3000000001 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'campaignId must be a campaign id (a positive integer)' })
  @Min(1, { message: 'campaignId must be a campaign id (a positive integer)' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'campaignId must be a campaign id (a positive integer)' })
  campaignId?: number;

  @ApiPropertyOptional({
    description: 'Recipient business-scoped user id (messages sent with userId)',
    example: 'US.13491208655302741918',
  })
  @IsOptional()
  @Matches(BSUID, { message: 'userId must be a business-scoped user id: CC.<id> or CC.ENT.<id>' })
  userId?: string;
}

/** Analytics: the shared filters (since defaults to 7 days before until, until to now) and a bucket size. */
export class AnalyticsQuery extends MessageScopeFilters {
  @ApiPropertyOptional({ enum: ['day', 'hour'], default: 'day' })
  @IsOptional()
  @IsIn(['day', 'hour'], { message: 'granularity must be day or hour' })
  granularity?: 'day' | 'hour';
}
