import { DocumentContentDto } from './message-content.dto.js';
import { mediaType } from './media.js';

/** A document by link or uploaded media id, with an optional caption and file name (24 h window). */
export const document = mediaType({
  type: 'document',
  dto: DocumentContentDto,
  note: '≤ 100 MB',
  examples: {
    document: {
      summary: 'Document with file name',
      value: {
        type: 'document',
        document: { link: 'https://cdn.example.com/invoice.pdf', caption: 'Invoice', filename: 'invoice-7781.pdf' },
      },
    },
  },
});
