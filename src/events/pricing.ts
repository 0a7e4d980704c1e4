// Meta's pricing vocabulary (per-message pricing, reference "Statuses"): the analytics list every value, zeros included;
// a stored status packs its pricing object by these lists (statements/lean-encoding.ts, `events.lean`), so they are
// APPEND ONLY: a value's position is stored.

/** Meta's pricing types, always listed in analytics, zeros included. Append only (positions are stored). */
export const PRICING_TYPES = ['regular', 'free_customer_service', 'free_entry_point'] as const;

/**
 * Meta's pricing categories (2026-10), always listed in analytics, zeros included; any other category Meta sends is
 * listed as it comes. `service` (non-template messages) is billed since 2026-10-01, the `group_*` ones are messages to
 * groups, `general_purpose_ai` Meta Business Agent's. Append only (positions are stored).
 */
export const PRICING_CATEGORIES = [
  'marketing',
  'utility',
  'authentication',
  'authentication_international',
  'service',
  'marketing_lite',
  'referral_conversion',
  'group_marketing',
  'group_utility',
  'group_service',
  'general_purpose_ai',
] as const;
