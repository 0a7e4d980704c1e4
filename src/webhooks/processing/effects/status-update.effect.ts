import { Inject, Injectable } from '@nestjs/common';
import {
  MarketingPreferencesRepository,
  type MarketingPreferenceChange,
} from '../../../accounts/users/marketing-preferences.repository.js';
import type { Tx } from '../../../core/db/db.js';
import { MessagesRepository, type LockedMessage, type StatusCandidate } from '../../../messages/messages.repository.js';
import {
  errorCategoryOf,
  isDeliveryStatus,
  isMarketingStop,
  nextStatus,
  type MessageStatus,
} from '../../../messages/message-status.js';
import { callbackMessageId } from '../../../events/callback-data.js';
import { isRecord, pricingOf, STANDBY } from '../../../events/classify.js';
import type { PreferenceChanges, StatusMessages } from '../processing.ports.js';
import type { EffectItem, EventEffect, PreparedEffect, StoredEvent } from './event-effect.js';

export type { LockedMessage };
type Candidate = StatusCandidate;

export type StatusChanges = Partial<Omit<Candidate, 'id' | 'wabaId' | 'upstreamMessageId'>>;

type StatusItem = EffectItem;

/** Which locked message each status goes to, decided before any of them is applied. */
export interface StatusPlan<T extends StatusItem> {
  target: Map<T, Candidate>;
  /** Messages linked to their wamid by callback data in this plan: written even if nothing else changes. */
  linked: Set<Candidate>;
  /** Their message is not stored (yet). */
  waiting: T[];
}

/**
 * Delivery statuses move their message forward (never back: see messages/message-status.ts) and record when
 * it happened. The message is found by wamid, or, when the send response has not been stored yet (or the
 * send timed out), by the callback data our send path put on it, which also links the wamid.
 *
 * Per chunk: `prepare` locks the statuses' messages in id order (no deadlock between concurrent chunks) and
 * decides which status goes to which message; `apply` runs the owned statuses in order in memory (the
 * `statusChanges` rules) and writes each changed message once.
 */
@Injectable()
export class StatusUpdateEffect implements EventEffect {
  constructor(
    @Inject(MessagesRepository) private readonly messages: StatusMessages,
    @Inject(MarketingPreferencesRepository) private readonly preferences: PreferenceChanges,
  ) {}

  appliesTo(item: Pick<EffectItem, 'kind' | 'messageId' | 'status'>): boolean {
    return (
      item.kind === 'status_update' && item.messageId !== null && item.status !== null && isDeliveryStatus(item.status)
    );
  }

  async prepare<T extends EffectItem>(tx: Tx, items: T[]): Promise<PreparedEffect<T>> {
    const plan = await this.planStatuses(tx, items);
    return { waiting: plan.waiting, apply: (owned) => this.writeStatuses(tx, plan, owned) };
  }

  /** Locks every message these statuses may concern (in id order) and decides which status goes to which. */
  private async planStatuses<T extends StatusItem>(tx: Tx, items: T[]): Promise<StatusPlan<T>> {
    const plan: StatusPlan<T> = { target: new Map(), linked: new Set(), waiting: [] };
    if (items.length === 0) return plan;
    const wamids = [...new Set(items.map((e) => e.messageId!))];
    const callbackIds = [...new Set(items.map((e) => callbackOf(e.raw)).filter((id): id is number => id !== null))];
    const rows = await this.messages.lockForStatuses(tx, wamids, callbackIds);

    const byWamid = new Map<string, Candidate>();
    const unlinked = new Map<number, Candidate>();
    for (const m of rows) {
      if (m.upstreamMessageId !== null) byWamid.set(m.upstreamMessageId, m);
      else unlinked.set(m.id, m);
    }
    // A link by callback data makes later statuses of the same wamid find the message directly.
    for (const item of items) {
      const wamid = item.messageId!;
      let message = byWamid.get(wamid);
      if (!message) {
        const linkable = unlinked.get(callbackOf(item.raw) ?? -1);
        if (linkable && linkable.wabaId === item.wabaId) {
          unlinked.delete(linkable.id);
          linkable.upstreamMessageId = wamid;
          byWamid.set(wamid, linkable);
          plan.linked.add(linkable);
          message = linkable;
        }
      }
      if (message && message.wabaId === item.wabaId) plan.target.set(item, message);
      // On `standby` Meta reports the statuses of Meta Business Agent's messages: one of ours moves, another sender's is
      // stored only (it never will be ours: nothing to wait for).
      else if (item.eventType !== STANDBY) plan.waiting.push(item);
    }
    return plan;
  }

  /** Applies `owned` (statuses of the plan this transaction owns), in order, and writes each changed message once. */
  private async writeStatuses<T extends StatusItem>(tx: Tx, plan: StatusPlan<T>, owned: T[]): Promise<void> {
    // Meta's 131050: the user stopped marketing messages; the next marketing templates are refused before Meta.
    await this.preferences.record(tx, owned.flatMap(marketingStopsOf));
    const changed = new Set<Candidate>();
    for (const item of owned) {
      const message = plan.target.get(item);
      if (!message) continue;
      const changes = statusChanges(message, item);
      Object.assign(message, changes);
      if (Object.keys(changes).length > 0 || plan.linked.has(message)) changed.add(message);
    }
    if (changed.size === 0) return;
    await this.messages.writeStatuses(tx, [...changed]);
  }
}

/** The columns to change on `message` for this status event (pure; empty when nothing changes). */
export function statusChanges(
  message: LockedMessage & Partial<Pick<Candidate, 'pricingCategory' | 'pricingType' | 'pricingModel'>>,
  event: Pick<StoredEvent, 'status' | 'upstreamTimestamp' | 'errorCode' | 'errorTitle' | 'errorDetail'> & {
    createdAt?: Date;
    pricing?: unknown;
  },
): StatusChanges {
  const incoming = event.status ?? '';
  const at = event.upstreamTimestamp ?? event.createdAt ?? new Date();
  const next = nextStatus({ status: message.status as MessageStatus, errorCategory: message.errorCategory }, incoming);
  const data: StatusChanges = {};
  if (next) data.status = next;
  if (next && next !== 'failed' && message.status === 'failed') {
    // Real progress after a send whose outcome was unknown (timeout): the message did not fail after all.
    Object.assign(data, { failedAt: null, errorCode: null, errorTitle: null, errorDetail: null, errorCategory: null });
  }
  // Meta sends the same pricing on `sent` and on one of `delivered`/`read`: the first one stored is kept, whatever
  // the status does (a late `sent` still prices a message that is already read).
  const pricing = pricingOf(event.pricing);
  if (pricing && message.pricingCategory == null && message.pricingType == null && message.pricingModel == null) {
    Object.assign(data, {
      pricingModel: pricing.pricing_model,
      pricingCategory: pricing.category,
      pricingType: pricing.type,
      pricingBillable: pricing.billable,
    });
  }
  switch (incoming) {
    case 'sent':
      if (!message.sentAt) data.sentAt = at;
      break;
    case 'delivered':
      // Earliest wins: a `read` that arrived first filled deliveredAt with the read time.
      if (!message.deliveredAt || at < message.deliveredAt) data.deliveredAt = at;
      break;
    case 'read':
      if (!message.readAt) data.readAt = at;
      // read implies delivered (Meta skips `delivered` when the message is read at once)
      if (!message.deliveredAt) data.deliveredAt = at;
      break;
    case 'failed': {
      // A failure recorded because the send's outcome was unknown is replaced by the real reason.
      const refinesUnknownOutcome = message.status === 'failed' && message.errorCategory === 'retryable';
      if (next === 'failed' || refinesUnknownOutcome) {
        data.status = 'failed';
        data.failedAt = message.failedAt && !refinesUnknownOutcome ? message.failedAt : at;
        data.errorCode = event.errorCode;
        data.errorTitle = event.errorTitle;
        data.errorDetail = event.errorDetail;
        data.errorCategory = errorCategoryOf(event.errorCode);
      }
      break;
    }
  }
  return data;
}

/** A 131050 failure records the user's stop, once per address the status names (phone digits, BSUID). */
export function marketingStopsOf(
  item: Pick<
    StatusItem,
    'status' | 'errorCode' | 'errorTitle' | 'wabaId' | 'recipient' | 'userId' | 'upstreamTimestamp' | 'createdAt'
  >,
): MarketingPreferenceChange[] {
  if (item.status !== 'failed' || !isMarketingStop(item.errorCode)) return [];
  const at = item.upstreamTimestamp ?? item.createdAt ?? new Date();
  return [item.recipient, item.userId]
    .filter((u): u is string => u !== null)
    .map((user) => ({
      wabaId: item.wabaId,
      user,
      value: 'stop' as const,
      source: 'error_131050' as const,
      detail: item.errorTitle,
      at,
    }));
}

/** The message id of an item's `biz_opaque_callback_data` when it is our send path's (events/callback-data.ts). */
function callbackOf(raw: unknown): number | null {
  return callbackMessageId(isRecord(raw) ? raw.biz_opaque_callback_data : undefined);
}
