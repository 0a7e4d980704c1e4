import { Injectable } from '@nestjs/common';
import { InvalidInput } from '../../core/errors/domain-errors.js';
import { withinWindow, type ReadWindow } from '../../auth/read-window.js';
import { MessagesRepository, type MessageCounts } from '../messages.repository.js';
import type { AnalyticsRequest } from './messages-request.js';
import { PRICING_CATEGORIES, PRICING_TYPES } from '../../events/pricing.js';

const DAY_MS = 24 * 3600 * 1000;
/** Bounds that keep the series (one row per bucket) reasonable. */
const MAX_RANGE_MS = { day: 400 * DAY_MS, hour: 31 * DAY_MS };

/** The pricing type Meta bills; `free_customer_service` and `free_entry_point` are free. */
export const BILLABLE_PRICING_TYPE = 'regular';

/** How many messages Meta priced in each category and each type (counts only: Meta bills the customer directly). */
export interface PricingCounts {
  byCategory: Record<string, number>;
  byType: Record<string, number>;
  /** Messages Meta billed (pricing type `regular`), in total and per category: what the invoice counts. */
  billable: number;
  billableByCategory: Record<string, number>;
}

export interface Analytics {
  since: string;
  until: string;
  granularity: 'day' | 'hour';
  /** Sends only. */
  totals: MessageCounts;
  /** Inbound messages in the range, counted apart. */
  inbound: number;
  rates: { delivery: number; read: number; failure: number };
  series: Array<{ bucket: string; inbound: number; pricing: PricingCounts } & Omit<MessageCounts, 'total'>>;
  /** Over the whole range; each series bucket has its own. */
  pricing: PricingCounts;
  failureReasons: Array<{ code: number | null; title: string | null; count: number }>;
  templates: Array<{ templateName: string; total: number; delivered: number; read: number; failed: number }>;
}

/**
 * Messaging analytics computed by SQL aggregates over the key's business account (never by loading rows;
 * the aggregates are MessagesRepository.analytics).
 * sent = accepted by the upstream platform; delivered includes read (read implies delivered); rates are
 * fractions of all messages sent (outbound) in the range. Inbound messages are counted apart (`inbound`).
 */
@Injectable()
export class AnalyticsService {
  constructor(private readonly messages: MessagesRepository) {}

  /** `window`: what the caller may read of the account (docs/security.md, takeover): nothing outside it is counted. */
  async compute(businessAccountId: string, query: AnalyticsRequest, window?: ReadWindow): Promise<Analytics> {
    const granularity = query.granularity ?? 'day';
    const until = query.until ? new Date(query.until) : new Date();
    const since = query.since ? new Date(query.since) : new Date(until.getTime() - 7 * DAY_MS);
    if (since >= until) throw InvalidInput.of('since', 'since must be before until');
    if (until.getTime() - since.getTime() > MAX_RANGE_MS[granularity]) {
      throw InvalidInput.of(
        'since',
        `the range may span at most ${MAX_RANGE_MS[granularity] / DAY_MS} days with granularity ${granularity}`,
      );
    }

    // The range asked, narrowed to the readable window (an empty range when they do not meet).
    const readable = withinWindow({ since, until }, window);
    const counted = { since: readable.since, until: readable.until < readable.since ? readable.since : readable.until };
    const { totals, series, failureReasons, templates, pricing, inbound } = await this.messages.analytics(
      businessAccountId,
      {
        since: counted.since,
        until: counted.until,
        granularity,
        phoneNumberId: query.phoneNumberId,
        templateName: query.templateName,
        type: query.type,
      },
    );
    const overall = emptyPricing();
    const perBucket = new Map<number, PricingCounts>();
    for (const row of pricing) {
      const key = row.bucket.getTime();
      if (!perBucket.has(key)) perBucket.set(key, emptyPricing());
      for (const counts of [overall, perBucket.get(key)!]) addPricing(counts, row);
    }
    const inboundPerBucket = new Map(inbound.map((row) => [row.bucket.getTime(), row.count]));
    const rate = (n: number) => (totals.total === 0 ? 0 : Math.round((n / totals.total) * 10000) / 10000);
    return {
      since: since.toISOString(),
      until: until.toISOString(),
      granularity,
      totals,
      inbound: inbound.reduce((sum, row) => sum + row.count, 0),
      rates: { delivery: rate(totals.delivered), read: rate(totals.read), failure: rate(totals.failed) },
      series: series.map((s) => ({
        bucket: s.bucket.toISOString(),
        sent: s.sent,
        delivered: s.delivered,
        read: s.read,
        failed: s.failed,
        inbound: inboundPerBucket.get(s.bucket.getTime()) ?? 0,
        pricing: perBucket.get(s.bucket.getTime()) ?? emptyPricing(),
      })),
      pricing: overall,
      failureReasons,
      templates,
    };
  }
}

function emptyPricing(): PricingCounts {
  return {
    byCategory: Object.fromEntries(PRICING_CATEGORIES.map((c) => [c, 0])),
    byType: Object.fromEntries(PRICING_TYPES.map((t) => [t, 0])),
    billable: 0,
    billableByCategory: Object.fromEntries(PRICING_CATEGORIES.map((c) => [c, 0])),
  };
}

/** A message without a category (or a type) in its pricing is counted under `unknown` there. */
function addPricing(counts: PricingCounts, row: { category: string | null; type: string | null; count: number }): void {
  const category = row.category ?? 'unknown';
  const type = row.type ?? 'unknown';
  counts.byCategory[category] = (counts.byCategory[category] ?? 0) + row.count;
  counts.byType[type] = (counts.byType[type] ?? 0) + row.count;
  if (type === BILLABLE_PRICING_TYPE) {
    counts.billable += row.count;
    counts.billableByCategory[category] = (counts.billableByCategory[category] ?? 0) + row.count;
  }
}
