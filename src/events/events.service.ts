import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../auth/request-scope.js';
import type { LongPollOwner } from '../core/async/long-poll-shares.js';
import { InvalidInput, NotFound } from '../core/errors/domain-errors.js';
import { isRowId } from '../core/rows/row-id.js';
import { toPage, type Page } from '../core/rows/page.js';
import { inWindow, readWindowOf, withinWindow } from '../auth/read-window.js';
import { BusinessAccountsRepository } from '../accounts/business-accounts/business-accounts.repository.js';
import type { EventsQueryDto } from './dto/events-query.dto.js';
import type { EventFeedView } from './dto/event-feed.view.js';
import { toEventView, type EventView } from './dto/event.view.js';
import { EventsRepository, type EventFilter, type FeedPage } from './events.repository.js';
import { FEED_NOW, FeedCursorCodec } from './feed-cursor.js';
import { FeedWaiters } from './feed-waiters.js';

export const EVENT_NOT_FOUND = 'Event not found';
/** Stored webhook events, readable by the organization that owns the business account (connected or not). */
@Injectable()
export class EventsService {
  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly events: EventsRepository,
    private readonly cursors: FeedCursorCodec,
    private readonly waiters: FeedWaiters,
  ) {}

  /** Pages (newest first) or, with `after`, the feed (oldest first, with a cursor). */
  async list(
    operator: ConsoleScope,
    query: EventsQueryDto,
    gone?: AbortSignal,
  ): Promise<Page<EventView> | EventFeedView> {
    const organizationId = operator.organizationId;
    if (query.after !== undefined)
      return this.feed({ organization: organizationId, session: operator.sessionId }, query, gone);
    if (query.wait !== undefined) throw InvalidInput.of('wait', 'wait only applies to the feed (with after)');
    return this.page(organizationId, query);
  }

  private async page(organizationId: string, query: EventsQueryDto): Promise<Page<EventView>> {
    const account = await this.accounts.getOwned(organizationId, query.wabaId);
    const paging = { page: query.page ?? 1, limit: query.limit };
    const { rows, total } = await this.events.page(
      account.wabaId,
      withinWindow(filterOf(query), readWindowOf(account)),
      paging,
    );
    return toPage(rows.map(toEventView), total, paging);
  }

  /**
   * The feed after the cursor; with `wait`, a long poll: an empty answer only once `wait` seconds have passed
   * (or the client left, or the server is stopping), with the cursor unchanged.
   */
  private async feed(owner: LongPollOwner, query: EventsQueryDto, gone?: AbortSignal): Promise<EventFeedView> {
    const organizationId = owner.organization;
    const after = query.after!;
    if (query.page !== undefined)
      throw InvalidInput.of(
        'after',
        'after and page exclude each other: follow the feed with after, or browse pages with page',
      );
    const account = await this.accounts.getOwned(organizationId, query.wabaId);
    // `now`: from the current horizon on; everything committed from here is still to come (for a client that
    // shows the newest page first and follows from there).
    const position =
      after === FEED_NOW ? { xid: await this.events.feedHorizon(), id: 0 } : this.cursors.decode(account.wabaId, after);
    if (!position)
      throw InvalidInput.of(
        'after',
        'after is not a cursor of this feed: use 0, now or a nextCursor given for this wabaId',
      );
    const filter = withinWindow(filterOf(query), readWindowOf(account));
    const read = () => this.events.feed(account.wabaId, filter, position, query.limit);

    let page: FeedPage;
    if (query.wait) {
      page = { rows: [], horizon: 0n, beyond: undefined };
      await this.waiters.wait(owner, account.wabaId, query.wait * 1000, gone, async () => {
        page = await read();
        return { found: page.rows.length > 0, beyond: page.beyond };
      });
    } else page = await read();

    const last = page.rows.at(-1);
    return {
      items: page.rows.map(toEventView),
      nextCursor: last
        ? this.cursors.encode(account.wabaId, { xid: BigInt(last.xid), id: last.id })
        : after === FEED_NOW
          ? this.cursors.encode(account.wabaId, position)
          : after,
      limit: query.limit,
    };
  }

  async get(organizationId: string, id: number): Promise<EventView> {
    if (!isRowId(id)) throw new NotFound(EVENT_NOT_FOUND);
    const accounts = await this.accounts.list(organizationId);
    const event = await this.events.findInAccounts(
      accounts.map((a) => a.wabaId),
      id,
    );
    const account = event && accounts.find((a) => a.wabaId === event.wabaId);
    if (!event || !account || !inWindow(event.createdAt, readWindowOf(account))) throw new NotFound(EVENT_NOT_FOUND);
    return toEventView(event);
  }
}

function filterOf(query: EventsQueryDto): EventFilter {
  return {
    kind: query.kind,
    status: query.status,
    messageId: query.messageId,
    recipient: query.recipient,
    userId: query.userId,
    since: query.since ? new Date(query.since) : undefined,
    until: query.until ? new Date(query.until) : undefined,
  };
}
