import { mediaRuleFor } from './media-limits.js';

describe('mediaRuleFor (Meta’s upload types and limits)', () => {
  it.each([
    ['image/png', 'a.png', 'image', 5 * 1024 * 1024],
    ['image/jpeg; charset=binary', 'a.jpg', 'image', 5 * 1024 * 1024],
    ['video/mp4', 'a.mp4', 'video', 16 * 1024 * 1024],
    ['audio/ogg', 'a.ogg', 'audio', 16 * 1024 * 1024],
    ['application/pdf', 'a.pdf', 'document', 100 * 1024 * 1024],
    ['image/webp', 'a.webp', 'sticker', 500 * 1024],
    ['application/octet-stream', 'invoice.PDF', 'document', 100 * 1024 * 1024],
  ])('%s (%s) is a %s of at most %d bytes', (mime, name, kind, max) => {
    expect(mediaRuleFor(mime, name)).toMatchObject({ kind, maxBytes: max });
  });

  it.each([
    ['application/x-msdownload', 'setup.exe'],
    ['application/octet-stream', 'setup.exe'],
    ['image/gif', 'a.gif'],
    ['', undefined],
  ])('refuses %s (%s)', (mime, name) => {
    expect(mediaRuleFor(mime, name)).toBeUndefined();
  });
});
