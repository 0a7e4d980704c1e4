import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiPage } from '../../core/http/openapi.js';
import { AuditEntryDoc } from './dto/audit-entry.view.js';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import { PageQueryDto } from '../../core/contract/pagination.js';
import type { Page } from '../../core/rows/page.js';
import { AuditService, type AuditEntry } from '../../audit/audit.service.js';

@ApiTags('console: audit log')
@ConsoleAuth()
@Roles('member')
@ApiResponse({ status: 401, description: 'No or expired console session' })
@Controller('audit-log')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({
    operationId: 'listAuditLog',
    summary: "The organization's audit log (key and business-account changes), newest first",
  })
  @ApiPage(AuditEntryDoc)
  @ApiResponse({ status: 422, description: 'Field Validation Failed (page, limit 1–100)' })
  list(@CurrentOperator() operator: ConsoleScope, @Query() query: PageQueryDto): Promise<Page<AuditEntry>> {
    return this.audit.list(operator.organizationId, query);
  }
}
