import { Injectable } from '@nestjs/common';
import { Prisma } from '../../generated/prisma/client.js';
import { FieldValidationError } from '../../core/http/api-error.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import type { AnalyticsQuery } from '../dto/list-messages.query.js';

const DAY_MS = 24 * 3600 * 1000;
/** Bounds that keep the series (one row per bucket) reasonable. */
const MAX_RANGE_MS = { day: 400 * DAY_MS, hour: 31 * DAY_MS };

interface Counts {
  total: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
}

export interface Analytics {
  since: string;
  until: string;
  granularity: 'day' | 'hour';
  totals: Counts;
  rates: { delivery: number; read: number; failure: number };
  series: Array<{ bucket: string } & Omit<Counts, 'total'>>;
  failureReasons: Array<{ code: number | null; title: string | null; count: number }>;
  templates: Array<{ templateName: string; total: number; delivered: number; read: number; failed: number }>;
}

/**
 * Messaging analytics computed by SQL aggregates over the key's business account (never by loading rows).
 * sent = accepted by the upstream platform; delivered includes read (read implies delivered); rates are
 * fractions of all messages created in the range.
 */
@Injectable()
export class AnalyticsService {
  constructor(private readonly prisma: PrismaService) {}

  async compute(businessAccountId: string, query: AnalyticsQuery): Promise<Analytics> {
    const granularity = query.granularity ?? 'day';
    const until = query.until ? new Date(query.until) : new Date();
    const since = query.since ? new Date(query.since) : new Date(until.getTime() - 7 * DAY_MS);
    if (since >= until) throw FieldValidationError.of('since', 'since must be before until');
    if (until.getTime() - since.getTime() > MAX_RANGE_MS[granularity]) {
      throw FieldValidationError.of('since', `the range may span at most ${MAX_RANGE_MS[granularity] / DAY_MS} days with granularity ${granularity}`);
    }

    const filters = [Prisma.sql`business_account_id = ${businessAccountId}::uuid`, Prisma.sql`created_at >= ${since}`, Prisma.sql`created_at < ${until}`];
    if (query.phoneNumberId) filters.push(Prisma.sql`phone_number_id = ${query.phoneNumberId}`);
    if (query.templateName) filters.push(Prisma.sql`template_name = ${query.templateName}`);
    const where = Prisma.join(filters, ' AND ');
    const counts = Prisma.sql`
      count(*)::int AS total,
      count(*) FILTER (WHERE upstream_message_id IS NOT NULL)::int AS sent,
      count(*) FILTER (WHERE status IN ('delivered', 'read') OR delivered_at IS NOT NULL)::int AS delivered,
      count(*) FILTER (WHERE status = 'read')::int AS read,
      count(*) FILTER (WHERE status = 'failed')::int AS failed`;
    const unit = Prisma.raw(`'${granularity}'`);
    const step = Prisma.raw(`'1 ${granularity}'::interval`);

    const [totalsRows, series, failureReasons, templates] = await Promise.all([
      this.prisma.$queryRaw<Counts[]>`SELECT ${counts} FROM messages WHERE ${where}`,
      this.prisma.$queryRaw<Array<{ bucket: Date } & Omit<Counts, 'total'>>>`
        WITH buckets AS (
          SELECT generate_series(date_trunc(${unit}, ${since}::timestamptz AT TIME ZONE 'UTC'), ${until}::timestamptz AT TIME ZONE 'UTC', ${step}) AS bucket
        ), agg AS (
          SELECT date_trunc(${unit}, created_at AT TIME ZONE 'UTC') AS bucket, ${counts} FROM messages WHERE ${where} GROUP BY 1
        )
        SELECT b.bucket, coalesce(a.sent, 0)::int AS sent, coalesce(a.delivered, 0)::int AS delivered,
               coalesce(a.read, 0)::int AS read, coalesce(a.failed, 0)::int AS failed
        FROM buckets b LEFT JOIN agg a ON a.bucket = b.bucket
        WHERE b.bucket < ${until}::timestamptz AT TIME ZONE 'UTC'
        ORDER BY b.bucket`,
      this.prisma.$queryRaw<Analytics['failureReasons']>`
        SELECT error_code AS code, error_title AS title, count(*)::int AS count
        FROM messages WHERE ${where} AND status = 'failed'
        GROUP BY error_code, error_title ORDER BY count DESC, code NULLS LAST LIMIT 20`,
      this.prisma.$queryRaw<Analytics['templates']>`
        SELECT template_name AS "templateName", count(*)::int AS total,
          count(*) FILTER (WHERE status IN ('delivered', 'read') OR delivered_at IS NOT NULL)::int AS delivered,
          count(*) FILTER (WHERE status = 'read')::int AS read,
          count(*) FILTER (WHERE status = 'failed')::int AS failed
        FROM messages WHERE ${where} AND template_name IS NOT NULL
        GROUP BY template_name ORDER BY total DESC, template_name LIMIT 100`,
    ]);

    const totals = totalsRows[0] ?? { total: 0, sent: 0, delivered: 0, read: 0, failed: 0 };
    const rate = (n: number) => (totals.total === 0 ? 0 : Math.round((n / totals.total) * 10000) / 10000);
    return {
      since: since.toISOString(),
      until: until.toISOString(),
      granularity,
      totals,
      rates: { delivery: rate(totals.delivered), read: rate(totals.read), failure: rate(totals.failed) },
      // Buckets are `timestamp` (no time zone) values in UTC, and the pg driver adapter reads `timestamp` as UTC
      // whatever the process time zone, so the Date is already the right instant.
      series: series.map((s) => ({ bucket: s.bucket.toISOString(), sent: s.sent, delivered: s.delivered, read: s.read, failed: s.failed })),
      failureReasons,
      templates,
    };
  }
}

