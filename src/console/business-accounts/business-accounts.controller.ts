import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiPage } from '../../core/http/openapi.js';
import { PageQueryDto } from '../../core/contract/pagination.js';
import type { Page } from '../../core/rows/page.js';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import { BusinessAccountsService } from '../../accounts/business-accounts/business-accounts.service.js';
import { WebhookSubscription } from '../../accounts/business-accounts/webhook-subscription.js';
import { CredentialChecks } from '../../accounts/credentials/credential-checks.js';
import { ConnectBusinessAccountDto, ReplaceAccessTokenDto } from './dto/connect-business-account.dto.js';
import { BusinessAccountView } from '../../accounts/business-accounts/business-account.view.js';

@ApiTags('console: business accounts')
@ConsoleAuth()
@Roles('member')
@ApiResponse({ status: 401, description: 'No or expired console session' })
@Controller('business-accounts')
export class BusinessAccountsController {
  constructor(
    private readonly accounts: BusinessAccountsService,
    private readonly subscription: WebhookSubscription,
    private readonly credentialChecks: CredentialChecks,
  ) {}

  @Post()
  @Roles('admin')
  @ApiOperation({
    operationId: 'connectBusinessAccount',
    summary:
      "Connect a business account: the token is checked against the upstream platform, the app is subscribed to the account's webhooks (POST, then GET /{waba-id}/subscribed_apps), then the token is stored encrypted. Nothing is stored when any step fails.",
    description:
      "Another organization's account whose credentials failed their check, or that it disconnected, is taken over: it moves to this organization (which reads only what arrives from now on), the other organization's key pairs are revoked, and both audit logs record it (docs/security.md). The token is verified before any 409, so a bad token gets the answer of any bad token.",
  })
  @ApiEnvelope(BusinessAccountView, {
    status: 201,
    description: 'The connected business account (`webhooksSubscribed: true`, `credentialsValid: true`)',
  })
  @ApiResponse({
    status: 409,
    description:
      'This wabaId is already connected (by this organization, or by another whose credentials are valid and which has not disconnected it)',
  })
  @ApiResponse({
    status: 422,
    description: 'Field Validation Failed; `accessToken` rejected by the upstream platform, with its reason',
  })
  @ApiResponse({
    status: 424,
    description:
      'The webhook subscription was refused for a credential reason (e.g. the token lacks a permission), named in the message',
  })
  @ApiResponse({
    status: 429,
    description:
      'Rate limited: the console (per session or address), or the upstream platform on the webhook subscription; wait `Retry-After` seconds',
  })
  @ApiResponse({
    status: 502,
    description: 'Upstream platform unavailable (token check or webhook subscription), named in the message',
  })
  connect(
    @CurrentOperator() operator: ConsoleScope,
    @Body() dto: ConnectBusinessAccountDto,
  ): Promise<BusinessAccountView> {
    return this.accounts.connect(operator, dto);
  }

  @Get()
  @ApiOperation({
    operationId: 'listBusinessAccounts',
    summary: "The organization's business accounts, oldest connected first",
  })
  @ApiPage(BusinessAccountView, { description: 'One page (default 20, at most 100), oldest connected first' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (page, limit)' })
  list(@CurrentOperator() operator: ConsoleScope, @Query() query: PageQueryDto): Promise<Page<BusinessAccountView>> {
    return this.accounts.list(operator.organizationId, query);
  }

  @Get(':wabaId')
  @ApiOperation({ operationId: 'getBusinessAccount', summary: 'One business account' })
  @ApiEnvelope(BusinessAccountView)
  @ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
  get(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string): Promise<BusinessAccountView> {
    return this.accounts.get(operator.organizationId, wabaId);
  }

  @Put(':wabaId/access-token')
  @Roles('admin')
  @ApiOperation({
    operationId: 'replaceAccessToken',
    summary:
      'Reconnect: replace the stored access token (checked and subscribed like a connect first); keys stay valid, credentials are valid again',
  })
  @ApiEnvelope(BusinessAccountView)
  @ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
  @ApiResponse({
    status: 422,
    description: 'Field Validation Failed; `accessToken` rejected by the upstream platform, with its reason',
  })
  @ApiResponse({
    status: 424,
    description: 'The webhook subscription was refused for a credential reason; the stored token is unchanged',
  })
  @ApiResponse({
    status: 429,
    description:
      'Rate limited: the console (per session or address), or the upstream platform on the webhook subscription; wait `Retry-After` seconds',
  })
  @ApiResponse({ status: 502, description: 'Upstream platform unavailable; the stored token is unchanged' })
  reconnect(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Body() dto: ReplaceAccessTokenDto,
  ): Promise<BusinessAccountView> {
    return this.accounts.reconnect(operator, wabaId, dto.accessToken);
  }

  @Post(':wabaId/subscription')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'subscribeWebhooks',
    summary:
      "Subscribe the app to the account's webhooks again (POST, then GET /{waba-id}/subscribed_apps with the stored token)",
  })
  @ApiEnvelope(BusinessAccountView, {
    description: 'The business account, `webhooksSubscribed: true` and a new `webhooksCheckedAt`',
  })
  @ApiResponse({ status: 404, description: 'Business account not found, not of this organization, or disconnected' })
  @ApiResponse({
    status: 424,
    description:
      'The upstream platform refused the stored token (or its permission); replace it. The account is unchanged',
  })
  @ApiResponse({
    status: 429,
    description:
      'Rate limited: the console (per session or address), or the upstream platform; wait `Retry-After` seconds. The account is unchanged',
  })
  @ApiResponse({
    status: 502,
    description:
      'Upstream platform unavailable, or it does not list the app after subscribing; the account is unchanged',
  })
  subscribe(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string): Promise<BusinessAccountView> {
    return this.subscription.resubscribe(operator, wabaId);
  }

  @Post(':wabaId/credentials/check')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'checkCredentials',
    summary:
      'Check the stored access token now (GET /{waba-id}?fields=id,name,marketing_messages_onboarding_status with it; also refreshes the Marketing Messages API state): a rejection marks `credentialsValid: false` with the reason (sends then answer 424); acceptance marks it valid',
  })
  @ApiEnvelope(BusinessAccountView, {
    description:
      'The business account with the verdict: `credentialsValid`, `credentialsError`, `credentialsCheckedAt`',
  })
  @ApiResponse({ status: 404, description: 'Business account not found, not of this organization, or disconnected' })
  @ApiResponse({
    status: 424,
    description: 'The stored token cannot be decrypted, or the upstream platform blocked the account; nothing recorded',
  })
  @ApiResponse({
    status: 429,
    description:
      'Rate limited: the console (per session or address), or the upstream platform (no verdict, nothing recorded); wait `Retry-After` seconds',
  })
  @ApiResponse({ status: 502, description: 'Upstream platform unavailable: no verdict, nothing recorded' })
  checkCredentials(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
  ): Promise<BusinessAccountView> {
    return this.credentialChecks.checkNow(operator, wabaId);
  }

  @Delete(':wabaId')
  @Roles('admin')
  @ApiOperation({
    operationId: 'disconnectBusinessAccount',
    summary: 'Disconnect: revokes its API keys, keeps its messages and events',
  })
  @ApiEnvelope(BusinessAccountView, { description: 'The disconnected business account' })
  @ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
  disconnect(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string): Promise<BusinessAccountView> {
    return this.accounts.disconnect(operator, wabaId);
  }
}
