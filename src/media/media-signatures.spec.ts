import { MEDIA_LIMITS } from './media-limits.js';
import { signatureMismatch } from './media-signatures.js';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

/** The first bytes of a real file of each type Meta accepts. */
const REAL: Record<string, Buffer> = {
  'image/jpeg': bytes([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10], 'JFIF\0'),
  'image/png': bytes([0x89], 'PNG\r\n\x1a\n\0\0\0\rIHDR'),
  'image/webp': bytes('RIFF', [0x24, 0x00, 0x00, 0x00], 'WEBPVP8 '),
  'video/mp4': bytes([0, 0, 0, 0x20], 'ftypisom\0\0\x02\0'),
  'video/3gpp': bytes([0, 0, 0, 0x14], 'ftyp3gp4\0\0\0\0'),
  'audio/mp4': bytes([0, 0, 0, 0x1c], 'ftypM4A \0\0\0\0'),
  'audio/aac': bytes([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc]),
  'audio/amr': bytes('#!AMR\n'),
  'audio/mpeg': bytes('ID3\x04\0\0\0\0\0\0'),
  'audio/ogg': bytes('OggS\0\x02\0\0'),
  'text/plain': bytes('Order 1234: two parcels\n'),
  'application/pdf': bytes('%PDF-1.7\n'),
  'application/msword': bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]),
  'application/vnd.ms-excel': bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
  'application/vnd.ms-powerpoint': bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': bytes('PK\x03\x04\x14\0\x06\0'),
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': bytes('PK\x03\x04\x14\0\x06\0'),
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': bytes('PK\x03\x04\x14\0\x06\0'),
};

describe('signatureMismatch (an upload’s first bytes against its declared type)', () => {
  const supported = Object.values(MEDIA_LIMITS).flatMap((rule) => rule.mimeTypes);

  it.each(supported)('a real %s passes, and an HTML page under that type does not', (mime) => {
    expect(REAL[mime]).toBeDefined();
    expect(signatureMismatch(mime, REAL[mime]!)).toBeUndefined();
    expect(signatureMismatch(mime, bytes('<!doctype html><p>hi</p>'))).toMatch(
      new RegExp(`declared type ${mime.replace(/[./+]/g, '\\$&')} \\(they look like an HTML page\\)`),
    );
  });

  it('says what the bytes look like when it knows', () => {
    expect(signatureMismatch('application/pdf', bytes('MZ\x90\0'))).toMatch(/a Windows program/);
    expect(signatureMismatch('image/jpeg', bytes('\x7fELF\x02\x01'))).toMatch(/a Linux program/);
    expect(signatureMismatch('image/jpeg', REAL['image/png']!)).toMatch(/they look like image\/png/);
    expect(signatureMismatch('image/png', bytes([1, 2, 3, 4]))).toBe(
      "the file's first bytes do not match its declared type image/png",
    );
  });

  it('plain text: no NUL byte, not a program or a page; an empty file is empty text', () => {
    expect(signatureMismatch('text/plain', bytes('hi\0there'))).toBeDefined();
    expect(signatureMismatch('text/plain', bytes('MZ this is a program'))).toMatch(/Windows program/);
    expect(signatureMismatch('text/plain', bytes('  <html><body>'))).toMatch(/HTML page/);
    expect(signatureMismatch('text/plain', bytes(''))).toBeUndefined();
    expect(signatureMismatch('image/png', bytes(''))).toBeDefined();
  });

  it('a file shorter than the signature does not pass as that type', () => {
    expect(signatureMismatch('image/webp', bytes('RIFF'))).toBeDefined();
    expect(signatureMismatch('image/png', REAL['image/png']!.subarray(0, 5))).toBeDefined();
  });
});
