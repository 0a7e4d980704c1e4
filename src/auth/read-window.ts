/**
 * What of a business account's stored history its holder may read (audit 2, finding 5): nothing stored before it
 * took the account over from another organization (`heldSince`), nothing stored after its credentials failed or
 * it disconnected (`readableUntil`, exclusive) until it proves a token again. Both open: everything.
 */
export interface ReadWindow {
  since?: Date;
  until?: Date;
}

export function readWindowOf(account: { heldSince: Date | null; readableUntil: Date | null }): ReadWindow {
  return {
    ...(account.heldSince ? { since: account.heldSince } : {}),
    // The lists' `until` is inclusive; the cut-off is not.
    ...(account.readableUntil ? { until: new Date(account.readableUntil.getTime() - 1) } : {}),
  };
}

/** A list filter's since/until narrowed to the window (the later since, the earlier until). */
export function withinWindow<F extends { since?: Date; until?: Date }>(filter: F, window: ReadWindow | undefined): F {
  if (!window) return filter;
  const since = [filter.since, window.since]
    .filter((d): d is Date => d !== undefined)
    .sort((a, b) => b.getTime() - a.getTime())[0];
  const until = [filter.until, window.until]
    .filter((d): d is Date => d !== undefined)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  return { ...filter, since, until };
}

/** Whether something stored at `at` is inside the window. */
export function inWindow(at: Date, window: ReadWindow | undefined): boolean {
  return !window || ((!window.since || at >= window.since) && (!window.until || at <= window.until));
}
