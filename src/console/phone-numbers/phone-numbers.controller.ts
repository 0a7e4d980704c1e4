import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiPage, ApiUpstreamErrors } from '../../core/http/openapi.js';
import { PageQueryDto } from '../../core/contract/pagination.js';
import type { Page } from '../../core/rows/page.js';
import { PhoneNumberDoc, PhoneNumberSyncResultDoc } from './dto/phone-number.view.js';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import {
  PhoneNumbersService,
  type PhoneNumberSyncResult,
  type PhoneNumberView,
} from '../../accounts/phone-numbers/phone-numbers.service.js';

@ApiTags('console: phone numbers')
@ConsoleAuth()
@Roles('member')
@ApiResponse({ status: 401, description: 'No or expired console session' })
@ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
@Controller('business-accounts/:wabaId/phone-numbers')
export class PhoneNumbersController {
  constructor(private readonly phoneNumbers: PhoneNumbersService) {}

  @Post('sync')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'syncPhoneNumbers',
    summary:
      'Sync phone numbers from the upstream platform (all pages, all or nothing): what changed and when; GET lists them',
  })
  @ApiEnvelope(PhoneNumberSyncResultDoc)
  @ApiUpstreamErrors('nothing was written')
  sync(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string): Promise<PhoneNumberSyncResult> {
    return this.phoneNumbers.sync(operator, wabaId);
  }

  @Get()
  @ApiOperation({ operationId: 'listPhoneNumbers', summary: 'Synced phone numbers of the business account' })
  @ApiPage(PhoneNumberDoc, {
    description: 'One page (default 20, at most 100): current numbers first, by display number',
  })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (page, limit)' })
  list(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<PhoneNumberView>> {
    return this.phoneNumbers.list(operator.organizationId, wabaId, query);
  }
}
