import type { LongPollOwner } from '../../core/async/long-poll-shares.js';
import { Injectable } from '@nestjs/common';
import { withinWindow, type ReadWindow } from '../../auth/read-window.js';
import { AppConfig } from '../../core/config/app-config.js';
import { PerKeySlots } from '../../core/async/per-key-slots.js';
import { InvalidInput, TooManyAttempts } from '../../core/errors/domain-errors.js';
import { toPage, type Page } from '../../core/rows/page.js';
import { FeedWaiters } from '../../events/feed-waiters.js';
import { FeedActivity } from '../feed/feed-activity.js';
import { MessagesFeedCursors } from '../feed/messages-feed-cursors.js';
import type { MessagesFeedView } from '../feed/messages-feed.view.js';
import { InboundMediaLinks } from '../inbound-media/inbound-media-links.js';
import { toMessageListItem, type MessageListItemView } from '../message.view.js';
import {
  MessagesRepository,
  type MessageFilter,
  type MessagesFeedPage,
  type StoredMessage,
} from '../messages.repository.js';
import type { MessagesListRequest } from './messages-request.js';

/** The account a list is read for: the key pair's (or the console operator's chosen) business account. */
export interface ListScope {
  businessAccountId: string;
  wabaId: string;
  /** Who waits, for the long-poll shares of the organization and of the session or key pair (LongPollShares). */
  owner: LongPollOwner;
  /** What of the account's history the caller's organization may read (accounts/business-accounts/read-window.ts). */
  window?: ReadWindow;
}

/**
 * GET /messages in its two forms: pages (newest first, with a total from the same snapshot) or, with `after`,
 * the feed (oldest first by the transaction that created or last changed each message, `nextCursor`, optional
 * long poll). Long polls wait in the process's FeedWaiters (woken by `events_feed` notifications, keyed by the
 * wabaId), behind a per-account share of MESSAGES_FEED_WAITERS_PER_ACCOUNT slots: one account cannot take every
 * waiting slot of the process. FeedWaiters' once-a-second safety recheck reads nothing while the account has had no
 * notification since its last empty read (FeedActivity).
 */
@Injectable()
export class MessagesList {
  private readonly slots: PerKeySlots;
  private readonly countLimit: number;

  constructor(
    private readonly messages: MessagesRepository,
    private readonly cursors: MessagesFeedCursors,
    private readonly waiters: FeedWaiters,
    private readonly links: InboundMediaLinks,
    private readonly activity: FeedActivity,
    config: AppConfig,
  ) {
    this.slots = new PerKeySlots(config.messagesFeedWaitersPerAccount);
    this.countLimit = config.messagesCountLimit;
  }

  async list(
    scope: ListScope,
    query: MessagesListRequest,
    gone?: AbortSignal,
  ): Promise<Page<MessageListItemView> | MessagesFeedView> {
    if (query.after !== undefined) return this.feed(scope, query, gone);
    if (query.wait !== undefined) throw InvalidInput.of('wait', 'wait only applies to the feed (with after)');
    const paging = { page: query.page ?? 1, limit: query.limit };
    const { rows, total, totalIsLowerBound } = await this.messages.list(
      scope.businessAccountId,
      withinWindow(filterOf(query), scope.window),
      paging,
      this.countLimit,
    );
    const page = toPage(this.items(rows), total, paging);
    return totalIsLowerBound ? { ...page, totalIsLowerBound } : page;
  }

  private async feed(scope: ListScope, query: MessagesListRequest, gone?: AbortSignal): Promise<MessagesFeedView> {
    if (query.page !== undefined)
      throw InvalidInput.of(
        'after',
        'after and page exclude each other: follow the feed with after, or browse pages with page',
      );
    const after = query.after === '' ? '0' : query.after!;
    const position = this.cursors.decode(scope.businessAccountId, after);
    if (!position)
      throw InvalidInput.of(
        'after',
        'after is not a cursor of this feed: use 0 or a nextCursor given for this business account',
      );
    const filter = withinWindow(filterOf(query), scope.window);
    const read = () => this.messages.feed(scope.businessAccountId, filter, position, query.limit);

    let page: MessagesFeedPage;
    if (query.wait) {
      const release = this.slots.take(scope.businessAccountId);
      if (!release)
        throw new TooManyAttempts(
          `Too many long polls of this business account are waiting (at most ${this.slots.limit} per server); try again shortly`,
          1,
        );
      page = { rows: [], beyond: undefined };
      // The account's activity mark when the last empty, final read began: unchanged means nothing to read.
      let quietSince: string | undefined;
      try {
        await this.waiters.wait(scope.owner, scope.wabaId, query.wait * 1000, gone, async () => {
          const mark = this.activity.mark(scope.wabaId);
          if (mark !== undefined && mark === quietSince) return { found: false };
          page = await read();
          quietSince = page.rows.length === 0 && page.beyond === undefined ? mark : undefined;
          return { found: page.rows.length > 0, beyond: page.beyond };
        });
      } finally {
        release();
      }
    } else page = await read();

    const last = page.rows.at(-1);
    return {
      items: this.items(page.rows),
      nextCursor: last ? this.cursors.encode(scope.businessAccountId, { xid: BigInt(last.xid), id: last.id }) : after,
      limit: query.limit,
    };
  }

  private items(rows: StoredMessage[]): MessageListItemView[] {
    const now = Date.now();
    return rows.map((m) => toMessageListItem(m, this.links.forMessage(m, now)));
  }
}

function filterOf(query: MessagesListRequest): MessageFilter {
  return {
    direction: query.direction,
    status: query.status,
    to: query.to,
    userId: query.userId,
    phoneNumberId: query.phoneNumberId,
    templateName: query.templateName,
    type: query.type,
    campaignId: query.campaignId,
    since: query.since ? new Date(query.since) : undefined,
    until: query.until ? new Date(query.until) : undefined,
  };
}
