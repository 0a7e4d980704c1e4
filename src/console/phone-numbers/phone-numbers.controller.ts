import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope } from '../../core/http/openapi.js';
import { PhoneNumberDoc, PhoneNumberSyncResultDoc } from './dto/phone-number.view.js';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import { PhoneNumbersService, type PhoneNumberSyncResult, type PhoneNumberView } from '../../accounts/phone-numbers/phone-numbers.service.js';

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
  @ApiOperation({ operationId: 'syncPhoneNumbers', summary: 'Sync phone numbers from the upstream platform (all pages, all or nothing)' })
  @ApiEnvelope(PhoneNumberSyncResultDoc)
  @ApiResponse({ status: 424, description: 'The upstream platform rejected the stored token: reconnect the business account' })
  @ApiResponse({ status: 429, description: 'Upstream rate limit: try again after Retry-After seconds; nothing was written' })
  @ApiResponse({ status: 502, description: 'Upstream platform unavailable; nothing was written' })
  sync(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string): Promise<PhoneNumberSyncResult> {
    return this.phoneNumbers.sync(operator, wabaId);
  }

  @Get()
  @ApiOperation({ operationId: 'listPhoneNumbers', summary: 'Synced phone numbers of the business account' })
  @ApiEnvelope(PhoneNumberDoc, { isArray: true })
  list(@CurrentOperator() operator: ConsoleScope, @Param('wabaId') wabaId: string): Promise<PhoneNumberView[]> {
    return this.phoneNumbers.list(operator.organizationId, wabaId);
  }
}
