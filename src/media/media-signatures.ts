/**
 * What an upload's first bytes say it is (issue 37, finding 10): a part declared `image/png` must start like a PNG,
 * so an HTML page or a Windows program is not passed to Meta, and to the customers, under an image's or a
 * document's name. The check reads the first SIGNATURE_BYTES of the file, nothing more.
 */

/** How many leading bytes every signature below needs (WebP's "WEBP" ends at byte 12; a few to spare). */
export const SIGNATURE_BYTES = 16;

const at = (head: Buffer, offset: number, ascii: string) =>
  head.length >= offset + ascii.length && head.toString('latin1', offset, offset + ascii.length) === ascii;
const starts = (head: Buffer, bytes: number[]) => head.length >= bytes.length && bytes.every((b, i) => head[i] === b);

const OLE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const ZIP = [0x50, 0x4b, 0x03, 0x04];
/** ISO base media (MP4, M4A, 3GPP): a box size, then `ftyp`. */
const isoMedia = (h: Buffer) => at(h, 4, 'ftyp');
/** An MPEG audio frame: 11 bits of frame sync. */
const mpegFrame = (h: Buffer) => h.length >= 2 && h[0] === 0xff && (h[1]! & 0xe0) === 0xe0;

const MATCHES: Record<string, (head: Buffer) => boolean> = {
  'image/jpeg': (h) => starts(h, [0xff, 0xd8, 0xff]),
  'image/png': (h) => starts(h, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  'image/webp': (h) => at(h, 0, 'RIFF') && at(h, 8, 'WEBP'),
  'video/mp4': isoMedia,
  'video/3gpp': isoMedia,
  'audio/mp4': isoMedia,
  // ADTS (12 bits of sync, layer 0) or an ADIF header.
  'audio/aac': (h) => (h.length >= 2 && h[0] === 0xff && (h[1]! & 0xf6) === 0xf0) || at(h, 0, 'ADIF'),
  'audio/amr': (h) => at(h, 0, '#!AMR'),
  'audio/mpeg': (h) => at(h, 0, 'ID3') || mpegFrame(h),
  'audio/ogg': (h) => at(h, 0, 'OggS'),
  'application/pdf': (h) => at(h, 0, '%PDF-'),
  'application/msword': (h) => starts(h, OLE),
  'application/vnd.ms-excel': (h) => starts(h, OLE),
  'application/vnd.ms-powerpoint': (h) => starts(h, OLE),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': (h) => starts(h, ZIP),
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': (h) => starts(h, ZIP),
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': (h) => starts(h, ZIP),
  // Text has no signature: no NUL byte, and not a program or a page a browser would run.
  'text/plain': (h) => !h.includes(0) && seenAs(h) === undefined,
};

/** What a file that is none of the declared type looks like, for the error message (undefined: not known). */
function seenAs(h: Buffer): string | undefined {
  if (at(h, 0, 'MZ')) return 'a Windows program';
  if (at(h, 0, '\x7fELF')) return 'a Linux program';
  const text = h.toString('latin1').trimStart().toLowerCase();
  if (text.startsWith('<!doctype html') || text.startsWith('<html') || text.startsWith('<script'))
    return 'an HTML page';
  if (text.startsWith('<svg') || text.startsWith('<?xml')) return 'an XML or SVG document';
  for (const [mime, match] of Object.entries(MATCHES)) if (mime !== 'text/plain' && match(h)) return mime;
  return undefined;
}

/**
 * Undefined when `head` (the file's first SIGNATURE_BYTES, or the whole file when shorter) starts as `mimeType`
 * does; otherwise why not, for the 400 naming `file`.
 */
export function signatureMismatch(mimeType: string, head: Buffer): string | undefined {
  const match = MATCHES[mimeType];
  if (!match || match(head)) return undefined;
  const seen = seenAs(head);
  return `the file's first bytes do not match its declared type ${mimeType}${seen ? ` (they look like ${seen})` : ''}`;
}
