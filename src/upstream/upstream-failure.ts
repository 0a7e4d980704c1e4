import type { DomainError } from '../core/errors/domain-errors.js';
import { UpstreamError, type UpstreamFailureOptions } from './upstream.error.js';

export type { UpstreamFailureOptions };

/** The domain error for a failed upstream call (see UpstreamError.toDomainError). */
export function upstreamFailure(error: UpstreamError, options: UpstreamFailureOptions = {}): DomainError {
  return error.toDomainError(options);
}

/** For `.catch()`: an UpstreamError becomes its domain error, anything else passes through unchanged. */
export function asDomainFailure(options: UpstreamFailureOptions = {}): (error: unknown) => never {
  return (error) => {
    throw error instanceof UpstreamError ? upstreamFailure(error, options) : error;
  };
}

/** A sync's listing cannot be wrong as sent: a permanent error there means the upstream misbehaved. */
export const SYNC_FAILURE: UpstreamFailureOptions = { permanent: 'unavailable' };
