import { StickerContentDto } from './message-content.dto.js';
import { mediaType } from './media.js';

/** A sticker by link or uploaded media id (24 h window). */
export const sticker = mediaType({
  type: 'sticker',
  dto: StickerContentDto,
  note: 'webp, ≤ 500 KB',
  examples: {
    sticker: {
      summary: 'Sticker',
      value: { type: 'sticker', sticker: { link: 'https://cdn.example.com/thumbs-up.webp' } },
    },
  },
});
