import { AudioContentDto } from './message-content.dto.js';
import { mediaType } from './media.js';

/** An audio file by link or uploaded media id (24 h window). */
export const audio = mediaType({
  type: 'audio',
  dto: AudioContentDto,
  note: 'aac/amr/mpeg/mp4/ogg (opus), ≤ 16 MB',
  examples: {
    audio: { summary: 'Audio', value: { type: 'audio', audio: { link: 'https://cdn.example.com/voice.ogg' } } },
  },
});
