/**
 * Meta's media limits per message type (what `POST /{phone-number-id}/media` and the send of each type
 * accept): the MIME types and the largest file. Anything else is refused before the upstream is called.
 */
export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

const MB = 1024 * 1024;

export const MEDIA_LIMITS: Record<MediaKind, { maxBytes: number; mimeTypes: string[] }> = {
  image: { maxBytes: 5 * MB, mimeTypes: ['image/jpeg', 'image/png'] },
  video: { maxBytes: 16 * MB, mimeTypes: ['video/mp4', 'video/3gpp'] },
  audio: { maxBytes: 16 * MB, mimeTypes: ['audio/aac', 'audio/amr', 'audio/mpeg', 'audio/mp4', 'audio/ogg'] },
  document: {
    maxBytes: 100 * MB,
    mimeTypes: [
      'text/plain',
      'application/pdf',
      'application/msword',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/vnd.ms-excel',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/vnd.ms-powerpoint',
      'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    ],
  },
  sticker: { maxBytes: 500 * 1024, mimeTypes: ['image/webp'] },
};

/** For a part sent as application/octet-stream: the type its file name says. */
const BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  mp4: 'video/mp4',
  '3gp': 'video/3gpp',
  aac: 'audio/aac',
  amr: 'audio/amr',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  opus: 'audio/ogg',
  txt: 'text/plain',
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

const BY_MIME = new Map(
  Object.entries(MEDIA_LIMITS).flatMap(([kind, rule]) =>
    rule.mimeTypes.map((mime) => [mime, { kind: kind as MediaKind, mimeType: mime, maxBytes: rule.maxBytes }] as const),
  ),
);

export type MediaRule = { kind: MediaKind; mimeType: string; maxBytes: number };

/** The rule for an uploaded part, from its Content-Type (parameters ignored) or, when generic, its file name. */
export function mediaRuleFor(contentType: string, filename: string | undefined): MediaRule | undefined {
  let mime = contentType.split(';')[0]!.trim().toLowerCase();
  if (mime === 'application/octet-stream' || mime === '')
    mime = BY_EXTENSION[(filename ?? '').split('.').pop()!.toLowerCase()] ?? mime;
  return BY_MIME.get(mime);
}

export const SUPPORTED_MEDIA = Object.entries(MEDIA_LIMITS)
  .map(
    ([kind, rule]) =>
      `${kind} ${rule.mimeTypes.map((m) => m.split('/')[1]).join('/')} ≤ ${rule.maxBytes >= MB ? `${rule.maxBytes / MB} MB` : `${rule.maxBytes / 1024} KB`}`,
  )
  .join('; ');
