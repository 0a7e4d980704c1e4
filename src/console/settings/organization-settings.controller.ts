import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import { ApiEnvelope, ApiErrors } from '../../core/http/openapi.js';
import { OrganizationSettingsView, UpdateOrganizationSettingsDto } from './organization-settings.dto.js';
import { OrganizationSettingsService } from './organization-settings.service.js';

@ApiTags('console: organization settings')
@ConsoleAuth()
@Roles('member')
@ApiErrors({ 401: 'No or expired console session' })
@Controller('organization/settings')
export class OrganizationSettingsController {
  constructor(private readonly settings: OrganizationSettingsService) {}

  @Get()
  @ApiOperation({
    operationId: 'getOrganizationSettings',
    summary: "The organization's settings: its content retention, the service's default and how far scrubbing has got",
  })
  @ApiEnvelope(OrganizationSettingsView)
  get(@CurrentOperator() operator: ConsoleScope): Promise<OrganizationSettingsView> {
    return this.settings.get(operator.organizationId);
  }

  @Patch()
  @Roles('admin')
  @ApiOperation({
    operationId: 'updateOrganizationSettings',
    summary:
      "Set the organization's content retention (admins and owners; audited): days after which message content and raw payloads are scrubbed, 0 for forever, null for the service's default",
  })
  @ApiEnvelope(OrganizationSettingsView)
  @ApiErrors({ 422: 'Field Validation Failed (contentRetentionDays: 0–36500 or null)' })
  update(
    @CurrentOperator() operator: ConsoleScope,
    @Body() dto: UpdateOrganizationSettingsDto,
  ): Promise<OrganizationSettingsView> {
    return this.settings.update(operator, dto.contentRetentionDays);
  }
}
