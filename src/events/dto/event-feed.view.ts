import { ApiProperty } from '@nestjs/swagger';
import { EventView } from './event.view.js';

/** The feed form of GET /webhooks/events (`after` given). */
export class EventFeedView {
  @ApiProperty({
    type: [EventView],
    description:
      'Oldest first, in the order events became visible; empty when nothing is newer than `after` (after `wait`, if given)',
  })
  items: EventView[];

  @ApiProperty({
    example: 'djE6ODgxMjM0OjEwNDI.3q2-7wAAAAAAAAAAAAAAAA',
    description:
      'Pass as `after` to get what comes next. The same as `after` when `items` is empty. Opaque; bound to this wabaId.',
  })
  nextCursor: string;

  @ApiProperty({ example: 20 })
  limit: number;
}
