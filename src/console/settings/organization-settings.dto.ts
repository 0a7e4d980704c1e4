import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min, ValidateIf } from 'class-validator';

export const MAX_RETENTION_DAYS = 36500;

const RETENTION =
  'Days message content (what was sent and received) and raw webhook payloads are kept; then they are scrubbed while messages, statuses, pricing and counts stay (docs/storage.md, "Content retention"). 0 keeps content forever';

export class OrganizationSettingsView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({
    nullable: true,
    type: Number,
    example: 90,
    description: `${RETENTION}; null: the service's default (defaultContentRetentionDays)`,
  })
  contentRetentionDays: number | null;
  @ApiProperty({ example: 0, description: "The service's default (CONTENT_RETENTION_DAYS); 0 keeps content forever" })
  defaultContentRetentionDays: number;
  @ApiProperty({ example: 90, description: 'The retention in force: contentRetentionDays, else the default' })
  effectiveContentRetentionDays: number;
  @ApiProperty({
    nullable: true,
    type: String,
    example: '2026-09-03T02:00:00.000Z',
    description:
      'Content of messages, events and raw payloads created before this has been scrubbed (the scheduled task, every PURGE_INTERVAL_SECONDS); null: none yet',
  })
  contentScrubbedThrough: string | null;
}

export class UpdateOrganizationSettingsDto {
  @ApiProperty({
    nullable: true,
    type: Number,
    minimum: 0,
    maximum: MAX_RETENTION_DAYS,
    example: 90,
    description: `${RETENTION}; null: follow the service's default`,
  })
  @ValidateIf((_, value) => value !== null)
  @IsInt({ message: 'contentRetentionDays must be a whole number of days (0 keeps content forever) or null' })
  @Min(0, { message: 'contentRetentionDays must be at least 0 (0 keeps content forever)' })
  @Max(MAX_RETENTION_DAYS, { message: `contentRetentionDays must be at most ${MAX_RETENTION_DAYS}` })
  contentRetentionDays: number | null;
}
