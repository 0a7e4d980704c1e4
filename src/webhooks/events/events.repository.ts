import { Injectable } from '@nestjs/common';
import type { Event } from '../../generated/prisma/client.js';
import { skipTake } from '../../core/http/pagination.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import type { EventKind } from '../processing/classify.js';

export interface EventFilter {
  kind?: EventKind;
  status?: string;
  messageId?: string;
  recipient?: string;
  since?: Date;
  until?: Date;
}

const EVENT_COLUMNS = `id, delivery_id AS "deliveryId", waba_id AS "wabaId", phone_number_id AS "phoneNumberId", event_type AS "eventType",
  kind, title, status, recipient, message_id AS "messageId", upstream_timestamp AS "upstreamTimestamp", error_code AS "errorCode",
  error_title AS "errorTitle", error_detail AS "errorDetail", raw, dedupe_key AS "dedupeKey", processed, processed_at AS "processedAt",
  attempts, created_at AS "createdAt"`;

/** The filters as SQL on `events` ($1 is the business account), and a name per shape for prepared statements. */
function whereOf(wabaId: string, filter: EventFilter): { sql: string; values: unknown[]; shape: string } {
  const values: unknown[] = [wabaId];
  const conditions = ['waba_id = $1'];
  let shape = '';
  const add = (column: string, op: string, value: unknown, letter: string) => {
    if (value === undefined) return;
    values.push(value);
    conditions.push(`${column} ${op} $${values.length}`);
    shape += letter;
  };
  add('kind', '=', filter.kind, 'k');
  add('status', '=', filter.status, 's');
  add('message_id', '=', filter.messageId, 'm');
  add('recipient', '=', filter.recipient, 'r');
  add('created_at', '>=', filter.since, 'f');
  add('created_at', '<=', filter.until, 'u');
  return { sql: conditions.join(' AND '), values, shape: shape || 'all' };
}

/**
 * Event reads. Each takes the business account (wabaId) first: the caller has checked it is the tenant's.
 * The page is read on node-postgres: 50 rows with their raw payloads through Prisma's client cost several
 * milliseconds of CPU per request.
 */
@Injectable()
export class EventsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Newest first; served by the (waba_id[, kind|status|recipient], created_at desc, id desc) indexes. */
  async page(wabaId: string, filter: EventFilter, page: { page: number; limit: number }): Promise<{ rows: Event[]; total: number }> {
    const where = whereOf(wabaId, filter);
    const { skip, take } = skipTake(page);
    const n = where.values.length;
    const [{ rows }, total] = await Promise.all([
      this.prisma.pool.query<Event>({
        name: `sql_events_page_${where.shape}`,
        text: `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        values: [...where.values, take, skip],
      }),
      this.count(wabaId, filter, where),
    ]);
    return { rows, total };
  }

  /**
   * Exact either way. Account, kind and status alone: the totals that triggers on `events` keep in
   * `event_counts` (a sum over a few rows, however many events). The selective filters (messageId, recipient,
   * since/until) fall back to COUNT(*) on their indexes. `event_counts` keeps a NULL status as '', so an empty
   * status filter is counted the slow way too.
   */
  private async count(wabaId: string, filter: EventFilter, where: ReturnType<typeof whereOf>): Promise<number> {
    const maintained = filter.messageId === undefined && filter.recipient === undefined && !filter.since && !filter.until && filter.status !== '';
    const { rows } = maintained
      ? await this.prisma.pool.query<{ n: string }>({
          name: `sql_event_counts_${where.shape}`,
          text: `SELECT COALESCE(sum(count), 0)::text AS n FROM event_counts WHERE ${where.sql}`,
          values: where.values,
        })
      : await this.prisma.pool.query<{ n: string }>({
          name: `sql_events_count_${where.shape}`,
          text: `SELECT count(*)::text AS n FROM events WHERE ${where.sql}`,
          values: where.values,
        });
    return Number(rows[0]!.n);
  }

  findInAccounts(wabaIds: string[], id: number): Promise<Event | null> {
    if (wabaIds.length === 0) return Promise.resolve(null);
    return this.prisma.event.findFirst({ where: { id, wabaId: { in: wabaIds } } });
  }
}
