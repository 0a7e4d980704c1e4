import { ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../core/http/pagination.js';
import { MESSAGE_STATUSES } from '../message-status.js';
import { BSUID, E164_DIGITS, MESSAGE_TYPES } from './send-message.dto.js';

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

export class ListMessagesQuery extends IntersectionType(PageQueryDto, MessageScopeFilters) {
  @ApiPropertyOptional({ enum: MESSAGE_STATUSES })
  @IsOptional()
  @IsIn(MESSAGE_STATUSES, { message: `status must be one of ${MESSAGE_STATUSES.join(', ')}` })
  status?: string;

  @ApiPropertyOptional({ description: 'Recipient, E.164 digits' })
  @IsOptional()
  @Matches(E164_DIGITS, { message: 'to must be E.164 digits without plus or spaces' })
  to?: string;

  @ApiPropertyOptional({ description: 'Recipient business-scoped user id (messages sent with userId)', example: 'US.13491208655302741918' })
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
