/**
 * Whether `id` can name a stored row: a positive safe integer (ids are 64-bit in PostgreSQL and JSON numbers in
 * the API, exact up to 2^53 - 1). Anything else, such as a path id of twenty digits that parseInt rounds, is
 * simply not found, never a query error.
 */
export function isRowId(id: number): boolean {
  return Number.isSafeInteger(id) && id >= 1;
}
