import type { Insertable } from 'kysely';
import type { Db } from '../../src/core/db/db.js';
import { columns, type MessageTable } from '../../src/core/db/database.js';
import { allDeliveries, storeDeliveries, type DeliveryInsert } from './delivery-rows.js';
import { eventColumns } from '../../src/events/statements/event-columns.js';
import { countRows, rowWhere, updateAccount } from './db-rows.js';

/**
 * Reads (and a few arrangements) of the messaging tables for the e2e tests' assertions, in their usual shapes: Kysely on
 * the app's pool (most through db-rows.ts), rows under the application's field names, int8 ids and counts as numbers.
 */
interface OnDb {
  db: Db;
}

/** A business account and phone number as the tests' tenants carry them. */
interface Account {
  phoneNumberId: string;
  wabaId: string;
}

/** The message row `id`. */
export const messageRow = (app: OnDb, id: number) => rowWhere(app.db, 'messages', { id });

/** How many messages are stored to `to`, of a business account, in a status (each when given). */
export const countMessages = (app: OnDb, where: { to?: string; businessAccountId?: string; status?: string }) =>
  countRows(
    app.db,
    'messages',
    given({ to: where.to, business_account_id: where.businessAccountId, status: where.status }),
  );

/** The webhook deliveries naming `wabaId` (waiting, dead letters and processed), oldest first. */
export const deliveriesOf = (app: OnDb, wabaId: string) =>
  app.db
    .on()
    .selectFrom(allDeliveries(app.db))
    .selectAll()
    .where((eb) => eb(eb.val(wabaId), '=', eb.fn.any('wabaIds')))
    .orderBy('id')
    .execute();

/** How many webhook deliveries name `wabaId` (only those in `status` when given). */
export async function countDeliveries(app: OnDb, wabaId: string, status?: string): Promise<number> {
  let query = app.db
    .on()
    .selectFrom(allDeliveries(app.db))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where((eb) => eb(eb.val(wabaId), '=', eb.fn.any('wabaIds')));
  if (status !== undefined) query = query.where('status', '=', status);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** The events of `wabaId`, oldest first, as the application reads them (the lean columns named: event-columns.ts). */
export const eventsOf = (app: OnDb, wabaId: string) =>
  app.db.on().selectFrom('events').select(eventColumns).where('waba_id', '=', wabaId).orderBy('id').execute();

/** How many events `wabaId` has (only those processed or not, or to `recipient`, when given). */
export const countEvents = (app: OnDb, wabaId: string, where: { processed?: boolean; recipient?: string } = {}) =>
  countRows(app.db, 'events', given({ waba_id: wabaId, processed: where.processed, recipient: where.recipient }));

/** Opens `recipient`'s 24 h window on the account's number, as the worker does for an inbound message. */
export async function openWindow(app: OnDb, account: Account, recipient: string, lastInboundAt = new Date()) {
  await app.db
    .on()
    .insertInto('conversation_windows')
    .values({
      phone_number_id: account.phoneNumberId,
      recipient,
      waba_id: account.wabaId,
      last_inbound_at: lastInboundAt,
    })
    .execute();
}

/** Sets the creation time of messages `ids` (test data the API cannot make). */
export async function backdateMessages(app: OnDb, ids: number[], createdAt: Date) {
  await app.db
    .on()
    .updateTable('messages')
    .set({ created_at: createdAt, updated_at: new Date() })
    .where('id', 'in', ids)
    .execute();
}

/** Stores messages as given (`updated_at` now), returning their rows. */
export const insertMessages = (app: OnDb, rows: Array<Omit<Insertable<MessageTable>, 'updated_at'>>) =>
  app.db
    .on()
    .insertInto('messages')
    .values(rows.map((row) => ({ ...row, updated_at: new Date() })))
    .returning(columns.messages)
    .execute();

/** Replaces the stored (sealed) access token of `wabaId` behind the app's back, as another process would. */
export const storeAccessToken = (app: OnDb, wabaId: string, accessTokenEncrypted: string) =>
  updateAccount(app.db, wabaId, { access_token_encrypted: accessTokenEncrypted });

/**
 * Stores webhook deliveries as given (as the receiver would have: into the inbox, unless `processed`), returning
 * their rows in that order.
 */
export const insertDeliveries = (app: OnDb, rows: DeliveryInsert[]) => storeDeliveries(app.db, rows);

/** The conditions a caller gave: `where` without its undefined entries (db-rows refuses a condition on undefined). */
function given<W extends object>(where: W): W {
  return Object.fromEntries(Object.entries(where).filter(([, value]) => value !== undefined)) as W;
}
