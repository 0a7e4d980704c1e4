import { ImageContentDto } from './message-content.dto.js';
import { mediaType } from './media.js';

/** An image by link or uploaded media id, with an optional caption (24 h window). */
export const image = mediaType({
  type: 'image',
  dto: ImageContentDto,
  note: 'jpeg/png, ≤ 5 MB',
  examples: {
    image: {
      summary: 'Image by link',
      value: { type: 'image', image: { link: 'https://cdn.example.com/p.jpg', caption: 'Your parcel' } },
    },
  },
});
