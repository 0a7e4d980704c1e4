import busboy from 'busboy';
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimContext } from './context.js';
import type { SimAccount } from './fixture.js';
import { sendMeta } from './http-util.js';
import { type MetaError, metaErrors, whatsappError } from './meta-errors.js';
import { newMediaId } from './meta-json.js';
import type { SimMedia } from './store.js';

const MB = 1024 * 1024;
/** Meta's upload limits by MIME type (see shared/reference/whatsapp-cloud-api.md §6). */
const LIMITS: Record<string, number> = {
  'image/jpeg': 5 * MB,
  'image/png': 5 * MB,
  'image/webp': 500 * 1024,
  'video/mp4': 16 * MB,
  'video/3gpp': 16 * MB,
  'audio/aac': 16 * MB,
  'audio/amr': 16 * MB,
  'audio/mpeg': 16 * MB,
  'audio/mp4': 16 * MB,
  'audio/ogg': 16 * MB,
  'text/plain': 100 * MB,
  'application/pdf': 100 * MB,
  'application/msword': 100 * MB,
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 100 * MB,
  'application/vnd.ms-excel': 100 * MB,
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 100 * MB,
  'application/vnd.ms-powerpoint': 100 * MB,
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 100 * MB,
};

const uploadError = (details: string) => whatsappError(400, 131053, 'Media upload error', details);

export function storeMedia(ctx: SimContext, account: SimAccount, bytes: Buffer, mimeType: string): SimMedia {
  const media = {
    id: newMediaId(),
    wabaId: account.id,
    bytes,
    mimeType,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
  ctx.store.addMedia(media);
  return media;
}

/** `POST /{phone-number-id}/media`: multipart `messaging_product`, `type`, `file` → `{ id }`. */
export async function handleUpload(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  account: SimAccount,
): Promise<void> {
  const fail = (error: MetaError) => sendMeta(res, error.httpStatus, error.body);
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: 100 * MB + 1 } });
  } catch {
    req.resume();
    return fail(metaErrors.invalidParameter('The request must be multipart/form-data.'));
  }
  const fields: Record<string, string> = {};
  let file: { bytes: Buffer; mimeType: string; truncated: boolean } | undefined;
  parser.on('field', (name, value) => (fields[name] = value));
  parser.on('file', (name, stream, info) => {
    if (name !== 'file') return void stream.resume();
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on(
      'end',
      () =>
        (file = {
          bytes: Buffer.concat(chunks),
          mimeType: info.mimeType,
          truncated: (stream as { truncated?: boolean }).truncated === true,
        }),
    );
  });
  await new Promise<void>((resolve) => {
    parser.on('close', resolve);
    parser.on('error', () => resolve());
    req.pipe(parser);
  });
  if (fields.messaging_product !== 'whatsapp')
    return fail(metaErrors.invalidParameter('The parameter messaging_product is required and must be whatsapp.'));
  if (!file) return fail(metaErrors.invalidParameter('The parameter file is required.'));
  const mimeType = fields.type || file.mimeType;
  const limit = LIMITS[mimeType];
  if (limit === undefined)
    return fail(
      uploadError(
        `Param file must be a file with one of the following types: ${Object.keys(LIMITS).join(', ')}. Received file of type '${mimeType}'.`,
      ),
    );
  if (file.truncated || file.bytes.length > limit)
    return fail(uploadError(`File too big: ${mimeType} files are limited to ${limit} bytes.`));
  sendMeta(res, 200, { id: storeMedia(ctx, account, file.bytes, mimeType).id });
}

/** `GET /{media-id}` → `{ url, mime_type, sha256, file_size, id, messaging_product }`, for the owner's token only. */
export function handleMediaInfo(ctx: SimContext, res: ServerResponse, account: SimAccount, mediaId: string): void {
  const media = ctx.store.media(mediaId);
  if (!media || media.wabaId !== account.id) return sendMeta(res, 400, metaErrors.mediaNotFound(mediaId).body);
  sendMeta(res, 200, {
    url: `${ctx.origin()}/_media/${media.id}?ext=${encodeURIComponent(media.mimeType.split('/')[1] ?? 'bin')}`,
    mime_type: media.mimeType,
    sha256: media.sha256,
    file_size: media.bytes.length,
    id: media.id,
    messaging_product: 'whatsapp',
  });
}

/** The download URL: the bytes, only with the owning account's Bearer token (404 otherwise, as Meta's CDN). */
export function handleDownload(ctx: SimContext, req: IncomingMessage, res: ServerResponse, mediaId: string): void {
  const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const account = ctx.store.accountByToken(token);
  const media = ctx.store.media(mediaId);
  if (!account || !media || media.wabaId !== account.id) {
    res.writeHead(404, { 'content-type': 'text/plain' });
    return void res.end('Not Found');
  }
  res.writeHead(200, { 'content-type': media.mimeType, 'content-length': media.bytes.length });
  res.end(media.bytes);
}
