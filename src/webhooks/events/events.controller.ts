import { Controller, Get, Param, ParseIntPipe, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ConsoleAuth } from '../../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../../auth/request-scope.js';
import { NotFoundError } from '../../core/http/api-error.js';
import { ClientGone } from '../../core/http/client-gone.js';
import type { Page } from '../../core/http/pagination.js';
import { EventFeedView } from './dto/event-feed.view.js';
import { EventsQueryDto } from './dto/events-query.dto.js';
import { EventView } from './dto/event.view.js';
import { EVENT_NOT_FOUND, EventsService } from './events.service.js';

@ApiTags('webhooks: events')
@ConsoleAuth()
@ApiExtraModels(EventView, EventFeedView)
@ApiResponse({ status: 401, description: 'No or expired console session (an API key pair is not accepted here)' })
@Controller('webhooks/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ApiOperation({
    summary: "A business account's stored webhook events: pages newest first, or the feed (after=cursor) oldest first",
    description:
      'Pages (`page`, `limit`): newest first, for browsing. Feed (`after`, `limit`, optional `wait`): oldest first in the order events became visible, ' +
      'with `nextCursor`; start with `after=0` and pass each `nextCursor` back: every event of the account exactly once, even when workers commit ' +
      'out of id order. With `wait` (seconds, up to 30) an empty feed waits for the next event. Filters apply to both forms.',
  })
  @ApiOkResponse({
    description: 'Pages: `data: {items: Event[], page, limit, total, totalPages}`. Feed (`after` given): `data: {items: Event[], nextCursor, limit}`',
    schema: {
      oneOf: [
        {
          type: 'object',
          properties: {
            items: { type: 'array', items: { $ref: getSchemaPath(EventView) } },
            page: { type: 'integer', example: 1 },
            limit: { type: 'integer', example: 20 },
            total: { type: 'integer' },
            totalPages: { type: 'integer' },
          },
        },
        { $ref: getSchemaPath(EventFeedView) },
      ],
    },
  })
  @ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
  @ApiResponse({
    status: 422,
    description:
      'Field Validation Failed (wabaId missing, page/limit out of range, unknown kind, malformed since/until, userId over 160 characters, `after` malformed or not a cursor of this wabaId, `after` with `page`, `wait` out of 0–30 or without `after`)',
  })
  @ApiResponse({ status: 429, description: 'Too many long polls waiting on this server (Retry-After)' })
  list(@CurrentOperator() operator: ConsoleScope, @Query() query: EventsQueryDto, @ClientGone() gone: AbortSignal): Promise<Page<EventView> | EventFeedView> {
    return this.events.list(operator.organizationId, query, gone);
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
