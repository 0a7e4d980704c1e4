import { ApiProperty } from '@nestjs/swagger';
import { AccountStandingView, toAccountStandingView, type StandingRow } from '../standing/account-standing.view.js';

export class BusinessAccountView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: '310000000000001' }) wabaId: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['connected', 'disconnected'] }) status: 'connected' | 'disconnected';
  @ApiProperty({ nullable: true, type: String }) phoneNumbersSyncedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) templatesSyncedAt: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty({ nullable: true, type: String }) disconnectedAt: string | null;
  @ApiProperty({ type: AccountStandingView, description: "Meta's ban state, restrictions, pricing tiers and alerts (account-level webhooks)" }) standing: AccountStandingView;
}

export function toBusinessAccountView(row: {
  id: string;
  wabaId: string;
  name: string;
  phoneNumbersSyncedAt: Date | null;
  templatesSyncedAt: Date | null;
  createdAt: Date;
  disconnectedAt: Date | null;
} & StandingRow): BusinessAccountView {
  return {
    id: row.id,
    wabaId: row.wabaId,
    name: row.name,
    status: row.disconnectedAt ? 'disconnected' : 'connected',
    phoneNumbersSyncedAt: row.phoneNumbersSyncedAt?.toISOString() ?? null,
    templatesSyncedAt: row.templatesSyncedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    disconnectedAt: row.disconnectedAt?.toISOString() ?? null,
    standing: toAccountStandingView(row),
  };
}
