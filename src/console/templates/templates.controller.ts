import { Body, Controller, Delete, Get, HttpCode, Param, ParseUUIDPipe, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiPage, ApiUpstreamErrors } from '../../core/http/openapi.js';
import type { Page } from '../../core/rows/page.js';
import { TemplateDoc, TemplateSyncResultDoc } from './dto/template.view.js';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import {
  TEMPLATE_NOT_FOUND,
  TemplatesService,
  type TemplateSyncResult,
  type TemplateView,
} from '../../accounts/templates/templates.service.js';
import { NotFound } from '../../core/errors/domain-errors.js';
import { CreateTemplateDto, EditTemplateDto } from './dto/template-draft.dto.js';
import { TemplateQueryDto } from './dto/template-query.dto.js';

const TemplateId = () => Param('id', new ParseUUIDPipe({ exceptionFactory: () => new NotFound(TEMPLATE_NOT_FOUND) }));
const META_REFUSED =
  "Field Validation Failed, naming the field (checked before Meta: name, language, category, a BODY with text, an example for every variable); or Meta's refusal in its own words";

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

  @Post()
  @Roles('admin')
  @ApiOperation({
    operationId: 'createTemplate',
    summary:
      "Create a template: checked against Meta's rules, submitted for review (Meta's POST /{waba-id}/message_templates), stored as Meta answered (PENDING until the review webhook). Audit-logged.",
  })
  @ApiEnvelope(TemplateDoc, { status: 201, description: 'The stored template (status PENDING, sendable false)' })
  @ApiResponse({ status: 409, description: 'A template of this name and language exists already at Meta' })
  @ApiResponse({ status: 422, description: META_REFUSED })
  @ApiUpstreamErrors('nothing was stored')
  create(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Body() dto: CreateTemplateDto,
  ): Promise<TemplateView> {
    return this.templates.create(operator, wabaId, dto);
  }

  @Patch(':id')
  @Roles('admin')
  @ApiOperation({
    operationId: 'editTemplate',
    summary:
      "Edit a template's components and/or category (Meta's POST /{template-id}); it is PENDING again until Meta's review webhook. Audit-logged.",
  })
  @ApiEnvelope(TemplateDoc, { description: 'The stored template, PENDING again' })
  @ApiResponse({ status: 404, description: 'Template not found (or removed), or business account not found' })
  @ApiResponse({ status: 422, description: `${META_REFUSED} (e.g. a template still in review)` })
  @ApiUpstreamErrors('nothing was changed')
  edit(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @TemplateId() id: string,
    @Body() dto: EditTemplateDto,
  ): Promise<TemplateView> {
    return this.templates.edit(operator, wabaId, id, dto);
  }

  @Delete(':id')
  @Roles('admin')
  @ApiOperation({
    operationId: 'deleteTemplate',
    summary:
      'Delete this language of a template at Meta (DELETE /{waba-id}/message_templates?name=…&hsm_id=…); kept here as removed. Audit-logged.',
  })
  @ApiEnvelope(TemplateDoc, { description: 'The template, removed (sendable false)' })
  @ApiResponse({ status: 404, description: 'Template not found (or removed already), or business account not found' })
  @ApiResponse({ status: 422, description: "Meta's refusal in its own words" })
  @ApiUpstreamErrors('nothing was changed')
  remove(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @TemplateId() id: string,
  ): Promise<TemplateView> {
    return this.templates.remove(operator, wabaId, id);
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
