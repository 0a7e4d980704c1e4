import { ApiProperty } from '@nestjs/swagger';
import { AccountStandingView, toAccountStandingView, type StandingRow } from '../standing/account-standing.view.js';

/** The account's Marketing Messages API onboarding, as Meta last told us. */
export class MarketingMessagesView {
  @ApiProperty({
    description:
      'True when onboarded (status ONBOARDED): MARKETING templates are sent through POST /{phone-number-id}/marketing_messages',
  })
  onboarded: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'ONBOARDED',
    description: "Meta's marketing_messages_onboarding_status (ONBOARDED, INELIGIBLE_*, …); null while unknown",
  })
  status: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When it was last learnt (connect, credential check, or the MM_LITE_TERMS_SIGNED webhook)',
  })
  updatedAt: string | null;
}

export class BusinessAccountView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: '310000000000001' }) wabaId: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['connected', 'disconnected'] }) status: 'connected' | 'disconnected';
  @ApiProperty({ nullable: true, type: String }) phoneNumbersSyncedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) templatesSyncedAt: string | null;
  @ApiProperty({
    description:
      "Whether this app is subscribed to the account's webhooks (POST, then GET /{waba-id}/subscribed_apps), as last checked",
  })
  webhooksSubscribed: boolean;
  @ApiProperty({ nullable: true, type: String, description: 'When the subscription was last made and checked' })
  webhooksCheckedAt: string | null;
  @ApiProperty({
    description:
      'False once the upstream platform rejected the stored access token: sends answer 424 until it is replaced',
  })
  credentialsValid: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When the token was last checked (connect, token replacement, scheduled or console check)',
  })
  credentialsCheckedAt: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'Error validating access token: Session has expired (190)',
    description: "The upstream platform's reason for rejecting the token; null while valid",
  })
  credentialsError: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty({ nullable: true, type: String }) disconnectedAt: string | null;
  @ApiProperty({
    type: AccountStandingView,
    description: "Meta's ban state, restrictions, pricing tiers and alerts (account-level webhooks)",
  })
  standing: AccountStandingView;
  @ApiProperty({
    type: MarketingMessagesView,
    description: 'Marketing Messages API onboarding: where MARKETING templates are sent',
  })
  marketingMessages: MarketingMessagesView;
}

export function toBusinessAccountView(
  row: {
    id: string;
    wabaId: string;
    name: string;
    phoneNumbersSyncedAt: Date | null;
    templatesSyncedAt: Date | null;
    webhooksSubscribed: boolean;
    webhooksCheckedAt: Date | null;
    credentialsValid: boolean;
    credentialsCheckedAt: Date | null;
    credentialsError: string | null;
    createdAt: Date;
    disconnectedAt: Date | null;
    marketingMessagesStatus: string | null;
    marketingMessagesUpdatedAt: Date | null;
  } & StandingRow,
): BusinessAccountView {
  return {
    id: row.id,
    wabaId: row.wabaId,
    name: row.name,
    status: row.disconnectedAt ? 'disconnected' : 'connected',
    phoneNumbersSyncedAt: row.phoneNumbersSyncedAt?.toISOString() ?? null,
    templatesSyncedAt: row.templatesSyncedAt?.toISOString() ?? null,
    webhooksSubscribed: row.webhooksSubscribed,
    webhooksCheckedAt: row.webhooksCheckedAt?.toISOString() ?? null,
    credentialsValid: row.credentialsValid,
    credentialsCheckedAt: row.credentialsCheckedAt?.toISOString() ?? null,
    credentialsError: row.credentialsError,
    createdAt: row.createdAt.toISOString(),
    disconnectedAt: row.disconnectedAt?.toISOString() ?? null,
    standing: toAccountStandingView(row),
    marketingMessages: {
      onboarded: row.marketingMessagesStatus === 'ONBOARDED',
      status: row.marketingMessagesStatus,
      updatedAt: row.marketingMessagesUpdatedAt?.toISOString() ?? null,
    },
  };
}
