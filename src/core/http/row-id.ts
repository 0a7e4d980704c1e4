/** The largest value of a PostgreSQL `int` (serial) id. */
const MAX_INT4 = 2_147_483_647;

/** Whether `id` can name a stored row (a positive `int`): anything else is simply not found, never a query error. */
export function isRowId(id: number): boolean {
  return Number.isSafeInteger(id) && id >= 1 && id <= MAX_INT4;
}
