import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';
import { BSUID, E164_DIGITS } from '../messages/dto/send-message.dto.js';

/** A contact as the routes take it: a phone number (E.164 digits) or a business-scoped user id. */
const CONTACT_ADDRESS = new RegExp(`${E164_DIGITS.source}|${BSUID.source}`);

const CONTACT_MESSAGE =
  'phoneOrUserId must be a phone number (E.164 digits, no plus sign) or a business-scoped user id (CC.<id>)';

/** The path of …/contacts/{phoneOrUserId}: the contact is checked (422 naming it), the account is looked up. */
export class ContactParams {
  @IsString() wabaId: string;

  @ApiProperty({ example: '447700900456', description: 'Phone number (E.164 digits) or business-scoped user id' })
  @Matches(CONTACT_ADDRESS, { message: CONTACT_MESSAGE })
  phoneOrUserId: string;
}

export const MAX_EXPORT_MESSAGES = 1000;

export class ContactExportQuery {
  @ApiPropertyOptional({
    minimum: 0,
    default: 0,
    description: 'The previous page’s `nextAfter` (a message id); 0 starts',
  })
  @Type(() => Number)
  @IsInt({ message: 'after must be an integer' })
  @Min(0, { message: 'after must be at least 0' })
  after: number = 0;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_EXPORT_MESSAGES, default: 500 })
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: 'limit must be at least 1' })
  @Max(MAX_EXPORT_MESSAGES, { message: `limit must be at most ${MAX_EXPORT_MESSAGES}` })
  limit: number = 500;
}

export class ErasureCountsView {
  @ApiProperty({
    example: 12,
    description: 'Messages whose content, addresses and wamid were erased (rows kept for counts)',
  })
  messages: number;
  @ApiProperty({ example: 40, description: 'Events deleted (every partition)' }) events: number;
  @ApiProperty({ example: 2, description: 'Raw webhook bodies rewritten without the contact (other users kept)' })
  webhookBodiesRewritten: number;
  @ApiProperty({ example: 30, description: 'Raw webhook bodies deleted (they held only the contact)' })
  webhookBodiesDeleted: number;
  @ApiProperty({ example: 34, description: 'Items (messages, statuses, contacts, …) taken out of raw bodies' })
  webhookItemsRemoved: number;
  @ApiProperty({ example: 1 }) campaignRecipients: number;
  @ApiProperty({ example: 1 }) conversationWindows: number;
  @ApiProperty({ example: 1 }) marketingPreferences: number;
  @ApiProperty({ example: 0 }) blockedUsers: number;
  @ApiProperty({ example: 0 }) idempotencyRecords: number;
  @ApiProperty({ example: 0, description: 'Audit entries whose details named the contact, now its keyed hash' })
  auditEntriesScrubbed: number;
}

const objects = (description: string) => ({ type: 'array' as const, items: { type: 'object' as const }, description });

export class ContactExportView {
  @ApiProperty({ example: '447700900456' }) contact: string;
  @ApiProperty({
    type: [String],
    description: 'The addresses exported: the contact and those its messages pair it with',
  })
  addresses: string[];
  @ApiProperty({ example: '310000000000001' }) wabaId: string;
  @ApiProperty({ example: '2026-12-01T23:00:00.000Z' }) exportedAt: string;
  @ApiProperty(objects('Messages both ways, oldest first: content, statuses and their times, errors, media metadata'))
  messages: unknown[];
  @ApiProperty(objects("The contact's events (inbound items, statuses, preferences), with Meta's raw item"))
  events: unknown[];
  @ApiProperty(objects('Campaigns listing the contact, with its state there')) campaigns: unknown[];
  @ApiProperty(objects('Marketing preferences')) marketingPreferences: unknown[];
  @ApiProperty(objects('Blocks on the account’s numbers')) blocks: unknown[];
  @ApiProperty(objects('24 h windows')) conversationWindows: unknown[];
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Pass as `after` for the next page of messages; null: last page',
  })
  nextAfter: number | null;
}
