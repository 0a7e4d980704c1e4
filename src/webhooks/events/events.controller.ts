import { Controller, Get, Param, ParseIntPipe, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { NotFoundError } from '../../core/http/api-error.js';
import type { Page } from '../../core/http/pagination.js';
import { EventsQueryDto } from './dto/events-query.dto.js';
import { EventView } from './dto/event.view.js';
import { EVENT_NOT_FOUND, EventsService } from './events.service.js';

@ApiTags('webhooks: events')
@ConsoleAuth()
@ApiExtraModels(EventView)
@ApiResponse({ status: 401, description: 'No or expired console session (an API key pair is not accepted here)' })
@Controller('webhooks/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ApiOperation({ summary: "A business account's stored webhook events, newest first, with optional filters" })
  @ApiOkResponse({
    description: '`data: {items: Event[], page, limit, total, totalPages}`',
    schema: {
      type: 'object',
      properties: {
        items: { type: 'array', items: { $ref: getSchemaPath(EventView) } },
        page: { type: 'integer', example: 1 },
        limit: { type: 'integer', example: 20 },
        total: { type: 'integer' },
        totalPages: { type: 'integer' },
      },
    },
  })
  @ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
  @ApiResponse({ status: 422, description: 'Field Validation Failed (wabaId missing, page/limit out of range, unknown kind, malformed since/until)' })
  list(@CurrentOperator() operator: ConsoleScope, @Query() query: EventsQueryDto): Promise<Page<EventView>> {
    return this.events.list(operator.organizationId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One stored event, with the raw upstream item' })
  @ApiOkResponse({ type: EventView })
  @ApiResponse({ status: 404, description: 'Event not found (or not of a business account of this organization)' })
  get(
    @CurrentOperator() operator: ConsoleScope,
    @Param('id', new ParseIntPipe({ exceptionFactory: () => new NotFoundError(EVENT_NOT_FOUND) })) id: number,
  ): Promise<EventView> {
    return this.events.get(operator.organizationId, id);
  }
}
