import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../core/contract/pagination.js';

/** The statuses Meta gives a template: the `status` filter of the templates list. */
export const TEMPLATE_STATUSES = [
  'APPROVED',
  'PENDING',
  'REJECTED',
  'PAUSED',
  'DISABLED',
  'IN_APPEAL',
  'LIMIT_EXCEEDED',
  'LOCKED',
  'ARCHIVED',
  'DELETED',
  'PENDING_DELETION',
  'FLAGGED',
];

export class TemplateQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: TEMPLATE_STATUSES })
  @IsOptional()
  @IsIn(TEMPLATE_STATUSES, { message: `status must be one of ${TEMPLATE_STATUSES.join(', ')}` })
  status?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(512)
  name?: string;
}
