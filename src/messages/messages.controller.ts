import { Body, Controller, Get, Headers, HttpCode, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope, ApiErrors, ApiPage, ApiRowIdParam } from '../core/http/openapi.js';
import type { Response } from 'express';
import { ApiKeyAuth } from '../auth/auth.decorators.js';
import { CurrentApiKey, type ApiKeyScope } from '../auth/request-scope.js';
import { RawResponse } from '../core/http/envelope.interceptor.js';
import { envelope, SUCCESS, type Envelope } from '../core/http/envelope.js';
import { httpAnswerOfKind } from '../core/http/error-mapper.js';
import type { Page } from '../core/rows/page.js';
import { ClientGone } from '../core/http/client-gone.js';
import { AnalyticsDoc } from './dto/analytics.view.js';
import { AnalyticsQuery, ListMessagesQuery } from './dto/list-messages.query.js';
import { INTERACTIVE_ACTION_MODELS } from './types/message-content.dto.js';
import { SendMessageDto } from './dto/send-message.dto.js';
import { SEND_MESSAGE_BODY, SEND_MESSAGE_SCHEMAS } from './dto/send-message.schemas.js';
import { MessageDetailView, MessageListItemView, MessageView, toMessageView } from './message.view.js';
import { AnalyticsService, type Analytics } from './query/analytics.service.js';
import { MessagesFeedView } from './feed/messages-feed.view.js';
import { MessagesList } from './query/messages-list.service.js';
import { MessageDetails } from './query/message-details.service.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { IdempotencyService, IDEMPOTENCY_HEADER } from './send/idempotency.service.js';
import { SendMessageService } from './send/send-message.service.js';
import type { EarlierOutcome, SendOutcome } from './send/send-outcome.js';
import { RowId } from '../core/http/row-id-param.js';
import { MESSAGE_NOT_FOUND } from './query/message-details.service.js';

@ApiTags('messages')
@ApiKeyAuth()
@ApiExtraModels(...SEND_MESSAGE_SCHEMAS, ...INTERACTIVE_ACTION_MODELS)
@UseGuards(RateLimitGuard)
@ApiResponse({
  status: 401,
  description:
    '`API key headers missing` (`errors` names the missing header(s); `Authorization: Bearer` is not used), or `Invalid API key` (unknown, wrong secret, revoked, or its business account disconnected)',
})
@ApiResponse({
  status: 429,
  description:
    'Rate limit of the key pair, or of its business account over all its key pairs, exceeded; or (feed) too many long polls waiting (the business account, the organization or the key pair); see Retry-After and RateLimit-* headers',
})
@Controller('messages')
export class MessagesController {
  constructor(
    private readonly sender: SendMessageService,
    private readonly listing: MessagesList,
    private readonly analytics: AnalyticsService,
    private readonly details: MessageDetails,
  ) {}

  @Post()
  @HttpCode(200)
  @RawResponse()
  @ApiOperation({
    operationId: 'sendMessage',
    summary:
      'Send a message to a phone number (`to`) or a business-scoped user id (`userId`): a template at any time; text, media, location, contacts, interactive or a reaction inside the 24 h customer service window. MARKETING templates of an account onboarded to the Marketing Messages API go through it (`upstreamApi`)',
    description:
      'Every attempt is stored. A synchronous upstream rejection answers with the stored `failed` message in `data` and the upstream error in `data.error`. ' +
      'With `Idempotency-Key`, the same key and body within 24 h replays the first answer (header `Idempotent-Replayed: true`) without a second send; ' +
      '429 and 502 answers are not kept, so a retry with the same key sends again.',
  })
  @ApiBody(SEND_MESSAGE_BODY)
  @ApiHeader({
    name: IDEMPOTENCY_HEADER,
    required: false,
    description: '1–255 visible ASCII characters, scoped to the key pair, kept 24 h',
  })
  @ApiEnvelope(MessageView, {
    description:
      'Accepted by the upstream platform: status `sent` (or later, when a status webhook for it arrived while a timed-out call was still pending)',
  })
  @ApiResponse({ status: 409, description: 'A request with this Idempotency-Key is still in progress' })
  @ApiErrors(
    {
      422: 'Field Validation Failed (body, pre-send checks: phoneNumberId, templateName (incl. one-tap, zero-tap and copy-code authentication templates to a userId), templateLanguage, components (incl. a media header the template needs), to / userId (exactly one of them; a user id given as to; 24 h window for every type but template; the user is blocked on the number; a MARKETING template to a user who stopped marketing messages), Idempotency-Key): nothing stored, no `data`. Or a permanent upstream rejection: the stored `failed` message in `data`, the upstream error in `data.error`',
      424: "The business account cannot send, answered before anything is stored or sent (no `data`): Meta's own state forbids it (the account is disabled, ban state DISABLE; the number is FLAGGED or RESTRICTED; a restriction in force: RESTRICTED_BIZ_INITIATED_MESSAGING for templates, RESTRICTED_CUSTOMER_INITIATED_MESSAGING for the other types) or the account's token is marked rejected (`credentialsValid: false`: replace it in the console). Or the upstream platform rejected the credential or blocked the account on this send: the stored `failed` message in `data`. The message names the reason",
      429: "Rate limit of the key pair or of its business account exceeded (no `data`; see Retry-After and RateLimit-* headers), or the upstream platform's rate limit: the stored `failed` message in `data`, Retry-After when Meta gives one; or the phone number is at its throughput (STANDARD 80/s, HIGH 1,000/s, counted with campaigns) after waiting PACING_MAX_WAIT_MS for a slot, or held back after Meta's 130429: `failed` with category `throughput`, nothing sent upstream, Retry-After",
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
    presentSend(res, await this.sender.send(scope, dto, IdempotencyService.validateKey(idempotencyKey)));
  }

  @Get()
  @ApiOperation({
    operationId: 'listMessages',
    summary:
      "Messages of the key's business account, sent and received: pages newest first, or the feed (after=cursor) oldest first",
    description:
      'Pages (`page`, `limit`, filters): newest first, with a total counted in the same snapshot. Feed (`after`, `limit`, optional `wait`): every message created ' +
      'or changed (status, error, pricing) after the cursor, oldest first, each in its current state, with `nextCursor`; start with `after=0` and pass each ' +
      '`nextCursor` back: nothing is skipped and nothing repeats, even under concurrent writers. With `wait` (seconds, up to 30) an empty feed waits for ' +
      'the next change (a new inbound message, a status). Filters apply to both forms. Inbound media messages carry `media.url`, a signed link to the bytes.\n\n' +
      'Following the feed:\n\n' +
      '```\ncurl -H "x-access-key: $ACCESS_KEY" -H "x-secret-key: $SECRET_KEY" "https://api.example.com/messages?after=0&limit=100"\n' +
      'curl -H "x-access-key: $ACCESS_KEY" -H "x-secret-key: $SECRET_KEY" "https://api.example.com/messages?after=$NEXT_CURSOR&wait=25"\n```',
  })
  @ApiPage(MessageListItemView, {
    or: MessagesFeedView,
    description:
      'Pages: `data: {items: Message[], page, limit, total, totalPages}`. Feed (`after` given): `data: {items: Message[], nextCursor, limit}`',
  })
  @ApiResponse({
    status: 422,
    description:
      'Field Validation Failed (filters, unknown direction, page, limit 1–100, `after` malformed or a cursor of another business account, `after` with `page`, `wait` out of 0–30 or without `after`)',
  })
  list(
    @CurrentApiKey() scope: ApiKeyScope,
    @Query() query: ListMessagesQuery,
    @ClientGone() gone: AbortSignal,
  ): Promise<Page<MessageListItemView> | MessagesFeedView> {
    return this.listing.list(
      { ...scope, owner: { organization: scope.organizationId, session: `key:${scope.apiKeyId}` } },
      query,
      gone,
    );
  }

  @Get('analytics')
  @ApiOperation({
    operationId: 'getMessageAnalytics',
    summary: 'Delivery, read and failure figures over a period (default the last 7 days)',
  })
  @ApiEnvelope(AnalyticsDoc)
  @ApiResponse({ status: 422, description: 'Field Validation Failed (since, until, granularity)' })
  stats(@CurrentApiKey() scope: ApiKeyScope, @Query() query: AnalyticsQuery): Promise<Analytics> {
    return this.analytics.compute(scope.businessAccountId, query, scope.window);
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getMessage',
    summary:
      'One message, sent or received, with its status history and failure reason (read in one snapshot); inbound media with a signed link to its bytes',
  })
  @ApiRowIdParam('The message id')
  @ApiEnvelope(MessageDetailView)
  @ApiResponse({
    status: 404,
    description: 'Message not found (or not of this business account, or the id is no positive integer)',
  })
  async get(@CurrentApiKey() scope: ApiKeyScope, @RowId(MESSAGE_NOT_FOUND) id: number): Promise<MessageDetailView> {
    return this.details.get(scope, id);
  }
}

// The send's presenter: the edge of the send use case, beside the route that answers with it.

/** POST /messages' answer: status, headers and envelope. */
export interface SendAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: Envelope<MessageView>;
}

/**
 * The edge of the send use case: what a send came to, as HTTP. Accepted: 200 with the stored message. Rejected:
 * the status the one error mapper gives its kind (Retry-After when there is a time to come back), the stored
 * `failed` message in `data`. Replayed: the first request's answer again, with `Idempotent-Replayed: true`.
 */
export function sendAnswerOf(outcome: SendOutcome): SendAnswer {
  if (outcome.outcome !== 'replayed') return answerOf(outcome);
  const { statusCode, body } = answerOf(outcome.earlier);
  return { statusCode, headers: { 'Idempotent-Replayed': 'true' }, body };
}

function answerOf(outcome: EarlierOutcome): SendAnswer {
  switch (outcome.outcome) {
    case 'accepted':
      return { statusCode: 200, headers: {}, body: envelope(200, SUCCESS, { data: toMessageView(outcome.message) }) };
    case 'rejected': {
      const answer = httpAnswerOfKind(outcome.reason);
      return {
        statusCode: answer.statusCode,
        headers: answer.headers,
        body: envelope(answer.statusCode, answer.message, { data: toMessageView(outcome.message) }),
      };
    }
  }
}

/** Writes the answer (the send route answers for itself: its status is not always 200, and it sets headers). */
export function presentSend(res: Response, outcome: SendOutcome): void {
  const answer = sendAnswerOf(outcome);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.status(answer.statusCode).json(answer.body);
}
