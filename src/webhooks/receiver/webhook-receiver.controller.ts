import { Controller, Get, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../auth/auth.decorators.js';
import { RawResponse } from '../../core/http/envelope.interceptor.js';
import { ApiEnvelope } from '../../core/http/openapi.js';
import { WebhookReceivedView } from './webhook-received.view.js';
import { WebhookReceiverService } from './webhook-receiver.service.js';

/** Meta's callback URL. Public: Meta authenticates with the verify token (GET) and the body's HMAC (POST). */
@ApiTags('webhooks: receiver')
@Public()
@Controller('webhooks/whatsapp')
export class WebhookReceiverController {
  constructor(private readonly receiver: WebhookReceiverService) {}

  @Get()
  @RawResponse()
  @ApiOperation({
    operationId: 'verifyWebhookSubscription',
    summary: "Meta's subscription handshake: answers hub.challenge as text/plain when the verify token matches",
  })
  @ApiQuery({ name: 'hub.mode', example: 'subscribe' })
  @ApiQuery({ name: 'hub.verify_token' })
  @ApiQuery({ name: 'hub.challenge', example: '1158201444' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'The hub.challenge value, as the raw body', schema: { type: 'string' } })
  @ApiResponse({ status: 403, description: 'Wrong mode or verify token' })
  verify(@Req() req: Request, @Res() res: Response): void {
    const challenge = this.receiver.verifySubscription(new URL(req.originalUrl, 'http://receiver').searchParams);
    res.status(200).type('text/plain').setHeader('x-content-type-options', 'nosniff');
    res.send(challenge);
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'receiveWebhook',
    summary:
      'Webhook events from Meta: verified over the raw bytes, stored durably, acknowledged at once, processed asynchronously',
    description:
      'Concurrent deliveries are stored together (group commit: one INSERT per WEBHOOK_BATCH_WINDOW_MS window); each request is answered 200 only after the commit that holds its delivery, and every request of a batch that could not be stored is answered 503 with nothing stored. A missing or malformed signature header is answered 401 before the body is read. A delivery with entries of several business accounts is stored as one delivery per account. Served by a node:http fast path in front of the framework (WEBHOOK_FAST_PATH) with the same answers as documented here.',
  })
  @ApiHeader({
    name: 'x-hub-signature-256',
    required: true,
    description: 'sha256=<hex HMAC-SHA256 of the raw body with the app secret>',
  })
  @ApiBody({
    description: 'Meta webhook payload (object whatsapp_business_account, entry[])',
    schema: { type: 'object' },
  })
  @ApiEnvelope(WebhookReceivedView, { description: 'Stored durably (committed); processed asynchronously' })
  @ApiResponse({ status: 400, description: 'Not JSON, not a whatsapp_business_account object, or no entry array' })
  @ApiResponse({ status: 401, description: 'Missing or wrong X-Hub-Signature-256; nothing stored' })
  @ApiResponse({ status: 413, description: 'Body over the webhook size limit (3 MB)' })
  @ApiResponse({
    status: 503,
    description: 'The delivery (its whole batch) could not be stored; nothing of it was stored, Meta retries',
  })
  receive(
    @Req() req: Request,
    @Headers('x-hub-signature-256') signature: string | undefined,
  ): Promise<WebhookReceivedView> {
    return this.receiver.receive(req.rawBody, signature);
  }
}
