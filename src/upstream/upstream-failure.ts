import { AccountBlocked, CredentialRejected, UpstreamRateLimited, UpstreamRejected, UpstreamUnavailable, type DomainError } from '../core/errors/domain-errors.js';
import { defaultRetryAfterSeconds, isRateLimit } from './meta-error-catalogue.js';
import { UpstreamError } from './upstream.error.js';

export interface UpstreamFailureOptions {
  /**
   * What a permanent upstream error means for this call: the caller's request was wrong (a send: 422), or the
   * upstream misbehaved on a call that cannot be wrong (a sync's listing: 502). Default: rejected.
   */
  permanent?: 'rejected' | 'unavailable';
  /** Said with an unavailable upstream whose outcome is unknown (a send that timed out). */
  outcomeUnknownNote?: string;
  /** What was being done, put before the upstream's reason ("webhook subscription: Permissions error (200)"). */
  during?: string;
}

/** The domain error for a failed upstream call, read from its class and the Meta error catalogue. */
export function upstreamFailure(error: UpstreamError, options: UpstreamFailureOptions = {}): DomainError {
  const reason = options.during ? `${options.during}: ${error.reason}` : error.reason;
  switch (error.errorClass) {
    case 'credential':
      return new CredentialRejected(reason);
    case 'account_blocked':
      return new AccountBlocked(reason);
    case 'retryable':
      if (isRateLimit(error.code)) return new UpstreamRateLimited(reason, error.retryAfterSeconds ?? defaultRetryAfterSeconds(error.code));
      return new UpstreamUnavailable(reason, error.isTimeout ? options.outcomeUnknownNote : undefined);
    case 'permanent':
      return options.permanent === 'unavailable' ? new UpstreamUnavailable(reason) : new UpstreamRejected(reason);
  }
}

/** For `.catch()`: an UpstreamError becomes its domain error, anything else passes through unchanged. */
export function asDomainFailure(options: UpstreamFailureOptions = {}): (error: unknown) => never {
  return (error) => {
    throw error instanceof UpstreamError ? upstreamFailure(error, options) : error;
  };
}

/** A sync's listing cannot be wrong as sent: a permanent error there means the upstream misbehaved. */
export const SYNC_FAILURE: UpstreamFailureOptions = { permanent: 'unavailable' };
