import { ClientGone } from '../../core/http/client-gone.js';
import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { Public } from '../../auth/auth.decorators.js';
import { RawResponse } from '../../core/http/envelope.interceptor.js';
import { INBOUND_MEDIA_PATH } from './inbound-media-links.js';
import { InboundMediaDownloads } from './inbound-media-downloads.js';

/**
 * The bytes of an inbound media message by its signed link (`media.url` of GET /messages/:id): no key headers,
 * the link is the credential. Not one of the key-pair routes: a backend hands the link to its storage job.
 */
@ApiTags('messages')
@Public()
@Controller(INBOUND_MEDIA_PATH.slice(1))
export class InboundMediaController {
  constructor(private readonly downloads: InboundMediaDownloads) {}

  @Get(':token')
  @RawResponse()
  @ApiOperation({
    operationId: 'downloadInboundMedia',
    summary: "The file of an inbound media message, by the signed link in the message's `media.url` (no key headers)",
    description:
      'Streamed from the upstream platform; its token and URL never reach the caller. The link expires minutes after it was given (MEDIA_LINK_TTL_SECONDS).\n\n' +
      '```\nURL=$(curl -s -H "x-access-key: $ACCESS_KEY" -H "x-secret-key: $SECRET_KEY" https://api.example.com/messages/4294967311 | jq -r .data.media.url)\n' +
      'curl -o photo.jpg "$URL"\n```',
  })
  @ApiParam({ name: 'token', description: 'The signed part of `media.url`' })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({
    description: 'The file (not in the envelope), with its content type; Content-Length when the upstream gives it',
    schema: { type: 'string', format: 'binary' },
  })
  @ApiResponse({
    status: 404,
    description:
      'Media link not found (malformed, altered or forged; or the message is gone), or the upstream platform no longer has the media (the message names it)',
  })
  @ApiResponse({ status: 410, description: 'Media link expired: read the message again for a fresh link' })
  @ApiResponse({ status: 429, description: 'Too many downloads of the business account at once (Retry-After)' })
  @ApiResponse({
    status: 424,
    description: "The upstream platform rejected the business account's credential or blocked the account",
  })
  @ApiResponse({ status: 502, description: 'Upstream platform unavailable or timed out' })
  async download(@Param('token') token: string, @Res() res: Response, @ClientGone() gone: AbortSignal): Promise<void> {
    // A caller that goes away aborts the upstream call too (issue 29: no upstream socket held for a dropped client).
    const file = await this.downloads.open(token, gone);
    res.status(200).setHeader('Content-Type', file.contentType);
    if (file.contentLength !== undefined) res.setHeader('Content-Length', String(file.contentLength));
    res.setHeader('Cache-Control', 'private, no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader(
      'Content-Disposition',
      file.filename ? `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}` : 'attachment',
    );
    // A caller that goes away mid-file ends the transfer (and frees the account's download slot).
    await pipeline(file.stream, res)
      .catch(() => undefined)
      .finally(() => file.done());
  }
}
