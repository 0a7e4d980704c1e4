/**
 * Meta's error codes, in one table that every caller reads: the client's classification of a failed call,
 * the category stored with a failed message, whether it is a rate limit and how long to wait by default.
 * (The simulator keeps its own list: it plays Meta, it does not interpret it.)
 */

/**
 * What a caller should do about a failed upstream call:
 * - retryable: back off and try again (throttling, Meta outage, network, timeout);
 * - permanent: this request will never succeed as sent (recipient, template, parameters);
 * - credential: the business account's token is invalid or lacks permission; stop its sends;
 * - account_blocked: Meta restricted the business account; stop its sends.
 */
export type UpstreamErrorClass = 'retryable' | 'permanent' | 'credential' | 'account_blocked';

/** The category shown with a failed message's error. */
/**
 * `throughput`: Meta refused the number's pace (130429) or the pacer held the send (nothing reached Meta);
 * `pair_rate_limit`: too many messages to the same user in a short time (131056). Both are worth retrying later.
 */
export type ErrorCategory =
  'retryable' | 'permanent' | 'policy' | 'window' | 'credential' | 'throughput' | 'pair_rate_limit';

export interface MetaErrorEntry {
  /** Undefined: the code alone does not decide, the HTTP status does (a 5xx is still worth retrying). */
  errorClass?: UpstreamErrorClass;
  category: ErrorCategory;
  rateLimit: boolean;
  /** Seconds to wait when the answer carries no Retry-After. */
  retryAfterSeconds?: number;
  /** A passing failure of Meta's platform: the same message may be sent again as it was (a campaign does). */
  transient?: boolean;
  /** The user stopped marketing messages from this business (a failed status with it records the stop). */
  marketingStop?: boolean;
}

const retryable = (
  rateLimit = false,
  retryAfterSeconds?: number,
  category: ErrorCategory = 'retryable',
): MetaErrorEntry => ({ errorClass: 'retryable', category, rateLimit, retryAfterSeconds });
const transient: MetaErrorEntry = { ...retryable(), transient: true };
const credential: MetaErrorEntry = { errorClass: 'credential', category: 'credential', rateLimit: false };
const blocked: MetaErrorEntry = { errorClass: 'account_blocked', category: 'policy', rateLimit: false };
const policy: MetaErrorEntry = { category: 'policy', rateLimit: false };

const CATALOGUE: ReadonlyMap<number, MetaErrorEntry> = new Map<number, MetaErrorEntry>([
  // Transient platform errors.
  [1, transient], // unknown error (is_transient)
  [2, transient], // service temporarily unavailable
  [131000, transient], // something went wrong
  [131016, transient], // service overloaded
  [131057, transient], // account in maintenance mode
  [133004, transient], // server temporarily unavailable
  // Rate limits.
  [4, retryable(true, 1)], // application request limit
  [80007, retryable(true, 1)], // WABA rate limit
  [130429, retryable(true, 1, 'throughput')], // cloud API throughput
  [131056, retryable(true, 60, 'pair_rate_limit')], // (business, consumer) pair rate limit: Meta asks for about a minute
  // The token: invalid, expired or lacking permission (200–299 are permission codes, see credentialRange).
  [0, credential], // AuthException
  [3, credential], // API method / capability
  [10, credential], // permission denied
  [190, credential], // access token expired or invalid
  // The account restricted by Meta.
  [368, blocked], // temporarily blocked for policy violations
  [130497, blocked], // business account restricted from messaging users in this country
  [131031, blocked], // business account locked
  [131042, blocked], // business eligibility payment issue
  // Permanent for this message, for policy reasons.
  [131048, policy], // spam rate limit hit
  [131049, policy], // not delivered to maintain healthy ecosystem engagement
  [131050, { ...policy, marketingStop: true }], // user stopped marketing messages
  // Outside the customer service window.
  [131047, { category: 'window', rateLimit: false }], // re-engagement message
]);

/** The entry for a Meta error code, or undefined for a code the catalogue does not list. */
export function metaErrorOf(code: number | null | undefined): MetaErrorEntry | undefined {
  if (code === undefined || code === null) return undefined;
  if (code >= 200 && code <= 299) return credential;
  return CATALOGUE.get(code);
}

/**
 * Classifies on Meta's `code` first (Meta's advice: key on the code, not on HTTP status or titles), and
 * falls back on the HTTP status for codes not listed, e.g. a 5xx from a proxy with no Meta body.
 */
export function classifyUpstreamError(code: number | undefined, httpStatus: number | undefined): UpstreamErrorClass {
  const known = metaErrorOf(code)?.errorClass;
  if (known) return known;
  if (httpStatus !== undefined && (httpStatus >= 500 || httpStatus === 429)) return 'retryable';
  if (code === undefined && httpStatus === 401) return 'credential';
  return 'permanent';
}

/** The category stored with a failed message: the code's, or else its class's. */
export function errorCategoryOf(code: number | null | undefined, errorClass?: string): ErrorCategory {
  const known = metaErrorOf(code);
  if (known) return known.category;
  if (errorClass === 'retryable' || errorClass === 'credential') return errorClass;
  if (errorClass === 'account_blocked') return 'policy';
  return 'permanent';
}

/** Whether the code says "slow down" (answered 429 with Retry-After) rather than "the platform failed". */
export function isRateLimit(code: number | null | undefined): boolean {
  return metaErrorOf(code)?.rateLimit ?? false;
}

/** Seconds to wait after a rate limit whose answer had no Retry-After. */
export function defaultRetryAfterSeconds(code: number | null | undefined): number {
  return metaErrorOf(code)?.retryAfterSeconds ?? 1;
}

/** Meta refused the send over the number's throughput (130429): nothing was sent, the number must slow down. */
export function isThroughputRefusal(code: number | null | undefined): boolean {
  return metaErrorOf(code)?.category === 'throughput';
}

/** A passing failure of Meta's platform (is_transient): the same message may be sent again as it was. */
export function isTransientPlatformError(code: number | null | undefined): boolean {
  return metaErrorOf(code)?.transient ?? false;
}

/** The user stopped marketing messages (131050): a failed status with this code records the stop. */
export function isMarketingStop(code: number | null | undefined): boolean {
  return metaErrorOf(code)?.marketingStop ?? false;
}
