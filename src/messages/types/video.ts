import { VideoContentDto } from './message-content.dto.js';
import { mediaType } from './media.js';

/** A video by link or uploaded media id, with an optional caption (24 h window). */
export const video = mediaType({
  type: 'video',
  dto: VideoContentDto,
  note: 'mp4/3gpp, ≤ 16 MB',
  examples: {
    video: {
      summary: 'Video by link (or `id` of an upload: POST …/phone-numbers/{id}/media)',
      value: { type: 'video', video: { link: 'https://cdn.example.com/how-to-fit.mp4', caption: 'How to fit it' } },
    },
  },
});
