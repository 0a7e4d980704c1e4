import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import { ApiEnvelope, ApiPage, ApiUpstreamErrors } from '../../core/http/openapi.js';
import { PageQueryDto } from '../../core/contract/pagination.js';
import type { Page } from '../../core/rows/page.js';
import { BlockedUsersService } from '../../accounts/users/blocked-users.service.js';
import { MarketingPreferencesService } from '../../accounts/users/marketing-preferences.service.js';
import {
  BlockedUserView,
  BlockUsersResultView,
  MarketingPreferenceView,
  UnblockedUserView,
} from '../../accounts/users/user-views.js';
import { BlockedUserParams, BlockUsersDto, ListMarketingPreferencesQuery } from './dto/users.dto.js';

@ApiTags('console: users (blocked users, marketing preferences)')
@ConsoleAuth()
@Roles('member')
@ApiResponse({ status: 401, description: 'No or expired console session' })
@ApiResponse({ status: 404, description: 'Business account or phone number not found (or not of this organization)' })
@Controller('business-accounts/:wabaId')
export class UsersController {
  constructor(
    private readonly blocked: BlockedUsersService,
    private readonly preferences: MarketingPreferencesService,
  ) {}

  @Post('phone-numbers/:phoneNumberId/blocked-users')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'blockUsers',
    summary:
      "Block users on a phone number (the upstream platform's POST /{phone-number-id}/block_users): sends to them are then refused with 422. Only users who wrote to the number in the last 24 hours can be blocked; the others are listed in `failed` with the upstream platform's reason",
  })
  @ApiEnvelope(BlockUsersResultView, {
    description: 'At least one user blocked; `failed` lists the users the upstream platform refused',
  })
  @ApiResponse({
    status: 422,
    description:
      'Field Validation Failed: `users` empty or malformed, or every user refused by the upstream platform (`users.<i>` with its reason)',
  })
  @ApiUpstreamErrors('nothing was blocked', 'Rate limited (console or upstream platform): wait Retry-After seconds')
  block(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Param('phoneNumberId') phoneNumberId: string,
    @Body() dto: BlockUsersDto,
  ): Promise<BlockUsersResultView> {
    return this.blocked.block(operator, wabaId, phoneNumberId, dto.users);
  }

  @Get('phone-numbers/:phoneNumberId/blocked-users')
  @ApiOperation({ operationId: 'listBlockedUsers', summary: 'Users blocked on a phone number, newest first' })
  @ApiPage(BlockedUserView)
  list(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Param('phoneNumberId') phoneNumberId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<BlockedUserView>> {
    return this.blocked.list(operator, wabaId, phoneNumberId, query);
  }

  @Delete('phone-numbers/:phoneNumberId/blocked-users/:user')
  @Roles('admin')
  @ApiOperation({
    operationId: 'unblockUser',
    summary: "Unblock a user (the upstream platform's DELETE /{phone-number-id}/block_users)",
  })
  @ApiEnvelope(UnblockedUserView, { description: 'Unblocked: sends to the user go again' })
  @ApiResponse({
    status: 422,
    description: 'Field Validation Failed: `user` is not a phone number or business-scoped user id',
  })
  unblock(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Param('phoneNumberId') phoneNumberId: string,
    @Param() params: BlockedUserParams,
  ): Promise<UnblockedUserView> {
    return this.blocked.unblock(operator, wabaId, phoneNumberId, params.user);
  }

  @Get('marketing-preferences')
  @ApiOperation({
    operationId: 'listMarketingPreferences',
    summary:
      "Users' marketing preferences (Meta's user_preferences webhook, or its 131050 failure): MARKETING templates to a user whose latest preference is stop are refused with 422; newest first",
  })
  @ApiPage(MarketingPreferenceView)
  @ApiResponse({ status: 422, description: 'Field Validation Failed (value, user, page, limit)' })
  preferencesOf(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Query() query: ListMarketingPreferencesQuery,
  ): Promise<Page<MarketingPreferenceView>> {
    return this.preferences.list(operator.organizationId, wabaId, query);
  }
}
