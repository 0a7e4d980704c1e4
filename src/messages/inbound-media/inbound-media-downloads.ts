import { Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { BusinessAccountsRepository } from '../../accounts/business-accounts/business-accounts.repository.js';
import { AccountCredentials } from '../../accounts/business-accounts/account-credentials.js';
import { AppConfig } from '../../core/config/app-config.js';
import { PerKeySlots } from '../../core/async/per-key-slots.js';
import { Gone, NotFound, TooManyAttempts } from '../../core/errors/domain-errors.js';
import { UpstreamError } from '../../upstream/upstream.error.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { MessagesRepository } from '../messages.repository.js';
import { inboundMediaOf, InboundMediaLinks } from './inbound-media-links.js';

export const MEDIA_LINK_NOT_FOUND = 'Media link not found';

/** An open download: the bytes from Meta and what to say about them; `done` gives the account's slot back. */
export interface InboundMediaFile {
  stream: Readable;
  contentType: string;
  contentLength?: number;
  filename: string | null;
  done(): void;
}

/**
 * The bytes behind a signed inbound-media link (InboundMediaLinks), streamed from Meta with the account's token:
 * the link is checked first (forged or altered → 404, expired → 410, before any query), then the message must
 * still be that account's inbound media message, then Meta is asked for its short-lived URL and the file.
 * At most MEDIA_DOWNLOADS_PER_ACCOUNT downloads of one account run at once in a process (429 beyond).
 *
 * Kept beside media/media.service.ts's console download on purpose (that file is being reworked: abort on client
 * disconnect, its own HTTP agent, per-organization caps); both end in WhatsAppClient.getMedia + downloadMedia.
 */
@Injectable()
export class InboundMediaDownloads {
  private readonly slots: PerKeySlots;

  constructor(
    private readonly links: InboundMediaLinks,
    private readonly messages: MessagesRepository,
    private readonly accounts: BusinessAccountsRepository,
    private readonly credentials: AccountCredentials,
    private readonly upstream: WhatsAppClient,
    config: AppConfig,
  ) {
    this.slots = new PerKeySlots(config.mediaDownloadsPerAccount);
  }

  async open(token: string, signal: AbortSignal = new AbortController().signal): Promise<InboundMediaFile> {
    const check = this.links.verify(token);
    if (!check.ok)
      throw check.reason === 'expired'
        ? new Gone('Media link expired: read the message again (GET /messages/:id) for a fresh link')
        : new NotFound(MEDIA_LINK_NOT_FOUND);
    const { businessAccountId, messageId } = check.target;
    const release = this.slots.take(businessAccountId);
    if (!release)
      throw new TooManyAttempts(
        `Too many media downloads of this business account at once (at most ${this.slots.limit}); try again shortly`,
        1,
      );
    try {
      const message = await this.messages.findOne(businessAccountId, messageId);
      const media = message && inboundMediaOf(message);
      const credential = media ? await this.accounts.findCredential(businessAccountId) : null;
      if (!media || !credential) throw new NotFound(MEDIA_LINK_NOT_FOUND);
      const accessToken = this.credentials.open(credential);
      const file = await this.fetch(accessToken, media.id, messageId, signal);
      file.stream.once('close', release);
      return { ...file, contentType: media.mimeType ?? file.contentType, filename: media.filename, done: release };
    } catch (err) {
      release();
      throw err;
    }
  }

  private async fetch(accessToken: string, mediaId: string, messageId: number, signal: AbortSignal) {
    try {
      const info = await this.upstream.getMedia(accessToken, mediaId);
      return await this.upstream.downloadMedia(accessToken, info.url, signal);
    } catch (error) {
      // Meta answers an unknown or expired media id with 100 (object does not exist) or a 404.
      if (error instanceof UpstreamError && (error.code === 100 || error.httpStatus === 404)) {
        throw new NotFound(
          `Media ${mediaId} of message ${messageId} is no longer available from the upstream platform (inbound media is kept about 7 days)`,
        );
      }
      throw error;
    }
  }
}
