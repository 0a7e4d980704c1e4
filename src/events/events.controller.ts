import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth } from '../auth/auth.decorators.js';
import { CurrentOperator, type ConsoleScope } from '../auth/request-scope.js';
import { Roles } from '../auth/roles.js';
import { ApiEnvelope, ApiPage, ApiRowIdParam } from '../core/http/openapi.js';
import { ClientGone } from '../core/http/client-gone.js';
import type { Page } from '../core/rows/page.js';
import { EventFeedView } from './dto/event-feed.view.js';
import { EventsQueryDto } from './dto/events-query.dto.js';
import { EventView } from './dto/event.view.js';
import { EVENT_NOT_FOUND, EventsService } from './events.service.js';
import { RowId } from '../core/http/row-id-param.js';

@ApiTags('webhooks: events')
@ConsoleAuth()
@Roles('member')
@ApiResponse({ status: 401, description: 'No or expired console session (an API key pair is not accepted here)' })
@Controller('webhooks/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ApiOperation({
    operationId: 'listEvents',
    summary: "A business account's stored webhook events: pages newest first, or the feed (after=cursor) oldest first",
    description:
      'Pages (`page`, `limit`): newest first, for browsing. Feed (`after`, `limit`, optional `wait`): oldest first in the order events became visible, ' +
      'with `nextCursor`; start with `after=0` and pass each `nextCursor` back: every event of the account exactly once, even when workers commit ' +
      'out of id order. With `wait` (seconds, up to 30) an empty feed waits for the next event. Filters apply to both forms.',
  })
  @ApiPage(EventView, {
    or: EventFeedView,
    description:
      'Pages: `data: {items: Event[], page, limit, total, totalPages}`. Feed (`after` given): `data: {items: Event[], nextCursor, limit}`',
  })
  @ApiResponse({ status: 404, description: 'Business account not found (or not of this organization)' })
  @ApiResponse({
    status: 422,
    description:
      'Field Validation Failed (wabaId missing, page/limit out of range, unknown kind, malformed since/until, userId over 160 characters, `after` malformed or not a cursor of this wabaId, `after` with `page`, `wait` out of 0–30 or without `after`)',
  })
  @ApiResponse({
    status: 429,
    description:
      'Too many long polls waiting for this organization (LONG_POLLS_PER_ORGANIZATION), this session (LONG_POLLS_PER_SESSION) or on this server (Retry-After)',
  })
  list(
    @CurrentOperator() operator: ConsoleScope,
    @Query() query: EventsQueryDto,
    @ClientGone() gone: AbortSignal,
  ): Promise<Page<EventView> | EventFeedView> {
    return this.events.list(operator, query, gone);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getEvent', summary: 'One stored event, with the raw upstream item' })
  @ApiRowIdParam('The event id')
  @ApiEnvelope(EventView)
  @ApiResponse({ status: 404, description: 'Event not found (or not of a business account of this organization)' })
  get(@CurrentOperator() operator: ConsoleScope, @RowId(EVENT_NOT_FOUND) id: number): Promise<EventView> {
    return this.events.get(operator.organizationId, id);
  }
}
