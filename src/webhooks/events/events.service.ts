import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../../core/http/api-error.js';
import { isRowId } from '../../core/http/row-id.js';
import { toPage, type Page } from '../../core/http/pagination.js';
import { BusinessAccountsRepository } from '../../accounts/business-accounts/business-accounts.repository.js';
import type { EventsQueryDto } from './dto/events-query.dto.js';
import { toEventView, type EventView } from './dto/event.view.js';
import { EventsRepository } from './events.repository.js';

export const EVENT_NOT_FOUND = 'Event not found';
/** Stored webhook events, readable by the organization that owns the business account (connected or not). */
@Injectable()
export class EventsService {
  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly events: EventsRepository,
  ) {}

  async list(organizationId: string, query: EventsQueryDto): Promise<Page<EventView>> {
    const account = await this.accounts.getOwned(organizationId, query.wabaId);
    const filter = {
      kind: query.kind,
      status: query.status,
      messageId: query.messageId,
      recipient: query.recipient,
      since: query.since ? new Date(query.since) : undefined,
      until: query.until ? new Date(query.until) : undefined,
    };
    const { rows, total } = await this.events.page(account.wabaId, filter, query);
    return toPage(rows.map(toEventView), total, query);
  }

  async get(organizationId: string, id: number): Promise<EventView> {
    if (!isRowId(id)) throw new NotFoundError(EVENT_NOT_FOUND);
    const wabaIds = (await this.accounts.list(organizationId)).map((a) => a.wabaId);
    const event = await this.events.findInAccounts(wabaIds, id);
    if (!event) throw new NotFoundError(EVENT_NOT_FOUND);
    return toEventView(event);
  }
}
