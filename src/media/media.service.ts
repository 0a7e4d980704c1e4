import { Injectable } from '@nestjs/common';
import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Transform, type Readable } from 'node:stream';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import { AccountCredentials } from '../accounts/business-accounts/account-credentials.js';
import { PhoneNumbersRepository } from '../accounts/phone-numbers/phone-numbers.repository.js';
import { SlotQuota } from '../core/async/slot-quota.js';
import { AppConfig } from '../core/config/app-config.js';
import { InvalidInput, NotFound, TimedOut, TooLarge } from '../core/errors/domain-errors.js';
import { AuditService } from '../audit/audit.service.js';
import type { ConsoleScope } from '../auth/request-scope.js';
import { withArticle } from '../core/contract/validation.js';
import { UpstreamError } from '../upstream/upstream.error.js';
import { WhatsAppClient } from '../upstream/whatsapp.client.js';
import { MEDIA_LIMITS, mediaRuleFor, SUPPORTED_MEDIA } from './media-limits.js';
import { SIGNATURE_BYTES, signatureMismatch } from './media-signatures.js';

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
/** No upload body is read past this, whatever it holds: Meta's largest file (a document) and the multipart around it. */
const BODY_HARD_LIMIT = Math.max(...Object.values(MEDIA_LIMITS).map((rule) => rule.maxBytes)) + MULTIPART_SLACK;
const MEDIA_ID = /^\d{1,32}$/;
/** How long a connection closed with an unread body keeps dropping what arrives, so its answer is read first. */
const LINGER_MS = 2000;

/**
 * Media of a business account on Meta: uploads streamed through to Meta after the type and size checks, and
 * downloads of media Meta holds (inbound media), streamed back without the token or Meta's URL.
 *
 * A transfer holds an upstream socket (media's own pool, never the one sends use) for as long as it runs, so each
 * is bounded: a share per organization (429 past it), an idle timeout and an overall deadline, a hard limit on
 * the request body, and an abort of the upstream call on every way out (the client went away, a limit, an error).
 */
@Injectable()
export class MediaService {
  private readonly transfers: SlotQuota<'organization'>;
  private readonly idleMs: number;
  private readonly deadlineMs: number;

  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly phoneNumbers: PhoneNumbersRepository,
    private readonly credentials: AccountCredentials,
    private readonly upstream: WhatsAppClient,
    private readonly audit: AuditService,
    config: AppConfig,
  ) {
    this.transfers = new SlotQuota({
      total: config.mediaMaxTransfers,
      per: { organization: config.mediaMaxTransfersPerOrganization },
      what: 'media transfers',
    });
    this.idleMs = config.mediaIdleTimeoutMs;
    this.deadlineMs = config.mediaDeadlineMs;
  }

  async upload(
    operator: ConsoleScope,
    wabaId: string,
    phoneNumberId: string,
    req: IncomingMessage,
    gone: AbortSignal,
  ): Promise<UploadedMedia> {
    const { organizationId } = operator;
    let release: (() => void) | undefined;
    try {
      release = this.transfers.acquire({ organization: organizationId });
      const account = await this.accounts.getConnected(organizationId, wabaId);
      const number = MEDIA_ID.test(phoneNumberId) ? await this.phoneNumbers.sendState(account.id, phoneNumberId) : null;
      if (!number) throw new NotFound('Phone number not found (sync phone numbers in the console)');
      const media = await this.streamUpload(this.credentials.open(account), phoneNumberId, req, gone);
      // Who moved which file through the service (audit 3, finding 10).
      await this.audit.record(
        operator,
        'media.uploaded',
        { type: 'media', id: media.id },
        { wabaId, phoneNumberId, mimeType: media.mimeType, size: media.size },
      );
      return media;
    } catch (error) {
      if (req.readableFlowing === null) this.discard(req, 0);
      throw error;
    } finally {
      release?.();
    }
  }

  async download(operator: ConsoleScope, wabaId: string, mediaId: string, gone: AbortSignal): Promise<MediaDownload> {
    const { organizationId } = operator;
    const release = this.transfers.acquire({ organization: organizationId });
    const abort = new AbortController();
    const deadline = setTimeout(() => abort.abort(), this.deadlineMs);
    const stop = () => abort.abort();
    gone.addEventListener('abort', stop, { once: true });
    const done = () => {
      clearTimeout(deadline);
      gone.removeEventListener('abort', stop);
      release();
    };
    try {
      const account = await this.accounts.getConnected(organizationId, wabaId);
      if (!MEDIA_ID.test(mediaId)) throw new NotFound('Media not found');
      const token = this.credentials.open(account);
      const info = await this.upstream.getMedia(token, mediaId);
      const file = await this.upstream.downloadMedia(token, info.url, abort.signal);
      await this.audit.record(
        operator,
        'media.downloaded',
        { type: 'media', id: mediaId },
        {
          wabaId,
          mimeType: file.contentType,
          ...(file.contentLength !== undefined ? { size: file.contentLength } : {}),
        },
      );
      // The slot is held until the last byte is sent back or the transfer is cut short (client gone, deadline).
      file.stream.once('close', done);
      abort.signal.addEventListener('abort', () => file.stream.destroy(), { once: true });
      return file;
    } catch (error) {
      done();
      // Meta answers an unknown, expired or other account's media id with 100 (object does not exist).
      if (error instanceof UpstreamError && (error.code === 100 || error.httpStatus === 404))
        throw new NotFound('Media not found (unknown or expired)');
      throw error;
    }
  }

  /**
   * One file part `file`, checked by type and declared size before the upstream call, counted while it streams.
   * A refusal found while the file streams (too large, too slow, the client gone) is answered at once and
   * aborts the upstream upload; the rest of the body is discarded, never parsed (see discard()).
   */
  private streamUpload(
    token: string,
    phoneNumberId: string,
    req: IncomingMessage,
    gone: AbortSignal,
  ): Promise<UploadedMedia> {
    const declared = Number(req.headers['content-length']);
    const abort = new AbortController();
    return new Promise<UploadedMedia>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: req.headers, limits: { files: 1, fields: 10, fieldSize: 1024 } });
      } catch {
        return reject(InvalidInput.of('file', 'the body must be multipart/form-data with the file in field file'));
      }
      let settled = false;
      let refusal: Error | undefined;
      let upload: Promise<UploadedMedia> | undefined;
      let counted: Transform | undefined;
      let bodyLimit = BODY_HARD_LIMIT;
      let bodyOver = new TooLarge('file', `the request body may be at most ${BODY_HARD_LIMIT} bytes`);
      let received = 0;
      const idle = setTimeout(
        () => stop(new TimedOut(`No bytes of the body received for ${this.idleMs} ms`)),
        this.idleMs,
      );
      const deadline = setTimeout(
        () => stop(new TimedOut(`The upload took longer than ${this.deadlineMs} ms`)),
        this.deadlineMs,
      );
      const onData = (chunk: Buffer) => {
        received += chunk.length;
        idle.refresh();
        if (received > bodyLimit) stop(bodyOver);
      };
      const dropped = () => stop(new TimedOut('The client went away'));
      const settle = (outcome: () => void) => {
        if (settled) return false;
        settled = true;
        clearTimeout(idle);
        clearTimeout(deadline);
        gone.removeEventListener('abort', dropped);
        req.off('data', onData);
        outcome();
        return true;
      };
      /** Ends the upload now: the upstream call is aborted and the rest of the body is discarded. */
      const stop = (error: Error) => {
        if (!settle(() => reject(error))) return;
        abort.abort();
        counted?.destroy();
        req.unpipe(parser);
        this.discard(req, received);
      };
      gone.addEventListener('abort', dropped, { once: true });
      req.on('data', onData);

      parser.on('file', (name, file, info) => {
        if (upload || refusal || name !== 'file') return void file.resume();
        const rule = mediaRuleFor(info.mimeType, info.filename);
        if (!rule) {
          refusal = InvalidInput.of(
            'file',
            `file type ${info.mimeType}${info.filename ? ` (${info.filename})` : ''} is not supported; supported: ${SUPPORTED_MEDIA}`,
          );
          return void file.resume();
        }
        const over = new TooLarge(
          'file',
          `${withArticle(rule.kind)} (${rule.mimeType}) may be at most ${rule.maxBytes} bytes`,
        );
        if (Number.isFinite(declared) && declared > rule.maxBytes + MULTIPART_SLACK) {
          refusal = over;
          return void file.resume();
        }
        // Everything else in the body (other parts, a second file) counts against what this file may take.
        bodyLimit = rule.maxBytes + MULTIPART_SLACK;
        bodyOver = new TooLarge(
          'file',
          `${over.fields![0]!.message}; the whole request body at most ${bodyLimit} bytes`,
        );
        let size = 0;
        // The first SIGNATURE_BYTES are held until they are all here (or the file ends), then checked against the
        // declared type; the upstream upload is already open and simply receives them a moment later.
        let head: Buffer | undefined = Buffer.alloc(0);
        const checked = (bytes: Buffer): Error | undefined => {
          const mismatch = signatureMismatch(rule.mimeType, bytes);
          return mismatch === undefined ? undefined : InvalidInput.of('file', mismatch);
        };
        counted = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            size += chunk.length;
            if (size > rule.maxBytes) return done(over);
            if (head === undefined) return done(null, chunk);
            head = Buffer.concat([head, chunk]);
            if (head.length < SIGNATURE_BYTES) return done();
            const held = head;
            head = undefined;
            done(checked(held), held);
          },
          flush(done) {
            if (head === undefined) return done();
            done(checked(head), head);
          },
        });
        counted.on('error', (error) => stop(error));
        file.pipe(counted);
        const filename = info.filename || `upload.${rule.mimeType.split('/')[1]}`;
        upload = this.upstream
          .uploadMedia(token, phoneNumberId, { stream: counted, mimeType: rule.mimeType, filename }, abort.signal)
          .then((id) => ({ id, mimeType: rule.mimeType, size }));
        upload.catch((error: unknown) => stop(error instanceof Error ? error : new Error(String(error))));
      });
      parser.on('error', () => stop(InvalidInput.of('file', 'the multipart body could not be read')));
      parser.on('close', () => {
        const refused = refusal;
        if (refused) return void settle(() => reject(refused));
        if (!upload)
          return void settle(() => reject(InvalidInput.of('file', 'file is required (multipart field file)')));
        // The body is read: from here only Meta's answer (bounded by the deadline) is awaited.
        clearTimeout(idle);
        upload.then(
          (media) => void settle(() => resolve(media)),
          () => undefined,
        );
      });
      req.pipe(parser);
    });
  }

  /**
   * The rest of a body that is not wanted: read and dropped without parsing, never past BODY_HARD_LIMIT in all
   * nor with more than the idle timeout between bytes (then the connection is cut). Node closes a connection
   * whose request was not read to the end right after the answer; closing with unread bytes would reset it and
   * the client could lose the answer, so the close lingers (as nginx's lingering_close): our side is ended,
   * what still arrives is dropped, and the socket is destroyed a little later.
   */
  private discard(req: IncomingMessage, alreadyRead: number): void {
    if (req.complete || req.destroyed) return;
    const socket = req.socket;
    let read = alreadyRead;
    const cut = () => socket.destroy();
    const idle = setTimeout(cut, this.idleMs);
    req.on('data', (chunk: Buffer) => {
      read += chunk.length;
      idle.refresh();
      if (read > BODY_HARD_LIMIT) cut();
    });
    socket.once('close', () => clearTimeout(idle));
    (socket as Socket & { destroySoon(): void }).destroySoon = () => {
      socket.end();
      setTimeout(cut, LINGER_MS).unref();
    };
    req.resume();
  }
}
