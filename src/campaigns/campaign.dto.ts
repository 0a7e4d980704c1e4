import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
} from 'class-validator';
import { ApiRowId } from '../core/contract/row-id.js';
import { PageQueryDto } from '../core/contract/pagination.js';
import { trimString } from '../core/contract/validation.js';
import { LANGUAGE_CODE } from '../messages/dto/send-message.dto.js';
import { MessageErrorView } from '../messages/message.view.js';
import { MAX_CAMPAIGN_RECIPIENTS } from './campaign-recipients.js';
import { RECIPIENT_STATUSES } from './campaign-recipients.repository.js';
import { CAMPAIGN_STATUSES } from './campaigns.repository.js';

/** One recipient of a campaign, as given (documented for Swagger; checked by checkRecipients). */
export class CampaignRecipientDto {
  @ApiPropertyOptional({
    example: '447700900123',
    description: 'E.164 digits without plus or spaces; exactly one of to and userId',
  })
  to?: string;
  @ApiPropertyOptional({ example: 'US.13491208655302741918', description: 'A business-scoped user id instead of to' })
  userId?: string;
  @ApiPropertyOptional({
    example: [
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Priya' },
          { type: 'text', text: 'ORD-7781' },
        ],
      },
    ],
    description:
      "This recipient's template parameters, in Meta's components shape (as POST /messages); checked against the synced template",
    type: 'array',
    items: { type: 'object' },
  })
  components?: unknown[];
}

export class CreateCampaignDto {
  @ApiProperty({ example: 'November parcel notice' })
  @Transform(trimString)
  @IsString({ message: 'name must be a string' })
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(200, { message: 'name must be at most 200 characters' })
  name: string;

  @ApiProperty({
    example: '402000000000011',
    description: 'The sending number (synced, CONNECTED): the campaign runs at its throughput',
  })
  @IsString({ message: 'phoneNumberId must be a string' })
  @Matches(/^\d{1,32}$/, { message: 'phoneNumberId must be the numeric phone number id' })
  phoneNumberId: string;

  @ApiProperty({ example: 'parcel_update', description: 'An APPROVED template of the business account' })
  @IsString({ message: 'templateName must be a string' })
  @IsNotEmpty({ message: 'templateName must not be empty' })
  @MaxLength(512, { message: 'templateName must be at most 512 characters' })
  templateName: string;

  @ApiProperty({ example: 'en_GB' })
  @IsString({ message: 'templateLanguage must be a string' })
  @Matches(LANGUAGE_CODE, { message: 'templateLanguage must be a language code such as en_US' })
  templateLanguage: string;

  @ApiProperty({
    type: [CampaignRecipientDto],
    minItems: 1,
    maxItems: MAX_CAMPAIGN_RECIPIENTS,
    description: `1 to ${MAX_CAMPAIGN_RECIPIENTS.toLocaleString('en')} recipients, each once; every one is checked before anything is stored (422 naming recipients.<i>.<field>)`,
  })
  @IsArray({ message: 'recipients must be an array of {to | userId, components?}' })
  @ArrayMinSize(1, { message: 'recipients must hold at least one recipient' })
  @ArrayMaxSize(MAX_CAMPAIGN_RECIPIENTS, {
    message: `recipients must hold at most ${MAX_CAMPAIGN_RECIPIENTS} recipients`,
  })
  recipients: unknown[];
}

export class CampaignRecipientsQuery extends PageQueryDto {
  @ApiPropertyOptional({
    enum: RECIPIENT_STATUSES,
    description: 'Only recipients showing this status (`failed`: with the upstream error)',
  })
  @IsOptional()
  @IsIn(RECIPIENT_STATUSES, { message: `status must be one of ${RECIPIENT_STATUSES.join(', ')}` })
  status?: (typeof RECIPIENT_STATUSES)[number];
}

export class CampaignCountsView {
  @ApiProperty({ example: 0, description: 'Not claimed yet' }) pending: number;
  @ApiProperty({ example: 12, description: 'Claimed: its message is on its way (pending upstream)' }) sending: number;
  @ApiProperty({ example: 400 }) sent: number;
  @ApiProperty({ example: 9000 }) delivered: number;
  @ApiProperty({ example: 500 }) read: number;
  @ApiProperty({
    example: 3,
    description: "Its latest message failed (Meta's error in the recipients list); retry-failed sends them again",
  })
  failed: number;
  @ApiProperty({
    example: 1,
    description: 'Never sent, with the reason (stopped marketing messages, blocked on the number)',
  })
  skipped: number;
  @ApiProperty({ example: 0, description: 'Not sent: the campaign was cancelled first' }) cancelled: number;
}

export class CampaignView {
  @ApiRowId(3000000001) id: number;
  @ApiProperty({ example: '310000000000001' }) wabaId: string;
  @ApiProperty({ example: 'November parcel notice' }) name: string;
  @ApiProperty({ example: '402000000000011' }) phoneNumberId: string;
  @ApiProperty({ example: 'parcel_update' }) templateName: string;
  @ApiProperty({ example: 'en_GB' }) templateLanguage: string;
  @ApiProperty({ nullable: true, type: String, example: 'UTILITY' }) templateCategory: string | null;
  @ApiProperty({ enum: ['cloud_api', 'marketing_messages'], example: 'cloud_api' }) upstreamApi: string;
  @ApiProperty({ enum: CAMPAIGN_STATUSES, example: 'running' }) status: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'Why the service paused it by itself (the upstream token rejected, …)',
  })
  statusReason: string | null;
  @ApiProperty({ example: 10000 }) total: number;
  @ApiProperty({
    type: CampaignCountsView,
    nullable: true,
    description: 'Live counts per recipient status (null in lists: read one campaign for them)',
  })
  counts: CampaignCountsView | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0.9912,
    description: 'Fraction of recipients done (sent, delivered, read, failed, skipped or cancelled); null in lists',
  })
  progress: number | null;
  @ApiProperty({ example: '2026-11-26T12:00:00.000Z' }) createdAt: string;
  @ApiProperty({ example: '2026-11-26T12:00:05.000Z' }) updatedAt: string;
  @ApiProperty({ nullable: true, type: String, example: null }) completedAt: string | null;
}

export class RetryFailedView extends CampaignView {
  @ApiProperty({ example: 3, description: 'Failed recipients sent back to pending' }) requeued: number;
}

export class CampaignRecipientView {
  @ApiProperty({ example: 0, description: 'Position in the list given at creation (0-based)' }) position: number;
  @ApiProperty({ nullable: true, type: String, example: '447700900123' }) to: string | null;
  @ApiProperty({ nullable: true, type: String, example: null }) userId: string | null;
  @ApiProperty({ enum: RECIPIENT_STATUSES, example: 'delivered' }) status: string;
  @ApiProperty({ example: 1, description: 'Attempts so far (a 130429 or a transient error sends again)' })
  attempts: number;
  @ApiProperty({
    nullable: true,
    type: Number,
    example: 3000000123,
    description: 'Its latest message (GET /messages/{id}), null until claimed',
  })
  messageId: number | null;
  @ApiProperty({ nullable: true, type: String, example: 'wamid.HBgM…' }) upstreamMessageId: string | null;
  @ApiProperty({ nullable: true, type: String, example: null, description: 'Why it was skipped' }) skipReason:
    string | null;
  @ApiProperty({
    type: MessageErrorView,
    nullable: true,
    description: "Meta's error of its latest message, when it failed",
  })
  error: MessageErrorView | null;
}
