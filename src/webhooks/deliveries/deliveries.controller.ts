import { Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiPage, ApiRowIdParam } from '../../core/http/openapi.js';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { Roles } from '../../auth/roles.js';
import type { Page } from '../../core/rows/page.js';
import { DELIVERY_NOT_FOUND, DeliveriesService } from './deliveries.service.js';
import {
  AccountDeliveryHealthView,
  DeliveriesHealthQueryDto,
  DeliveriesQueryDto,
  DeliveryView,
} from './dto/deliveries.dto.js';
import { RowId } from '../../core/http/row-id-param.js';

@ApiTags('webhooks: deliveries')
@ConsoleAuth()
@Roles('member')
@ApiExtraModels(DeliveryView, AccountDeliveryHealthView)
@ApiResponse({ status: 401, description: 'No or expired console session' })
@Controller('webhooks/deliveries')
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get()
  @ApiOperation({
    operationId: 'listDeliveries',
    summary: 'Raw webhook deliveries concerning your business accounts, newest first (status=failed: dead letters)',
    description:
      'Processed deliveries are kept WEBHOOK_RETENTION_DAYS (default 30) days; their events stay in GET /webhooks/events. Dead letters are kept.',
  })
  @ApiPage(DeliveryView)
  @ApiResponse({ status: 422, description: 'Field Validation Failed (status, page, limit)' })
  list(@CurrentOperator() operator: ConsoleScope, @Query() query: DeliveriesQueryDto): Promise<Page<DeliveryView>> {
    return this.deliveries.list(operator.organizationId, query);
  }

  @Get('health')
  @ApiOperation({
    operationId: 'getDeliveryHealth',
    summary: 'Your webhook backlog per business account: deliveries waiting, dead letters, processing lag',
    description:
      "The queue view for tenants: only your organization's business accounts. `pending` deliveries are stored and waiting for the worker; `failed` are dead letters (replay them after fixing the cause); `lagSeconds` is how long the oldest pending one has waited.",
  })
  @ApiEnvelope(AccountDeliveryHealthView, { isArray: true, description: 'One item per business account' })
  @ApiResponse({ status: 404, description: 'Business account not found (wabaId not of this organization)' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (wabaId)' })
  health(
    @CurrentOperator() operator: ConsoleScope,
    @Query() query: DeliveriesHealthQueryDto,
  ): Promise<AccountDeliveryHealthView[]> {
    return this.deliveries.health(operator.organizationId, query.wabaId);
  }

  @Post(':id/replay')
  @Roles('admin')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'replayDelivery',
    summary:
      'Process a delivery again (e.g. a dead letter after the cause is fixed); events already stored are not duplicated',
  })
  @ApiRowIdParam('The delivery id')
  @ApiEnvelope(DeliveryView, { description: 'The delivery, back to `received`' })
  @ApiResponse({ status: 404, description: 'Delivery not found (or not concerning this organization)' })
  replay(@CurrentOperator() operator: ConsoleScope, @RowId(DELIVERY_NOT_FOUND) id: number): Promise<DeliveryView> {
    return this.deliveries.replay(operator, id);
  }
}
