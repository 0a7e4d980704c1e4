import { ApiProperty } from '@nestjs/swagger';
import type { StoredBlockedUser } from './blocked-users.repository.js';
import type { StoredMarketingPreference } from './marketing-preferences.repository.js';

export class BlockedUserView {
  @ApiProperty({
    example: '16505551234',
    description: 'The user as blocked: phone number (E.164 digits) or business-scoped user id',
  })
  user: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: '16505551234',
    description: "The user's WhatsApp id as the upstream platform resolved it",
  })
  waId: string | null;
  @ApiProperty({ example: '402000000000011' }) phoneNumberId: string;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description:
      'The operator who blocked the user (null when unknown, or when the block was made before this organization took the account over)',
  })
  blockedById: string | null;
  @ApiProperty({ example: '2026-11-26T09:00:00.000Z' }) createdAt: string;
}

export class BlockFailureView {
  @ApiProperty({ example: '16505550000' }) user: string;
  @ApiProperty({ nullable: true, type: Number, example: 139100 }) code: number | null;
  @ApiProperty({ example: 'Only users who have messaged the business in the last 24 hours can be blocked.' })
  message: string;
}

/** What a block request did: who is blocked now, and who the upstream platform refused (with its reason). */
export class BlockUsersResultView {
  @ApiProperty({ type: [BlockedUserView] }) blocked: BlockedUserView[];
  @ApiProperty({
    type: [BlockFailureView],
    description: 'Users the upstream platform did not block, each with its reason',
  })
  failed: BlockFailureView[];
}

export class UnblockedUserView {
  @ApiProperty({ example: '16505551234' }) user: string;
  @ApiProperty({ enum: [true] }) unblocked: true;
}

export class MarketingPreferenceView {
  @ApiProperty({ example: '16505551234', description: 'Phone number (E.164 digits) or business-scoped user id' })
  user: string;
  @ApiProperty({
    enum: ['stop', 'resume'],
    example: 'stop',
    description: 'stop: MARKETING templates to this user are refused (422); resume: allowed again',
  })
  value: string;
  @ApiProperty({
    enum: ['user_preferences', 'error_131050'],
    description: "Meta's user_preferences webhook, or its 131050 failure of a marketing message",
  })
  source: string;
  @ApiProperty({ nullable: true, type: String, example: 'User requested to stop marketing messages' }) detail:
    string | null;
  @ApiProperty({ description: "When the user chose it (Meta's time)", example: '2026-11-26T09:00:00.000Z' })
  updatedAt: string;
}

export const toBlockedUserView = (b: StoredBlockedUser): BlockedUserView => ({
  user: b.user,
  waId: b.waId,
  phoneNumberId: b.phoneNumberId,
  blockedById: b.blockedById,
  createdAt: b.createdAt.toISOString(),
});

export const toMarketingPreferenceView = (p: StoredMarketingPreference): MarketingPreferenceView => ({
  user: p.user,
  value: p.value,
  source: p.source,
  detail: p.detail,
  updatedAt: p.updatedAt.toISOString(),
});
