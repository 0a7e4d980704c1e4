import { ApiProperty } from '@nestjs/swagger';
import { MessageListItemView } from '../message.view.js';

/** The feed form of GET /messages (`after` given). */
export class MessagesFeedView {
  @ApiProperty({
    type: [MessageListItemView],
    description:
      'Oldest first, in the order messages were created or changed; each in its current state. Empty when nothing is newer than `after` (after `wait`, if given)',
  })
  items: MessageListItemView[];

  @ApiProperty({
    example: 'djE6ODgxMjM0OjEwNDI.3q2-7wAAAAAAAAAAAAAAAA',
    description:
      'Pass as `after` to get what comes next. The same as `after` when `items` is empty. Opaque; bound to the business account.',
  })
  nextCursor: string;

  @ApiProperty({ example: 20 })
  limit: number;
}
