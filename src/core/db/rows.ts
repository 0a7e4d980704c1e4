import type { Selectable } from 'kysely';
import { columns, type Database } from './database.js';

type Tables = keyof typeof columns;
type ColumnOf<C> = C extends `${infer Name} as ${string}` ? Name : C;
type FieldOf<C> = C extends `${string} as ${infer Field}` ? Field : C;

/**
 * A whole row of `table` as the application reads it (`select(columns.<table>)`): each column under its model field's
 * name (`organization_id` as `organizationId`), typed as read. The row types of the repositories (`BusinessAccount`,
 * `Operator`, …) are these.
 */
export type Row<T extends Tables> = {
  [C in (typeof columns)[T][number] as FieldOf<C>]: Selectable<Database[T]>[ColumnOf<C> &
    keyof Selectable<Database[T]>];
};

/**
 * The columns of `table` under `alias` (`o.organization_id as organizationId`, …): a whole row read from a join, where
 * the joined tables share column names (`id`, `created_at`). Typed: the row comes back as `Row<table>`.
 */
export function columnsOf<T extends Tables, A extends string>(
  table: T,
  alias: A,
): Array<`${A}.${(typeof columns)[T][number]}`> {
  return qualified(alias, columns[table]);
}

/** A list of columns (`name`, `name as field`) under `alias`, typed as Kysely reads them. */
export function qualified<A extends string, C extends string>(alias: A, list: readonly C[]): Array<`${A}.${C}`> {
  return list.map((c): `${A}.${C}` => `${alias}.${c}`);
}

/**
 * The columns of `table` but those named in `except` (by column name): a statement that reads all of a row but a few
 * columns. A column added to the table is read here too, and the row type follows.
 */
export function columnsExcept<T extends Tables, X extends ColumnOf<(typeof columns)[T][number]>>(
  table: T,
  except: readonly X[],
): Array<Exclude<(typeof columns)[T][number], X | `${X} as ${string}`>> {
  const left = (c: string) => !except.some((x) => c === x || c.startsWith(`${x} as `));
  return (columns[table] as readonly (typeof columns)[T][number][]).filter(
    (c): c is Exclude<(typeof columns)[T][number], X | `${X} as ${string}`> => left(c),
  );
}
