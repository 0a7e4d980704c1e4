import { sql, type Insertable } from 'kysely';
import type { Db } from '../../src/core/db/db.js';
import { columns, type WebhookInboxTable } from '../../src/core/db/database.js';

/**
 * A webhook delivery is in one of two tables (docs/storage.md, "The inbox"): `webhook_inbox` while it waits or is a
 * dead letter, `webhook_deliveries` once processed. The tests read them as one: the weekly table's columns (an inbox
 * row has no processed_at), under the application's field names.
 */
export function allDeliveries(db: Db) {
  const k = db.on();
  const inboxColumns = columns.webhook_deliveries.map((c) =>
    c === 'processed_at as processedAt' ? sql<Date | null>`NULL::timestamptz`.as('processedAt') : c,
  ) as unknown as typeof columns.webhook_deliveries;
  return k
    .selectFrom('webhook_inbox as webhook_deliveries' as 'webhook_deliveries')
    .select(inboxColumns)
    .unionAll(k.selectFrom('webhook_deliveries').select(columns.webhook_deliveries))
    .as('d');
}

/** A delivery row to store as given: into the inbox unless it is `processed`. */
export type DeliveryInsert = Insertable<WebhookInboxTable> & { processed_at?: Date | null };

/** Stores each row in the table a delivery in its status is in; returns the rows (as allDeliveries reads them). */
export async function storeDeliveries(db: Db, rows: DeliveryInsert[]) {
  const out = [];
  for (const row of rows) {
    if (row.status === 'processed') {
      out.push(
        await db
          .on()
          .insertInto('webhook_deliveries')
          .values(row)
          .returning(columns.webhook_deliveries)
          .executeTakeFirstOrThrow(),
      );
    } else {
      const { processed_at: none, ...waiting } = row;
      if (none) throw new Error('a delivery not processed has no processed_at');
      const stored = await db
        .on()
        .insertInto('webhook_inbox')
        .values(waiting)
        .returning(columns.webhook_inbox)
        .executeTakeFirstOrThrow();
      out.push({ ...stored, processedAt: null });
    }
  }
  return out;
}
