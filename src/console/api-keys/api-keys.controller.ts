import { Body, Controller, Delete, Get, Param, ParseUUIDPipe, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { NotFound } from '../../core/errors/domain-errors.js';
import type { Page } from '../../core/http/pagination.js';
import { ApiKeysService, API_KEY_NOT_FOUND } from './api-keys.service.js';
import { ApiKeyView, CreatedApiKeyView } from './dto/api-key.view.js';
import { ApiKeyQueryDto, CreateApiKeyDto } from './dto/create-api-key.dto.js';

@ApiTags('console: API keys')
@ConsoleAuth()
@ApiResponse({ status: 401, description: 'No or expired console session' })
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @ApiOperation({ summary: 'Create an API key pair scoped to one business account. The secret is shown once.' })
  @ApiCreatedResponse({ type: CreatedApiKeyView })
  @ApiResponse({ status: 404, description: 'Business account not found, disconnected, or not of this organization' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (wabaId, name)' })
  create(@CurrentOperator() operator: ConsoleScope, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyView> {
    return this.keys.create(operator, dto.wabaId, dto.name);
  }

  @Get()
  @ApiOperation({ summary: "The organization's key pairs (never the secret), newest first" })
  @ApiOkResponse({ description: '`data: {items: ApiKey[], page, limit, total, totalPages}`', type: ApiKeyView, isArray: true })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (page, limit 1–100, wabaId)' })
  list(@CurrentOperator() operator: ConsoleScope, @Query() query: ApiKeyQueryDto): Promise<Page<ApiKeyView>> {
    return this.keys.list(operator.organizationId, query);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Revoke a key pair (refused from its next request on)' })
  @ApiOkResponse({ type: ApiKeyView })
  @ApiResponse({ status: 404, description: 'API key not found (or not of this organization)' })
  revoke(
    @CurrentOperator() operator: ConsoleScope,
    @Param('id', new ParseUUIDPipe({ exceptionFactory: () => new NotFound(API_KEY_NOT_FOUND) })) id: string,
  ): Promise<ApiKeyView> {
    return this.keys.revoke(operator, id);
  }
}
