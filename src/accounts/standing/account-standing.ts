/**
 * A business account's standing with Meta, as its account-level webhooks tell it (account_update,
 * account_alerts): ban state, restrictions, violation, volume pricing tiers and active alerts. Pure: the worker
 * locks the accounts of a chunk, folds the chunk's changes in order with `standingAfter`, and writes each
 * changed account once (BusinessAccountsRepository.lockStandings / writeStandings).
 */

/** restriction_info[] of ACCOUNT_RESTRICTION: `expiration` as Meta sends it (ISO 8601), null when it gave none. */
export interface Restriction {
  type: string;
  expiration: string | null;
}

/** volume_tier_info of VOLUME_BASED_PRICING_TIER_UPDATE, one per (pricing category, region). */
export interface PricingTier {
  pricingCategory: string | null;
  region: string | null;
  tier: string | null;
  effectiveMonth: string | null;
  /** Meta's time of the webhook (ISO 8601). */
  at: string;
}

/** An active account_alerts alert, one per (type, entity). */
export interface AccountAlert {
  type: string | null;
  severity: string | null;
  status: string | null;
  description: string | null;
  entityType: string | null;
  entityId: string | null;
  at: string;
}

export interface AccountStanding {
  /** ban_info.waba_ban_state: DISABLE, SCHEDULE_FOR_DISABLE or REINSTATE; null when Meta never said. */
  banState: string | null;
  banDate: string | null;
  restrictions: Restriction[];
  violationType: string | null;
  pricingTiers: PricingTier[];
  alerts: AccountAlert[];
  /** Meta's time of the newest ban, restriction or violation applied (the last change shown). */
  updatedAt: Date | null;
  /** Meta's time of the last ban, restrictions and violation applied, each on its own: an older one delivered late is ignored. */
  times: Partial<Record<'ban' | 'restrictions' | 'violation', string>>;
}

export type StandingChange =
  | { kind: 'ban'; state: string; date: string | null; at: Date }
  | { kind: 'restrictions'; restrictions: Restriction[]; at: Date }
  | { kind: 'violation'; violationType: string; at: Date }
  | { kind: 'pricing_tier'; tier: Omit<PricingTier, 'at'>; at: Date }
  | { kind: 'alert'; alert: Omit<AccountAlert, 'at'>; at: Date };

/** The standing after one change (a new object; `current` is not modified). */
export function standingAfter(current: AccountStanding, change: StandingChange): AccountStanding {
  const at = change.at.toISOString();
  switch (change.kind) {
    case 'ban':
    case 'restrictions':
    case 'violation': {
      // Each on its own clock: Meta promises no order, and a restriction older than the last ban is still news.
      const last = current.times[change.kind];
      if (last !== undefined && at < last) return current;
      const next = {
        ...current,
        times: { ...current.times, [change.kind]: at },
        updatedAt: current.updatedAt && current.updatedAt > change.at ? current.updatedAt : change.at,
      };
      if (change.kind === 'ban') return { ...next, banState: change.state, banDate: change.date };
      if (change.kind === 'restrictions') return { ...next, restrictions: change.restrictions };
      return { ...next, violationType: change.violationType };
    }
    case 'pricing_tier': {
      const same = (t: PricingTier) =>
        t.pricingCategory === change.tier.pricingCategory && t.region === change.tier.region;
      const existing = current.pricingTiers.find(same);
      if (existing && existing.at > at) return current;
      return { ...current, pricingTiers: [...current.pricingTiers.filter((t) => !same(t)), { ...change.tier, at }] };
    }
    case 'alert': {
      const same = (a: AccountAlert) => a.type === change.alert.type && a.entityId === change.alert.entityId;
      const existing = current.alerts.find(same);
      if (existing && existing.at > at) return current;
      const others = current.alerts.filter((a) => !same(a));
      // Only ACTIVE alerts are kept: any other status (Meta: NONE, RESOLVED) clears the alert.
      return { ...current, alerts: change.alert.status === 'ACTIVE' ? [...others, { ...change.alert, at }] : others };
    }
  }
}

/** Restrictions in force at `now` (no expiration, or one still ahead). */
export function activeRestrictions(restrictions: Restriction[], now = new Date()): Restriction[] {
  return restrictions.filter((r) => {
    if (r.expiration === null) return true;
    const until = Date.parse(r.expiration);
    return Number.isNaN(until) || until > now.getTime();
  });
}
