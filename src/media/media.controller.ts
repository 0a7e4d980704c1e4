import { Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { ConsoleAuth } from '../auth/auth.decorators.js';
import { ClientGone } from '../core/http/client-gone.js';
import { CurrentOperator, type ConsoleScope } from '../auth/request-scope.js';
import { Roles } from '../auth/roles.js';
import { OwnInFlightLimits } from '../auth/tenant-load.interceptor.js';
import { RawResponse } from '../core/http/envelope.interceptor.js';
import { ApiEnvelope } from '../core/http/openapi.js';
import { SUPPORTED_MEDIA } from './media-limits.js';
import { MediaService } from './media.service.js';
import { UploadedMediaView } from './uploaded-media.view.js';

@ApiTags('console: media')
@ConsoleAuth()
@OwnInFlightLimits()
@Roles('member')
@ApiResponse({ status: 401, description: 'No or expired console session' })
@ApiResponse({
  status: 404,
  description: 'Business account (or phone number, or media) not found, or not of this organization',
})
@ApiResponse({
  status: 424,
  description:
    "The upstream platform rejected the business account's credential or blocked the account: reconnect in the console",
})
@ApiResponse({
  status: 429,
  description:
    'Too many media transfers (uploads and downloads) open for this organization (MEDIA_MAX_TRANSFERS_PER_ORGANIZATION) or on this server (Retry-After)',
})
@ApiResponse({ status: 502, description: 'Upstream platform unavailable or timed out' })
@Controller('business-accounts/:wabaId')
export class MediaController {
  constructor(private readonly media: MediaService) {}

  @Post('phone-numbers/:phoneNumberId/media')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'uploadMedia',
    summary: 'Upload a media file to Meta (streamed); its id can be sent as image.id, document.id, …',
    description: `Limits: ${SUPPORTED_MEDIA}.`,
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
  })
  @ApiEnvelope(UploadedMediaView)
  @ApiResponse({
    status: 408,
    description:
      'The body stopped arriving for MEDIA_IDLE_TIMEOUT_MS, or the upload passed MEDIA_DEADLINE_MS; the upstream upload is aborted',
  })
  @ApiResponse({
    status: 413,
    description:
      'file larger than Meta allows for its type, or the whole body larger than that file allows (errors names file); the rest of the body is not read',
  })
  @ApiResponse({
    status: 422,
    description:
      'file missing, of a type Meta does not accept, or whose first bytes are not of its declared type (errors names file)',
  })
  upload(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Param('phoneNumberId') phoneNumberId: string,
    @Req() req: Request,
    @ClientGone() gone: AbortSignal,
  ): Promise<UploadedMediaView> {
    return this.media.upload(operator, wabaId, phoneNumberId, req, gone);
  }

  @Get('media/:mediaId')
  @RawResponse()
  @ApiOperation({
    operationId: 'downloadMedia',
    summary: 'The bytes of a media object Meta holds for the account (inbound media), with its content type',
  })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({
    description: 'The file, streamed (not in the envelope); Content-Type and Content-Length as Meta gives them',
    schema: { type: 'string', format: 'binary' },
  })
  async download(
    @CurrentOperator() operator: ConsoleScope,
    @Param('wabaId') wabaId: string,
    @Param('mediaId') mediaId: string,
    @Res() res: Response,
    @ClientGone() gone: AbortSignal,
  ): Promise<void> {
    const file = await this.media.download(operator, wabaId, mediaId, gone);
    res.status(200).setHeader('Content-Type', file.contentType);
    if (file.contentLength !== undefined) res.setHeader('Content-Length', String(file.contentLength));
    res.setHeader('Cache-Control', 'private, no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Disposition', 'attachment');
    // A caller that goes away mid-file ends the transfer; there is nothing left to answer.
    await pipeline(file.stream, res).catch(() => undefined);
  }
}
