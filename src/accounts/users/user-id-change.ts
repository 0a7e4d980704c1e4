/**
 * A user of a business account now known by another address (Meta's `user_changed_user_id` system message, or
 * `user_changed_number` with its previous ids): what the service keeps per user under `previous` (the 24 h window,
 * a marketing stop, a block, the messages' user id) follows it to `next`. Phone digits or business-scoped user ids.
 */
export interface UserIdChange {
  /** The webhook's business account (entry id): a change never reaches another tenant's rows. */
  wabaId: string;
  previous: string;
  next: string;
}

/** One change per (account, previous, next), in that key order (set-based statements lock rows in one order). */
export function distinctChanges(changes: UserIdChange[]): UserIdChange[] {
  const seen = new Map<string, UserIdChange>();
  for (const c of changes) if (c.previous !== c.next) seen.set(`${c.wabaId}\u0000${c.previous}\u0000${c.next}`, c);
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
}

/** The arrays of an unnest over the changes. */
export function changeColumns(changes: UserIdChange[]): { waba: string[]; old: string[]; nu: string[] } {
  return { waba: changes.map((c) => c.wabaId), old: changes.map((c) => c.previous), nu: changes.map((c) => c.next) };
}
