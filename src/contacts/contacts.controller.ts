import { Controller, Delete, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth } from '../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../auth/request-scope.js';
import { Roles } from '../auth/roles.js';
import { ApiEnvelope } from '../core/http/openapi.js';
import { ContactExportQuery, ContactExportView, ContactParams, ErasureCountsView } from './contact.dto.js';
import { ContactsService } from './contacts.service.js';

/** A contact's data on one business account, for the console: a copy (GDPR art. 15/20) and erasure (art. 17). */
@ApiTags('console: contacts (export, erasure)')
@ConsoleAuth()
@Roles('admin')
@ApiResponse({ status: 401, description: 'No or expired console session (an API key pair is not accepted here)' })
@ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
@ApiResponse({
  status: 422,
  description:
    'Field Validation Failed: `phoneOrUserId` is not a phone number or business-scoped user id (or after, limit)',
})
@Controller('business-accounts/:wabaId/contacts/:phoneOrUserId')
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

  @Get('export')
  @ApiOperation({
    operationId: 'exportContact',
    summary:
      "Everything stored about one contact on this account, as one JSON document: messages both ways (content, statuses and their times, errors, media metadata), the contact's events, campaign memberships, marketing preferences, blocks and windows. Messages are paged (`after`, `limit`); audit-logged",
  })
  @ApiEnvelope(ContactExportView)
  export(
    @CurrentOperator() operator: ConsoleScope,
    @Param() params: ContactParams,
    @Query() query: ContactExportQuery,
  ): Promise<ContactExportView> {
    return this.contacts.export(operator, params.wabaId, params.phoneOrUserId, query);
  }

  @Delete()
  @ApiOperation({
    operationId: 'eraseContact',
    summary:
      'Erase one contact from this account: every table and partition (docs/security.md, "A contact\'s data"). Answers what was erased; the audit log keeps the counts and a keyed hash of the contact, never the number. A contact who writes again later is stored as usual',
  })
  @ApiEnvelope(ErasureCountsView, { description: 'Erased (all counts 0: nothing was stored about the contact)' })
  erase(@CurrentOperator() operator: ConsoleScope, @Param() params: ContactParams): Promise<ErasureCountsView> {
    return this.contacts.erase(operator, params.wabaId, params.phoneOrUserId);
  }
}
