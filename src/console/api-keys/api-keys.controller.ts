import { Body, Controller, Delete, Get, Param, ParseUUIDPipe, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import { NotFound } from '../../core/errors/domain-errors.js';
import { ApiEnvelope, ApiErrors, ApiPage } from '../../core/http/openapi.js';
import type { Page } from '../../core/rows/page.js';
import { ApiKeysService, API_KEY_NOT_FOUND } from './api-keys.service.js';
import { ApiKeyView, CreatedApiKeyView } from './dto/api-key.view.js';
import { ApiKeyQueryDto, CreateApiKeyDto } from './dto/create-api-key.dto.js';

@ApiTags('console: API keys')
@ConsoleAuth()
@Roles('member')
@ApiErrors({ 401: 'No or expired console session' })
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @Roles('admin')
  @ApiOperation({
    operationId: 'createApiKey',
    summary: 'Create an API key pair scoped to one business account. The secret is shown once.',
  })
  @ApiEnvelope(CreatedApiKeyView, { status: 201, description: 'The new key pair, its secret shown this once' })
  @ApiErrors({
    404: 'Business account not found, disconnected, or not of this organization',
    409: 'The business account already has API_KEYS_MAX_PER_ACCOUNT active key pairs: revoke one first',
    422: 'Field Validation Failed (wabaId, name)',
  })
  create(@CurrentOperator() operator: ConsoleScope, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyView> {
    return this.keys.create(operator, dto.wabaId, dto.name);
  }

  @Get()
  @ApiOperation({
    operationId: 'listApiKeys',
    summary: "The organization's key pairs (never the secret), newest first",
  })
  @ApiPage(ApiKeyView)
  @ApiErrors({ 422: 'Field Validation Failed (page, limit 1–100, wabaId)' })
  list(@CurrentOperator() operator: ConsoleScope, @Query() query: ApiKeyQueryDto): Promise<Page<ApiKeyView>> {
    return this.keys.list(operator.organizationId, query);
  }

  @Delete(':id')
  @Roles('admin')
  @ApiOperation({ operationId: 'revokeApiKey', summary: 'Revoke a key pair (refused from its next request on)' })
  @ApiEnvelope(ApiKeyView, { description: 'The revoked key pair' })
  @ApiErrors({ 404: 'API key not found (or not of this organization)' })
  revoke(
    @CurrentOperator() operator: ConsoleScope,
    @Param('id', new ParseUUIDPipe({ exceptionFactory: () => new NotFound(API_KEY_NOT_FOUND) })) id: string,
  ): Promise<ApiKeyView> {
    return this.keys.revoke(operator, id);
  }
}
