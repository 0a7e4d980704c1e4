import { Body, Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope } from '../../core/http/openapi.js';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { BusinessAccountsService } from '../../accounts/business-accounts/business-accounts.service.js';
import { ConnectBusinessAccountDto, ReplaceAccessTokenDto } from './dto/connect-business-account.dto.js';
import { BusinessAccountView } from '../../accounts/business-accounts/business-account.view.js';

@ApiTags('console: business accounts')
@ConsoleAuth()
@ApiResponse({ status: 401, description: 'No or expired console session' })
@Controller('business-accounts')
export class BusinessAccountsController {
  constructor(private readonly accounts: BusinessAccountsService) {}

  @Post()
  @ApiOperation({ operationId: 'connectBusinessAccount', summary: 'Connect a business account (the token is checked against the upstream platform and stored encrypted)' })
  @ApiEnvelope(BusinessAccountView, { status: 201, description: 'The connected business account' })
  @ApiResponse({ status: 409, description: 'This wabaId is already connected' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed; `accessToken` rejected by the upstream platform, with its reason' })
  @ApiResponse({ status: 502, description: 'Upstream platform unavailable' })
  connect(@CurrentOperator() operator: ConsoleScope, @Body() dto: ConnectBusinessAccountDto): Promise<BusinessAccountView> {
    return this.accounts.connect(operator, dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listBusinessAccounts', summary: "The organization's business accounts" })
  @ApiEnvelope(BusinessAccountView, { isArray: true })
  list(@CurrentOperator() operator: ConsoleScope): Promise<BusinessAccountView[]> {
    return this.accounts.list(operator.organizationId);
  }

  @Get(':wabaId')
  @ApiOperation({ operationId: 'getBusinessAccount', summary: 'One business account' })
  @ApiEnvelope(BusinessAccountView)
  @ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
  get(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string): Promise<BusinessAccountView> {
    return this.accounts.get(operator.organizationId, wabaId);
  }

  @Put(':wabaId/access-token')
  @ApiOperation({ operationId: 'replaceAccessToken', summary: 'Reconnect: replace the stored access token (checked against the upstream platform first); keys stay valid' })
  @ApiEnvelope(BusinessAccountView)
  @ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed; `accessToken` rejected by the upstream platform, with its reason' })
  @ApiResponse({ status: 502, description: 'Upstream platform unavailable' })
  reconnect(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string, @Body() dto: ReplaceAccessTokenDto): Promise<BusinessAccountView> {
    return this.accounts.reconnect(operator, wabaId, dto.accessToken);
  }

  @Delete(':wabaId')
  @ApiOperation({ operationId: 'disconnectBusinessAccount', summary: 'Disconnect: revokes its API keys, keeps its messages and events' })
  @ApiEnvelope(BusinessAccountView, { description: 'The disconnected business account' })
  @ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
  disconnect(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string): Promise<BusinessAccountView> {
    return this.accounts.disconnect(operator, wabaId);
  }
}
