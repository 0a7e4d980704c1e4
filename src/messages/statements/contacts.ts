// One contact's messages (src/contacts: export, erasure) and content retention (src/retention): builders of the
// `messages` table run by MessagesRepository (../messages.repository.ts), the table's one owner.
import type { Expression, Kysely, SqlBool } from 'kysely';
import { columns, type Database } from '../../core/db/database.js';
import { now } from '../../core/db/pg.js';
import type { StoredMessage } from './reads.js';
import type { Eb } from './shared.js';

/** Whether a message of the account names one of these addresses (recipient, sender or user id). */
function ofContact(eb: Eb, addresses: string[]): Expression<SqlBool> {
  return eb.or([
    eb('to', '=', eb.fn.any(eb.val(addresses))),
    eb('from', '=', eb.fn.any(eb.val(addresses))),
    eb('user_id', '=', eb.fn.any(eb.val(addresses))),
  ]);
}

/** Every address the account's messages pair with these: a phone number's user id, a user id's phone number. */
export async function addressesOf(
  db: Kysely<Database>,
  businessAccountId: string,
  addresses: string[],
): Promise<string[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['to', 'from', 'user_id as userId'])
    .distinct()
    .where('business_account_id', '=', businessAccountId)
    .where('erased_at', 'is', null)
    .where((eb) => ofContact(eb, addresses))
    .limit(100)
    .execute();
  const found = new Set(addresses);
  for (const r of rows) for (const a of [r.to, r.from, r.userId]) if (a !== null) found.add(a);
  return [...found];
}

/** The contact's messages after message `afterId`, oldest first, inside the reader's window. */
export async function pageOfContact(
  db: Kysely<Database>,
  businessAccountId: string,
  addresses: string[],
  q: { afterId: number; limit: number; since?: Date; until?: Date },
): Promise<StoredMessage[]> {
  let rows = db
    .selectFrom('messages')
    .select(columns.messages)
    .where('business_account_id', '=', businessAccountId)
    .where('erased_at', 'is', null)
    .where('id', '>', q.afterId)
    .where((eb) => ofContact(eb, addresses));
  if (q.since) rows = rows.where('created_at', '>=', q.since);
  if (q.until) rows = rows.where('created_at', '<=', q.until);
  return rows.orderBy('id').limit(q.limit).execute();
}

/**
 * Content retention (src/retention): up to `limit` messages of these accounts created in [since, before) that
 * still hold content lose it (`content` null, `content_scrubbed_at` set); the row, its addresses, statuses, errors
 * and pricing stay, and the messages feed does not move (its trigger watches status, error, pricing and wamid).
 * Returns how many; fewer than `limit` means none is left in the range.
 */
export async function scrubContentBatch(
  db: Kysely<Database>,
  businessAccountIds: string[],
  range: { since: Date | null; before: Date },
  limit: number,
): Promise<number> {
  const found = await db
    .selectFrom('messages')
    .select('id')
    .where('business_account_id', '=', (eb) => eb.fn.any(eb.val(businessAccountIds)))
    .where('created_at', '<', range.before)
    .where('created_at', '>=', range.since ?? new Date(0))
    .where('content', 'is not', null)
    .limit(limit)
    .forUpdate()
    .execute();
  if (found.length === 0) return 0;
  await db
    .updateTable('messages')
    .set({ content: null, content_scrubbed_at: now() })
    .where('id', '=', (eb) => eb.fn.any(eb.val(found.map((r) => r.id))))
    .execute();
  return found.length;
}

/**
 * Erases up to `limit` of the contact's messages in the caller's transaction: content, addresses, the wamid and
 * the error's detail go; the row (type, template, status, times, pricing, error code) stays for the counts.
 * Returns the erased rows' wamids (their status events go with them); an empty answer: none left.
 */
export async function eraseContactBatch(
  db: Kysely<Database>,
  businessAccountId: string,
  addresses: string[],
  limit: number,
): Promise<{ count: number; wamids: string[] }> {
  const rows = await db
    .selectFrom('messages')
    .select(['id', 'upstream_message_id as wamid'])
    .where('business_account_id', '=', businessAccountId)
    .where('erased_at', 'is', null)
    .where((eb) => ofContact(eb, addresses))
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .execute();
  if (rows.length === 0) return { count: 0, wamids: [] };
  await db
    .updateTable('messages')
    .set({
      content: null,
      to: null,
      from: null,
      user_id: null,
      upstream_message_id: null,
      error_detail: null,
      erased_at: now(),
    })
    .where('id', '=', (eb) => eb.fn.any(eb.val(rows.map((r) => r.id))))
    .execute();
  return { count: rows.length, wamids: rows.flatMap((r) => (r.wamid === null ? [] : [r.wamid])) };
}
