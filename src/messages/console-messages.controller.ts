import { readWindowOf } from '../auth/read-window.js';
import { Roles } from '../auth/roles.js';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiPage, ApiRowIdParam } from '../core/http/openapi.js';
import { ConsoleAuth } from '../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../auth/request-scope.js';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import type { Page } from '../core/rows/page.js';
import { ClientGone } from '../core/http/client-gone.js';
import { AnalyticsDoc } from './dto/analytics.view.js';
import { AnalyticsQuery, ListMessagesQuery } from './dto/list-messages.query.js';
import { MessageDetailView, MessageListItemView } from './message.view.js';
import { AnalyticsService, type Analytics } from './query/analytics.service.js';
import { MessagesFeedView } from './feed/messages-feed.view.js';
import { MessagesList } from './query/messages-list.service.js';
import { MessageDetails } from './query/message-details.service.js';
import { RowId } from '../core/http/row-id-param.js';
import { MESSAGE_NOT_FOUND } from './query/message-details.service.js';

/**
 * The message reads of `/messages`, for the console: an operator picks one of the organization's business
 * accounts (connected or not, so history stays readable) instead of presenting that account's key pair.
 */
@ApiTags('console: messages')
@ConsoleAuth()
@Roles('member')
@ApiResponse({ status: 401, description: 'No or expired console session (an API key pair is not accepted here)' })
@ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
@Controller('business-accounts/:wabaId')
export class ConsoleMessagesController {
  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly listing: MessagesList,
    private readonly analytics: AnalyticsService,
    private readonly details: MessageDetails,
  ) {}

  @Get('messages')
  @ApiOperation({
    operationId: 'listAccountMessages',
    summary: 'Messages of the business account, newest first (same filters and paging as GET /messages)',
  })
  @ApiPage(MessageListItemView, {
    or: MessagesFeedView,
    description: 'As GET /messages: pages, or the feed with `after`',
  })
  @ApiResponse({
    status: 422,
    description: 'Field Validation Failed (filters, direction, page, limit 1–100, after, wait)',
  })
  async list(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Query() query: ListMessagesQuery,
    @ClientGone() gone: AbortSignal,
  ): Promise<Page<MessageListItemView> | MessagesFeedView> {
    const account = await this.accounts.getOwned(operator.organizationId, wabaId);
    const owner = { organization: operator.organizationId, session: operator.sessionId };
    return this.listing.list(
      { businessAccountId: account.id, wabaId: account.wabaId, owner, window: readWindowOf(account) },
      query,
      gone,
    );
  }

  @Get('messages/:id')
  @ApiOperation({
    operationId: 'getAccountMessage',
    summary: 'One message of the business account with its status history and failure reason',
  })
  @ApiRowIdParam('The message id')
  @ApiEnvelope(MessageDetailView)
  @ApiResponse({ status: 404, description: 'Business account or message not found (or the id is no positive integer)' })
  async get(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @RowId(MESSAGE_NOT_FOUND) id: number,
  ): Promise<MessageDetailView> {
    const account = await this.accounts.getOwned(operator.organizationId, wabaId);
    return this.details.get(
      { businessAccountId: account.id, wabaId: account.wabaId, window: readWindowOf(account) },
      id,
    );
  }

  @Get('messages-analytics')
  @ApiOperation({
    operationId: 'getAccountMessageAnalytics',
    summary: 'Delivery, read and failure figures of the business account (same as GET /messages/analytics)',
  })
  @ApiEnvelope(AnalyticsDoc)
  @ApiResponse({ status: 422, description: 'Field Validation Failed (since, until, granularity)' })
  async stats(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Query() query: AnalyticsQuery,
  ): Promise<Analytics> {
    const account = await this.accounts.getOwned(operator.organizationId, wabaId);
    return this.analytics.compute(account.id, query, readWindowOf(account));
  }
}
