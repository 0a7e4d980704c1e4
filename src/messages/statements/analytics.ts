// The analytics aggregates of `messages`: run by MessagesRepository (../messages.repository.ts), the table's one owner.
import type { Expression, Kysely } from 'kysely';
import type { Database } from '../../core/db/database.js';
import { typed, utcBucket, utcBuckets } from '../../core/db/pg.js';
import type { Eb } from './shared.js';

/**
 * Aggregates over the messages created in [since, until): totals, one row per bucket (every bucket, zeros
 * included), failure reasons and per-template figures. sent = accepted by the upstream platform; delivered
 * includes read.
 */
export async function messageAnalytics(
  db: Kysely<Database>,
  businessAccountId: string,
  f: AnalyticsFilter,
): Promise<MessageAggregates> {
  const scope = (eb: Eb) => [
    eb('business_account_id', '=', typed(businessAccountId, 'uuid')),
    eb('created_at', '>=', f.since),
    eb('created_at', '<', f.until),
    ...(f.phoneNumberId ? [eb('phone_number_id', '=', f.phoneNumberId)] : []),
    ...(f.templateName ? [eb('template_name', '=', f.templateName)] : []),
    ...(f.type ? [eb('type', '=', f.type)] : []),
  ];
  // The figures are of sends; customers' messages are counted apart (`inbound`), in total and per bucket.
  const outbound = (eb: Eb) => eb.and([...scope(eb), eb('direction', '=', 'outbound')]);
  const inbound = (eb: Eb) => eb.and([...scope(eb), eb('direction', '=', 'inbound')]);
  const int = (eb: Eb, count: Expression<unknown>) => eb.cast<number>(count, 'integer');
  const delivered = (eb: Eb) => eb.or([eb('status', 'in', ['delivered', 'read']), eb('delivered_at', 'is not', null)]);
  const counts = (eb: Eb) =>
    [
      int(eb, eb.fn.countAll().filterWhere('upstream_message_id', 'is not', null)).as('sent'),
      int(eb, eb.fn.countAll().filterWhere(delivered)).as('delivered'),
      int(eb, eb.fn.countAll().filterWhere('status', '=', 'read')).as('read'),
      int(eb, eb.fn.countAll().filterWhere('status', '=', 'failed')).as('failed'),
    ] as const;
  const bucket = utcBucket(f.granularity, 'created_at');

  const [totals, series, failureReasons, templates, pricing, inboundBuckets] = await Promise.all([
    db
      .selectFrom('messages')
      .select((eb) => [int(eb, eb.fn.countAll()).as('total'), ...counts(eb)])
      .where(outbound)
      .executeTakeFirst(),
    db
      .with('buckets', (db) => db.selectNoFrom(utcBuckets(f.granularity, f.since, f.until).as('bucket')))
      .with('agg', (db) =>
        db
          .selectFrom('messages')
          .select((eb) => [bucket.as('bucket'), ...counts(eb)])
          .where(outbound)
          .groupBy(bucket),
      )
      .selectFrom('buckets as b')
      .leftJoin('agg as a', 'a.bucket', 'b.bucket')
      .select((eb) => [
        'b.bucket',
        eb.cast<number>(eb.fn.coalesce('a.sent', eb.lit(0)), 'integer').as('sent'),
        eb.cast<number>(eb.fn.coalesce('a.delivered', eb.lit(0)), 'integer').as('delivered'),
        eb.cast<number>(eb.fn.coalesce('a.read', eb.lit(0)), 'integer').as('read'),
        eb.cast<number>(eb.fn.coalesce('a.failed', eb.lit(0)), 'integer').as('failed'),
      ])
      .where('b.bucket', '<', f.until)
      .orderBy('b.bucket')
      .execute(),
    db
      .selectFrom('messages')
      .select((eb) => ['error_code as code', 'error_title as title', int(eb, eb.fn.countAll()).as('count')])
      .where((eb) => eb.and([outbound(eb), eb('status', '=', 'failed')]))
      .groupBy(['error_code', 'error_title'])
      .orderBy('count', 'desc')
      .orderBy('code', (o) => o.asc().nullsLast())
      .limit(20)
      .execute(),
    db
      .selectFrom('messages')
      .select((eb) => [
        'template_name as templateName',
        int(eb, eb.fn.countAll()).as('total'),
        int(eb, eb.fn.countAll().filterWhere(delivered)).as('delivered'),
        int(eb, eb.fn.countAll().filterWhere('status', '=', 'read')).as('read'),
        int(eb, eb.fn.countAll().filterWhere('status', '=', 'failed')).as('failed'),
      ])
      .where((eb) => eb.and([outbound(eb), eb('template_name', 'is not', null)]))
      .groupBy('template_name')
      .orderBy('total', 'desc')
      .orderBy('template_name')
      .limit(100)
      .execute(),
    db
      .selectFrom('messages')
      .select((eb) => [
        bucket.as('bucket'),
        'pricing_category as category',
        'pricing_type as type',
        int(eb, eb.fn.countAll()).as('count'),
      ])
      .where((eb) =>
        eb.and([outbound(eb), eb.or([eb('pricing_category', 'is not', null), eb('pricing_type', 'is not', null)])]),
      )
      .groupBy([bucket, 'pricing_category', 'pricing_type'])
      .orderBy('bucket')
      .execute(),
    db
      .selectFrom('messages')
      .select((eb) => [bucket.as('bucket'), int(eb, eb.fn.countAll()).as('count')])
      .where(inbound)
      .groupBy(bucket)
      .orderBy('bucket')
      .execute(),
  ]);
  return {
    totals: totals ?? { total: 0, sent: 0, delivered: 0, read: 0, failed: 0 },
    series,
    failureReasons,
    templates: templates.map((t) => ({ ...t, templateName: t.templateName ?? '' })),
    pricing,
    inbound: inboundBuckets,
  };
}

export interface AnalyticsFilter {
  since: Date;
  until: Date;
  granularity: 'day' | 'hour';
  phoneNumberId?: string;
  templateName?: string;
  type?: string;
}

export interface MessageCounts {
  total: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
}

export interface MessageAggregates {
  totals: MessageCounts;
  /** Buckets are the UTC day's or hour's first instant. */
  series: Array<{ bucket: Date } & Omit<MessageCounts, 'total'>>;
  failureReasons: Array<{ code: number | null; title: string | null; count: number }>;
  templates: Array<{ templateName: string; total: number; delivered: number; read: number; failed: number }>;
  /** Messages with a pricing object, per bucket (as series), category and type. */
  pricing: Array<{ bucket: Date; category: string | null; type: string | null; count: number }>;
  /** Inbound messages (customers' messages) per bucket that has any. */
  inbound: Array<{ bucket: Date; count: number }>;
}
