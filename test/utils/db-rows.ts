import { sql, type Expression, type ExpressionBuilder, type Selectable, type SqlBool, type Updateable } from 'kysely';
import { columns, type Database } from '../../src/core/db/database.js';
import type { Db } from '../../src/core/db/db.js';
import type { Row } from '../../src/core/db/rows.js';

// Reading back what the code under test wrote, for any test (Kysely on the test's pool): a row, rows or a count of any
// table by conditions on its columns. test/utils/messaging-rows.ts adds the messaging tables' usual reads.

type Table = keyof typeof columns;
type Column<T extends Table> = keyof Selectable<Database[T]> & string;

/** Conditions on a table's (snake_case) columns, all of which must hold: a value (`null`: IS NULL), or a list (IN). */
export type Where<T extends Table> = {
  [C in Column<T>]?: Selectable<Database[T]>[C] | ReadonlyArray<Selectable<Database[T]>[C]>;
};

function matching<T extends Table>(where: Where<T>) {
  return (eb: ExpressionBuilder<Database, Table>) =>
    eb.and(
      Object.entries(where).map(([column, value]): Expression<SqlBool> => {
        // A condition on undefined would match nothing, and a test counting none would pass for the wrong reason.
        if (value === undefined) throw new Error(`no value for ${column}`);
        const ref = eb.ref(column as never);
        if (value === null) return eb(ref, 'is', null);
        if (!Array.isArray(value)) return eb(ref, '=', value as never);
        return value.length > 0 ? eb(ref, 'in', value as never) : sql<boolean>`false`;
      }),
    );
}

/** Kysely's SELECT on any of the tables (its rows typed loosely: the callers type what they hand on). */
const from = (db: Db, table: Table) => db.on().selectFrom(table);

/**
 * A business account's whole row as the application reads it (`columns.business_accounts`: camelCase fields), by its
 * id or its wabaId; throws when there is none.
 */
export function accountRow(db: Db, by: { id: string } | { wabaId: string }): Promise<Row<'business_accounts'>> {
  return rowWhere(db, 'business_accounts', 'id' in by ? { id: by.id } : { waba_id: by.wabaId });
}

/** The one row of `table` (`columns.<table>`: camelCase fields) that matches `where`; throws when there is none. */
export async function rowWhere<T extends Table>(db: Db, table: T, where: Where<T>): Promise<Row<T>> {
  const row = await from(db, table)
    .select(columns[table] as never)
    .where(matching(where))
    .executeTakeFirstOrThrow();
  return row as unknown as Row<T>;
}

/** How many rows of `table` match `where`. */
export async function countRows<T extends Table>(db: Db, table: T, where: Where<T>): Promise<number> {
  const { n } = await from(db, table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(matching(where))
    .executeTakeFirstOrThrow();
  return n;
}

/**
 * The whole rows of `table` (`columns.<table>`: camelCase fields) that match `where`, ordered by the columns of
 * `orderBy` (ascending) when given, else in whatever order PostgreSQL returns them.
 */
export async function rowsWhere<T extends Table>(
  db: Db,
  table: T,
  where: Where<T>,
  orderBy: Array<Column<T>> = [],
): Promise<Array<Row<T>>> {
  let query = from(db, table)
    .select(columns[table] as never)
    .where(matching(where));
  for (const column of orderBy) query = query.orderBy(column as never);
  return (await query.execute()) as unknown as Array<Row<T>>;
}

/**
 * Sets columns of the business account `wabaId` (a test's change behind the service's back), and its `updated_at` as
 * any change does; throws when there is none.
 */
export async function updateAccount(
  db: Db,
  wabaId: string,
  set: Updateable<Database['business_accounts']>,
): Promise<void> {
  await db
    .on()
    .updateTable('business_accounts')
    .set({ ...set, updated_at: new Date() })
    .where('waba_id', '=', wabaId)
    .returning('id')
    .executeTakeFirstOrThrow();
}
