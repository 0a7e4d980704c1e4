import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { HmacFeedCursors } from '../../events/feed-cursor.js';

/**
 * Cursors of the messages feed (GET /messages?after=…): the events feed's format and keys' ring, under their own
 * label, bound to the business account (its id): a cursor of another account, or of the events feed, is refused.
 */
@Injectable()
export class MessagesFeedCursors extends HmacFeedCursors {
  constructor(config: AppConfig) {
    super(config, 'messages-feed-cursor');
  }
}
