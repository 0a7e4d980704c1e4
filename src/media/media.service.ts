import { Injectable } from '@nestjs/common';
import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import { AccountCredentials } from '../accounts/credentials/account-credentials.js';
import { PhoneNumbersRepository } from '../accounts/phone-numbers/phone-numbers.repository.js';
import { InvalidInput, NotFound, TooLarge } from '../core/errors/domain-errors.js';
import { UpstreamError } from '../upstream/upstream.error.js';
import { WhatsAppClient } from '../upstream/whatsapp.client.js';
import { mediaRuleFor, SUPPORTED_MEDIA } from './media-limits.js';

export interface UploadedMedia {
  id: string;
  mimeType: string;
  size: number;
}

export interface MediaDownload {
  stream: Readable;
  contentType: string;
  contentLength?: number;
}

/** What a multipart body may add around the file (boundaries, part headers) before its length says "too large". */
const MULTIPART_SLACK = 16 * 1024;
const MEDIA_ID = /^\d{1,32}$/;

/**
 * Media of a business account on Meta: uploads streamed through to Meta after the type and size checks, and
 * downloads of media Meta holds (inbound media), streamed back without the token or Meta's URL.
 */
@Injectable()
export class MediaService {
  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly phoneNumbers: PhoneNumbersRepository,
    private readonly credentials: AccountCredentials,
    private readonly upstream: WhatsAppClient,
  ) {}

  async upload(organizationId: string, wabaId: string, phoneNumberId: string, req: IncomingMessage): Promise<UploadedMedia> {
    const account = await this.accounts.getConnected(organizationId, wabaId);
    const number = MEDIA_ID.test(phoneNumberId) ? await this.phoneNumbers.sendState(account.id, phoneNumberId) : null;
    if (!number) {
      req.resume();
      throw new NotFound('Phone number not found (sync phone numbers in the console)');
    }
    return this.streamUpload(this.credentials.open(account), phoneNumberId, req);
  }

  async download(organizationId: string, wabaId: string, mediaId: string): Promise<MediaDownload> {
    const account = await this.accounts.getConnected(organizationId, wabaId);
    if (!MEDIA_ID.test(mediaId)) throw new NotFound('Media not found');
    const token = this.credentials.open(account);
    try {
      const info = await this.upstream.getMedia(token, mediaId);
      return await this.upstream.downloadMedia(token, info.url);
    } catch (error) {
      // Meta answers an unknown, expired or other account's media id with 100 (object does not exist).
      if (error instanceof UpstreamError && (error.code === 100 || error.httpStatus === 404)) throw new NotFound('Media not found (unknown or expired)');
      throw error;
    }
  }

  /** One file part `file`, checked by type and declared size before the upstream call, counted while it streams. */
  private streamUpload(token: string, phoneNumberId: string, req: IncomingMessage): Promise<UploadedMedia> {
    const declared = Number(req.headers['content-length']);
    return new Promise<UploadedMedia>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: req.headers, limits: { files: 1, fields: 10, fieldSize: 1024 } });
      } catch {
        req.resume();
        return reject(InvalidInput.of('file', 'the body must be multipart/form-data with the file in field file'));
      }
      let refusal: Error | undefined;
      let upload: Promise<UploadedMedia> | undefined;
      let tooLarge: TooLarge | undefined;
      parser.on('file', (name, file, info) => {
        if (upload || refusal || name !== 'file') return void file.resume();
        const rule = mediaRuleFor(info.mimeType, info.filename);
        if (!rule) {
          refusal = InvalidInput.of('file', `file type ${info.mimeType}${info.filename ? ` (${info.filename})` : ''} is not supported; supported: ${SUPPORTED_MEDIA}`);
          return void file.resume();
        }
        const over = new TooLarge('file', `a ${rule.kind} (${rule.mimeType}) may be at most ${rule.maxBytes} bytes`);
        if (Number.isFinite(declared) && declared > rule.maxBytes + MULTIPART_SLACK) {
          refusal = over;
          return void file.resume();
        }
        let size = 0;
        const counted = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            size += chunk.length;
            if (size > rule.maxBytes) {
              tooLarge = over;
              return done(over);
            }
            done(null, chunk);
          },
        });
        counted.on('error', () => {
          file.unpipe(counted);
          file.resume();
        });
        file.pipe(counted);
        const filename = info.filename || `upload.${rule.mimeType.split('/')[1]}`;
        upload = this.upstream.uploadMedia(token, phoneNumberId, { stream: counted, mimeType: rule.mimeType, filename }).then((id) => ({ id, mimeType: rule.mimeType, size }));
        upload.catch(() => file.resume());
      });
      parser.on('error', () => reject(InvalidInput.of('file', 'the multipart body could not be read')));
      parser.on('close', () => {
        if (refusal) return reject(refusal);
        if (!upload) return reject(InvalidInput.of('file', 'file is required (multipart field file)'));
        upload.then(resolve, (error: unknown) => reject(tooLarge ?? error));
      });
      req.pipe(parser);
    });
  }
}
