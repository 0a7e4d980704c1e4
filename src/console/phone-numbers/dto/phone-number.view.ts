import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { PhoneNumberSyncResult, PhoneNumberView } from '../../../accounts/phone-numbers/phone-numbers.service.js';

/** OpenAPI shapes of the phone-number routes (the types are the accounts module's). */
@ApiSchema({ name: 'PhoneNumber' })
export class PhoneNumberDoc implements PhoneNumberView {
  @ApiProperty({ example: '402345678901234', description: 'Use as phoneNumberId in POST /messages' })
  phoneNumberId!: string;
  @ApiProperty({ example: '+1 555-010-0000' }) displayPhoneNumber!: string;
  @ApiProperty({ type: String, nullable: true, example: 'Parcel Co' }) verifiedName!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'GREEN' }) qualityRating!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'CONNECTED',
    description: 'FLAGGED or RESTRICTED refuses sends with 424',
  })
  status!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'VERIFIED' }) codeVerificationStatus!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'APPROVED' }) nameStatus!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'CLOUD_API' }) platformType!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'STANDARD' }) throughputLevel!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'TIER_1K',
    description: "Meta's messaging limit (phone_number_quality_update)",
  })
  messagingLimit!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'When Meta last reported on its quality, limit or status by webhook',
  })
  qualityUpdatedAt!: string | null;
  @ApiProperty({ description: 'No longer returned by the upstream platform at the last sync' }) removed!: boolean;
  @ApiProperty({ format: 'date-time' }) syncedAt!: string;
}

/** What a sync changed (templates add `approved`). */
@ApiSchema({ name: 'SyncCounts' })
export class SyncCountsDoc {
  @ApiProperty() added!: number;
  @ApiProperty() updated!: number;
  @ApiProperty() removed!: number;
  @ApiProperty() total!: number;
}

/** A sync's answer, the same shape for numbers and templates: what changed and when; the list is GET's. */
@ApiSchema({ name: 'PhoneNumberSyncResult' })
export class PhoneNumberSyncResultDoc implements PhoneNumberSyncResult {
  @ApiProperty({ type: SyncCountsDoc }) counts!: SyncCountsDoc;
  @ApiProperty({
    format: 'date-time',
    description: 'When this sync wrote (the account view shows it as phoneNumbersSyncedAt)',
  })
  syncedAt!: string;
}
