import type { MessageDirection } from '../message.view.js';

/**
 * What the reads of messages take, in their own words: the request shapes of the edge (`dto/list-messages.query.ts`,
 * validated there) have these fields, so the routes hand them over as they are, and the reads import nothing of the
 * edge.
 */

/** The filters the list, the feed and analytics share: sending number, template, type, createdAt range (ISO 8601). */
export interface MessageScopeRequest {
  phoneNumberId?: string;
  templateName?: string;
  type?: string;
  since?: string;
  until?: string;
}

/** A page (`page`) or the feed (`after`, long-polled for `wait` seconds) of the messages, filtered. */
export interface MessagesListRequest extends MessageScopeRequest {
  limit: number;
  page?: number;
  after?: string;
  wait?: number;
  status?: string;
  direction?: MessageDirection;
  to?: string;
  campaignId?: number;
  userId?: string;
}

/** Analytics over the shared filters, in buckets of a day or an hour. */
export interface AnalyticsRequest extends MessageScopeRequest {
  granularity?: 'day' | 'hour';
}
