import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiPage, ApiUpstreamErrors } from '../../core/http/openapi.js';
import { PageQueryDto } from '../../core/contract/pagination.js';
import type { Page } from '../../core/rows/page.js';
import { TemplateDoc, TemplateSyncResultDoc } from './dto/template.view.js';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import {
  TemplatesService,
  type TemplateSyncResult,
  type TemplateView,
} from '../../accounts/templates/templates.service.js';

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

@ApiTags('console: templates')
@ConsoleAuth()
@Roles('member')
@ApiResponse({ status: 401, description: 'No or expired console session' })
@ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
@Controller('business-accounts/:wabaId/templates')
export class TemplatesController {
  constructor(private readonly templates: TemplatesService) {}

  @Post('sync')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'syncTemplates',
    summary:
      'Sync message templates from the upstream platform (all pages, all or nothing): what changed and when; GET lists them',
  })
  @ApiEnvelope(TemplateSyncResultDoc)
  @ApiUpstreamErrors('nothing was written')
  sync(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string): Promise<TemplateSyncResult> {
    return this.templates.sync(operator, wabaId);
  }

  @Get()
  @ApiOperation({
    operationId: 'listTemplates',
    summary: 'Synced templates, optionally filtered by status (e.g. APPROVED) or name',
  })
  @ApiPage(TemplateDoc, { description: 'One page (default 20, at most 100), by name then language' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (status, page, limit)' })
  list(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Query() query: TemplateQueryDto,
  ): Promise<Page<TemplateView>> {
    return this.templates.list(operator.organizationId, wabaId, query);
  }
}
