import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { ParameterCounts } from '../../../accounts/templates/template-parameters.js';
import type { TemplateSyncResult, TemplateView } from '../../../accounts/templates/templates.service.js';
import { SyncCountsDoc } from '../../phone-numbers/dto/phone-number.view.js';

/** OpenAPI shapes of the templates routes (the types are the accounts module's). */
@ApiSchema({ name: 'TemplateParameterCounts' })
export class ParameterCountsDoc implements ParameterCounts {
  @ApiProperty({ example: 0 }) header!: number;
  @ApiProperty({ example: 2 }) body!: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { '0': 1 },
    description: 'Button index → parameters expected',
  })
  buttons!: Record<string, number>;
  @ApiProperty({
    type: 'object',
    required: ['header', 'body'],
    properties: {
      header: { type: 'array', items: { type: 'string' } },
      body: { type: 'array', items: { type: 'string' } },
    },
    example: { header: [], body: ['order_id'] },
    description: 'NAMED templates: the placeholder names each component expects',
  })
  names!: { header: string[]; body: string[] };
}

@ApiSchema({ name: 'Template' })
export class TemplateDoc implements TemplateView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ example: '1234567890' }) upstreamId!: string;
  @ApiProperty({ example: 'order_update' }) name!: string;
  @ApiProperty({ example: 'en_US' }) language!: string;
  @ApiProperty({ example: 'APPROVED' }) status!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'UTILITY',
    description: 'As synced, or as a template_category_update webhook changed it',
  })
  category!: string | null;
  @ApiProperty({ example: 'POSITIONAL' }) parameterFormat!: string;
  @ApiProperty({ description: "Meta's component objects as synced", type: 'array', items: { type: 'object' } })
  components!: unknown;
  @ApiProperty({ type: ParameterCountsDoc }) parameterCounts!: ParameterCountsDoc;
  @ApiProperty({ type: String, nullable: true }) statusReason!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'GREEN',
    description:
      "Meta's quality score (message_template_quality_update): GREEN, YELLOW, RED, UNKNOWN; null until one arrives",
  })
  qualityScore!: string | null;
  @ApiProperty({ description: 'APPROVED, not removed: usable in POST /messages' }) sendable!: boolean;
  @ApiProperty({ description: 'No longer returned by the upstream platform at the last sync' }) removed!: boolean;
  @ApiProperty({ format: 'date-time' }) syncedAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
}

@ApiSchema({ name: 'TemplateSyncCounts' })
class TemplateSyncCountsDoc extends SyncCountsDoc {
  @ApiProperty() approved!: number;
}

@ApiSchema({ name: 'TemplateSyncResult' })
export class TemplateSyncResultDoc implements TemplateSyncResult {
  @ApiProperty({ type: TemplateSyncCountsDoc }) counts!: TemplateSyncCountsDoc;
  @ApiProperty({
    format: 'date-time',
    description: 'When this sync wrote (the account view shows it as templatesSyncedAt)',
  })
  syncedAt!: string;
}
