import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { Roles } from '../../auth/roles.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import {
  CampaignRecipientsQuery,
  CampaignRecipientView,
  CampaignView,
  CreateCampaignDto,
  RetryFailedView,
} from '../../campaigns/campaign.dto.js';
import { CAMPAIGN_NOT_FOUND, CampaignsService } from '../../campaigns/campaigns.service.js';
import { ApiEnvelope, ApiErrors, ApiPage, ApiRowIdParam } from '../../core/http/openapi.js';
import { PageQueryDto } from '../../core/contract/pagination.js';
import type { Page } from '../../core/rows/page.js';
import { RowId } from '../../core/http/row-id-param.js';

/** A campaign's id in the path: anything but an integer names no campaign (404, as another organization's). */
const CampaignId = () => RowId(CAMPAIGN_NOT_FOUND);

const CREATE_EXAMPLE = {
  name: 'November parcel notice',
  phoneNumberId: '402000000000011',
  templateName: 'hello_world',
  templateLanguage: 'en_US',
  recipients: [{ to: '447700900123' }, { to: '447700900124' }, { userId: 'US.13491208655302741918' }],
};

@ApiTags('console: campaigns')
@ConsoleAuth()
@ApiErrors({
  401: 'No or expired console session',
  404: 'Business account or campaign not found (or not of this organization)',
})
@Roles('member')
@Controller('business-accounts/:wabaId/campaigns')
export class CampaignsController {
  constructor(private readonly campaigns: CampaignsService) {}

  @Post()
  @Roles('admin')
  @ApiOperation({
    operationId: 'createCampaign',
    summary:
      "Send one APPROVED template to up to 100,000 recipients, each once, at the phone number's throughput (shared with POST /messages). Every recipient is checked first: a refused campaign stores and sends nothing. The worker runs it; poll GET …/campaigns/{id} for counts",
  })
  @ApiBody({ type: CreateCampaignDto, examples: { template: { value: CREATE_EXAMPLE } } })
  @ApiEnvelope(CampaignView, { status: 201, description: 'Created and running' })
  @ApiErrors({
    409: 'The organization already has CAMPAIGNS_RUNNING_PER_ORGANIZATION campaigns running',
    413: 'Body over CAMPAIGN_BODY_LIMIT_BYTES',
    415: 'A Content-Encoding other than identity (compressed bodies are refused)',
    429: 'Recipients over CAMPAIGN_RECIPIENTS_PER_DAY_PER_ORGANIZATION in 24 hours (Retry-After); or too many request bodies in flight from this address',
    422: 'Field Validation Failed: name, phoneNumberId (not synced or not CONNECTED), templateName (not synced or not APPROVED), templateLanguage, recipients (none, over 100,000), recipients.<i>.to / .userId / .components (the first 100 problems)',
    424: "Meta's standing of the account or number forbids sending (disabled, restricted, flagged), or the stored token was rejected",
  })
  create(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Body() dto: CreateCampaignDto,
  ): Promise<CampaignView> {
    return this.campaigns.create(operator, wabaId, dto);
  }

  @Get()
  @ApiOperation({
    operationId: 'listCampaigns',
    summary: "The business account's campaigns, newest first (counts: read one campaign)",
  })
  @ApiPage(CampaignView)
  @ApiErrors({ 422: 'Field Validation Failed (page, limit 1–100)' })
  list(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<CampaignView>> {
    return this.campaigns.list(operator.organizationId, wabaId, query);
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getCampaign',
    summary:
      'A campaign with its status (running, paused, cancelled, completed), live counts per recipient status and progress',
  })
  @ApiRowIdParam('The campaign id')
  @ApiEnvelope(CampaignView)
  get(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @CampaignId() id: number,
  ): Promise<CampaignView> {
    return this.campaigns.get(operator.organizationId, wabaId, id);
  }

  @Get(':id/recipients')
  @ApiOperation({
    operationId: 'listCampaignRecipients',
    summary: "A campaign's recipients in the order given: status, message id, and Meta's error or the skip reason",
  })
  @ApiRowIdParam('The campaign id')
  @ApiPage(CampaignRecipientView, { description: 'One page, in the order given' })
  @ApiErrors({ 422: 'Field Validation Failed (status, page, limit 1–100)' })
  recipients(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @CampaignId() id: number,
    @Query() query: CampaignRecipientsQuery,
  ): Promise<Page<CampaignRecipientView>> {
    return this.campaigns.recipientsOf(operator.organizationId, wabaId, id, query);
  }

  @Post(':id/pause')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'pauseCampaign',
    summary: 'Pause: nothing more is sent once this answers, beyond sends already in flight',
  })
  @ApiRowIdParam('The campaign id')
  @ApiEnvelope(CampaignView, { description: 'Paused' })
  @ApiErrors({ 409: 'Campaign is not running' })
  pause(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @CampaignId() id: number,
  ): Promise<CampaignView> {
    return this.campaigns.pause(operator, wabaId, id);
  }

  @Post(':id/resume')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'resumeCampaign',
    summary: 'Resume a paused campaign where it stopped (nobody is sent twice)',
  })
  @ApiRowIdParam('The campaign id')
  @ApiEnvelope(CampaignView, { description: 'Running again' })
  @ApiErrors({
    409: 'Campaign is not paused, or the organization already has CAMPAIGNS_RUNNING_PER_ORGANIZATION campaigns running',
  })
  resume(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @CampaignId() id: number,
  ): Promise<CampaignView> {
    return this.campaigns.resume(operator, wabaId, id);
  }

  @Post(':id/cancel')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'cancelCampaign',
    summary: 'Cancel: recipients not sent yet are cancelled; sends already in flight complete',
  })
  @ApiRowIdParam('The campaign id')
  @ApiEnvelope(CampaignView, { description: 'Cancelled' })
  @ApiErrors({ 409: 'Campaign is already completed or cancelled' })
  cancel(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @CampaignId() id: number,
  ): Promise<CampaignView> {
    return this.campaigns.cancel(operator, wabaId, id);
  }

  @Post(':id/retry-failed')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'retryFailedCampaignRecipients',
    summary:
      'Send again to the recipients whose latest message failed (a new message each); a completed campaign runs again, a paused one keeps them until resumed',
  })
  @ApiRowIdParam('The campaign id')
  @ApiEnvelope(RetryFailedView, { description: 'Failed recipients sent back to pending' })
  @ApiErrors({
    409: 'Campaign is cancelled, or (a completed one) the organization already has CAMPAIGNS_RUNNING_PER_ORGANIZATION campaigns running',
  })
  retryFailed(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @CampaignId() id: number,
  ): Promise<RetryFailedView> {
    return this.campaigns.retryFailed(operator, wabaId, id);
  }
}
