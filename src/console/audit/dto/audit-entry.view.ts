import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ApiRowId } from '../../../core/contract/row-id.js';
import type { AuditEntry } from '../../../audit/audit.service.js';

@ApiSchema({ name: 'AuditEntry' })
export class AuditEntryDoc implements AuditEntry {
  @ApiRowId(42) id!: number;
  @ApiProperty({ example: 'api_key.created' }) action!: string;
  @ApiProperty({ example: 'api_key' }) targetType!: string;
  @ApiProperty({ example: '8d2f4c1e-0a7b-4c61-9e53-3f0b2a9d1c77' }) targetId!: string;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' }) operatorId!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'ops@example.com' }) operatorEmail!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'What changed (action-specific)' })
  details!: unknown;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}
