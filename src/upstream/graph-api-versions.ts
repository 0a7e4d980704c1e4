/**
 * Meta's Graph API versions and when each stops working (Meta's changelog, as of 2026-11: v27.0 is current).
 * The one place these dates live: the service warns, and exposes a gauge, when the version its UPSTREAM_BASE_URL
 * names comes within EXPIRY_WARNING_DAYS of its date. Add a row when Meta publishes a version's expiry.
 */
export const GRAPH_API_EXPIRIES: Readonly<Record<string, string>> = {
  'v20.0': '2026-09-24',
  'v23.0': '2027-10-08',
  'v24.0': '2028-02-18',
  'v25.0': '2028-07-29',
};

export const EXPIRY_WARNING_DAYS = 180;

const DAY_MS = 24 * 3600 * 1000;

/** The version a Graph API base URL names (`https://graph.facebook.com/v25.0` → `v25.0`), or null. */
export function graphApiVersionOf(baseUrl: string): string | null {
  let path: string;
  try {
    path = new URL(baseUrl).pathname;
  } catch {
    return null;
  }
  const match = /\/(v\d{1,3}\.\d{1,3})\/?$/.exec(path);
  return match ? match[1]! : null;
}

export interface VersionStanding {
  version: string | null;
  /** Meta's published end of the version; null when the table does not know it. */
  expiresAt: Date | null;
  /** Whole days left (negative once expired); null when the expiry is unknown. */
  daysLeft: number | null;
  /** Within EXPIRY_WARNING_DAYS of its expiry, or past it. */
  expiring: boolean;
}

export function versionStanding(baseUrl: string, now = new Date()): VersionStanding {
  const version = graphApiVersionOf(baseUrl);
  const date = version ? GRAPH_API_EXPIRIES[version] : undefined;
  if (!version || !date) return { version, expiresAt: null, daysLeft: null, expiring: false };
  const expiresAt = new Date(`${date}T00:00:00Z`);
  const daysLeft = Math.floor((expiresAt.getTime() - now.getTime()) / DAY_MS);
  return { version, expiresAt, daysLeft, expiring: daysLeft <= EXPIRY_WARNING_DAYS };
}
