import { Body, Controller, Get, Headers, HttpCode, Param, ParseIntPipe, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiErrors, ApiPage, ApiRowIdParam } from '../core/http/openapi.js';
import type { Response } from 'express';
import { ApiKeyAuth } from '../auth/auth.decorators.js';
import { CurrentApiKey, type ApiKeyScope } from '../auth/request-scope.js';
import { FieldValidationError } from '../core/http/api-error.js';
import { RawResponse } from '../core/http/envelope.interceptor.js';
import { toPage, type Page } from '../core/http/pagination.js';
import { AnalyticsDoc } from './dto/analytics.view.js';
import { AnalyticsQuery, ListMessagesQuery } from './dto/list-messages.query.js';
import { ButtonActionDto, CtaUrlActionDto, ListActionDto } from './dto/message-content.dto.js';
import { SendMessageDto } from './dto/send-message.dto.js';
import { SEND_MESSAGE_BODY, SEND_MESSAGE_SCHEMAS } from './dto/send-message.schemas.js';
import { MessageDetailView, MessageListItemView, MessageView, toMessageListItem } from './message.view.js';
import { AnalyticsService, type Analytics } from './query/analytics.service.js';
import { MessagesRepository } from './messages.repository.js';
import { MessageDetails } from './query/message-details.service.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { IdempotencyService, IDEMPOTENCY_HEADER } from './send/idempotency.service.js';
import { SendMessageService } from './send/send-message.service.js';


@ApiTags('messages')
@ApiKeyAuth()
@ApiExtraModels(...SEND_MESSAGE_SCHEMAS, ButtonActionDto, ListActionDto, CtaUrlActionDto)
@UseGuards(RateLimitGuard)
@ApiResponse({ status: 401, description: '`API key headers missing`, or `Invalid API key` (unknown, wrong secret, revoked, or its business account disconnected)' })
@ApiResponse({ status: 429, description: 'Rate limit of the key pair, or of its business account over all its key pairs, exceeded; see Retry-After and RateLimit-* headers' })
@Controller('messages')
export class MessagesController {
  constructor(
    private readonly sender: SendMessageService,
    private readonly messages: MessagesRepository,
    private readonly analytics: AnalyticsService,
    private readonly details: MessageDetails,
  ) {}

  @Post()
  @HttpCode(200)
  @RawResponse()
  @ApiOperation({
    operationId: 'sendMessage',
    summary: 'Send a message: a template at any time; text, media, location, contacts, interactive or a reaction inside the 24 h customer service window',
    description:
      'Every attempt is stored. A synchronous upstream rejection answers with the stored `failed` message in `data` and the upstream error in `data.error`. ' +
      'With `Idempotency-Key`, the same key and body within 24 h replays the first answer (header `Idempotent-Replayed: true`) without a second send; ' +
      '429 and 502 answers are not kept, so a retry with the same key sends again.',
  })
  @ApiBody(SEND_MESSAGE_BODY)
  @ApiHeader({ name: IDEMPOTENCY_HEADER, required: false, description: '1–255 visible ASCII characters, scoped to the key pair, kept 24 h' })
  @ApiEnvelope(MessageView, {
    description: 'Accepted by the upstream platform: status `sent` (or later, when a status webhook for it arrived while a timed-out call was still pending)',
  })
  @ApiResponse({ status: 409, description: 'A request with this Idempotency-Key is still in progress' })
  @ApiErrors(
    {
      422: 'Field Validation Failed (body, pre-send checks: phoneNumberId, templateName, templateLanguage, components (incl. a media header the template needs), to (24 h window for every type but template), Idempotency-Key): nothing stored, no `data`. Or a permanent upstream rejection: the stored `failed` message in `data`, the upstream error in `data.error`',
      424: "The business account cannot send, answered before anything is stored or sent (no `data`): Meta's own state forbids it (the account is disabled, ban state DISABLE; the number is FLAGGED or RESTRICTED; a restriction in force: RESTRICTED_BIZ_INITIATED_MESSAGING for templates, RESTRICTED_CUSTOMER_INITIATED_MESSAGING for the other types) or the account's token is marked rejected (`credentialsValid: false`: replace it in the console). Or the upstream platform rejected the credential or blocked the account on this send: the stored `failed` message in `data`. The message names the reason",
      429: 'Rate limit of the key pair or of its business account exceeded (no `data`; see Retry-After and RateLimit-* headers), or the upstream platform\'s rate limit: the stored `failed` message in `data`, Retry-After when Meta gives one',
      502: 'Upstream platform unavailable or timed out: the failed attempt in `data` (on a timeout the outcome is unknown: a later status webhook can still move it forward)',
    },
    { data: MessageView },
  )
  async send(
    @CurrentApiKey() scope: ApiKeyScope,
    @Body() dto: SendMessageDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const outcome = await this.sender.send(scope, dto, IdempotencyService.validateKey(idempotencyKey));
    for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
    res.status(outcome.statusCode).json(outcome.body);
  }

  @Get()
  @ApiOperation({ operationId: 'listMessages', summary: 'List messages of the key’s business account, newest first' })
  @ApiPage(MessageListItemView)
  @ApiResponse({ status: 422, description: 'Field Validation Failed (filters, page, limit 1–100)' })
  async list(@CurrentApiKey() scope: ApiKeyScope, @Query() query: ListMessagesQuery): Promise<Page<MessageListItemView>> {
    const { rows, total } = await this.messages.list(scope.businessAccountId, query);
    return toPage(rows.map(toMessageListItem), total, query);
  }

  @Get('analytics')
  @ApiOperation({ operationId: 'getMessageAnalytics', summary: 'Delivery, read and failure figures over a period (default the last 7 days)' })
  @ApiEnvelope(AnalyticsDoc)
  @ApiResponse({ status: 422, description: 'Field Validation Failed (since, until, granularity)' })
  stats(@CurrentApiKey() scope: ApiKeyScope, @Query() query: AnalyticsQuery): Promise<Analytics> {
    return this.analytics.compute(scope.businessAccountId, query);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getMessage', summary: 'One message with its status history and failure reason' })
  @ApiRowIdParam('The message id')
  @ApiEnvelope(MessageDetailView)
  @ApiResponse({ status: 404, description: 'Message not found (or not of this business account)' })
  @ApiResponse({ status: 422, description: 'id is not an integer' })
  async get(
    @CurrentApiKey() scope: ApiKeyScope,
    @Param('id', new ParseIntPipe({ exceptionFactory: () => FieldValidationError.of('id', 'id must be an integer') })) id: number,
  ): Promise<MessageDetailView> {
    return this.details.get(scope, id);
  }
}
