import { ApiProperty } from '@nestjs/swagger';
import type { Row } from '../../core/db/rows.js';
import { activeRestrictions, type AccountAlert, type PricingTier, type Restriction } from './account-standing.js';

export class RestrictionView {
  @ApiProperty({ example: 'RESTRICTED_BIZ_INITIATED_MESSAGING', description: 'restriction_info[].restriction_type' })
  type: string;
  @ApiProperty({ nullable: true, type: String, example: '2026-12-01T13:59:20+0000' }) expiration: string | null;
  @ApiProperty({ description: 'Not expired yet' }) active: boolean;
}

export class PricingTierView {
  @ApiProperty({ nullable: true, type: String, example: 'UTILITY' }) pricingCategory: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'India' }) region: string | null;
  @ApiProperty({ nullable: true, type: String, example: '25000:50000' }) tier: string | null;
  @ApiProperty({ nullable: true, type: String, example: '2026-12' }) effectiveMonth: string | null;
  @ApiProperty({ description: "Meta's time of the update" }) at: string;
}

export class AccountAlertView {
  @ApiProperty({ nullable: true, type: String, example: 'INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED' }) type:
    string | null;
  @ApiProperty({ nullable: true, type: String, example: 'WARNING' }) severity: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'ACTIVE' }) status: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'PHONE_NUMBER' }) entityType: string | null;
  @ApiProperty({ nullable: true, type: String }) entityId: string | null;
  @ApiProperty() at: string;
}

/** The account's standing with Meta, from its account_update and account_alerts webhooks. */
export class AccountStandingView {
  @ApiProperty({
    nullable: true,
    type: String,
    enum: ['DISABLE', 'SCHEDULE_FOR_DISABLE', 'REINSTATE'],
    description: 'ban_info.waba_ban_state; null when Meta never sent one',
  })
  banState: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'December 9, 2026' }) banDate: string | null;
  @ApiProperty({
    description: 'Banned (ban state DISABLE): every send is refused with 424 before the upstream platform is called',
  })
  banned: boolean;
  @ApiProperty({ type: [RestrictionView] }) restrictions: RestrictionView[];
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'SCAM',
    description: 'violation_info.violation_type of the last ACCOUNT_VIOLATION',
  })
  violationType: string | null;
  @ApiProperty({
    type: [PricingTierView],
    description: 'Volume-based pricing tiers (VOLUME_BASED_PRICING_TIER_UPDATE), one per category and region',
  })
  pricingTiers: PricingTierView[];
  @ApiProperty({ type: [AccountAlertView], description: 'Active account_alerts' }) alerts: AccountAlertView[];
  @ApiProperty({
    nullable: true,
    type: String,
    description: "Meta's time of the last ban, restriction or violation update",
  })
  updatedAt: string | null;
}

/** The standing columns of a `business_accounts` row. */
export type StandingRow = Pick<
  Row<'business_accounts'>,
  'banState' | 'banDate' | 'restrictions' | 'violationType' | 'pricingTiers' | 'alerts' | 'standingUpdatedAt'
>;

export function toAccountStandingView(row: StandingRow, now = new Date()): AccountStandingView {
  const restrictions = (row.restrictions ?? []) as unknown as Restriction[];
  const active = new Set(activeRestrictions(restrictions, now));
  return {
    banState: row.banState,
    banDate: row.banDate,
    banned: row.banState === 'DISABLE',
    restrictions: restrictions.map((r) => ({ type: r.type, expiration: r.expiration, active: active.has(r) })),
    violationType: row.violationType,
    pricingTiers: (row.pricingTiers ?? []) as unknown as PricingTier[],
    alerts: (row.alerts ?? []) as unknown as AccountAlert[],
    updatedAt: row.standingUpdatedAt?.toISOString() ?? null,
  };
}
