// Moved to core/rows (it is about stored rows, not HTTP); kept here for the callers not moved yet.
export { isRowId } from '../rows/row-id.js';
