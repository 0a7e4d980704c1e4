import { DomainError, isTranslatableError, type DomainErrorKind, type FieldError } from '../errors/domain-errors.js';

/** Everything an error answer needs besides its `data`: status, envelope message, field errors, headers. */
export interface HttpErrorAnswer {
  statusCode: number;
  message: string;
  errors?: FieldError[];
  headers: Record<string, string>;
}

/** The one table from what went wrong to the status code that says so. */
const STATUS: Record<DomainErrorKind, number> = {
  not_found: 404,
  gone: 410,
  conflict: 409,
  invalid_input: 422,
  malformed: 400,
  too_large: 413,
  timed_out: 408,
  unauthenticated: 401,
  forbidden: 403,
  too_many_attempts: 429,
  temporarily_unavailable: 503,
  // The operator has to act (reconnect, or get the account unblocked): the request depended on that.
  credential_rejected: 424,
  account_blocked: 424,
  upstream_rate_limited: 429,
  upstream_unavailable: 502,
  upstream_rejected: 422,
};

/** A domain error, or a client's error not translated by its caller (an upstream error), as an HTTP answer; undefined for anything else. */
export function httpAnswerOf(error: unknown): HttpErrorAnswer | undefined {
  const domain = isTranslatableError(error) ? error.toDomainError() : error;
  if (!(domain instanceof DomainError)) return undefined;
  return { ...httpAnswerOfKind(domain), errors: domain.fields };
}

/**
 * What went wrong, by kind, as an HTTP answer: the status that says so, the message, and Retry-After when there
 * is a time to come back. Also how the send presenter answers a rejected send (which is no thrown error).
 */
export function httpAnswerOfKind(what: {
  kind: DomainErrorKind;
  message: string;
  retryAfterSeconds?: number;
}): HttpErrorAnswer {
  const headers: Record<string, string> =
    what.retryAfterSeconds !== undefined ? { 'Retry-After': String(what.retryAfterSeconds) } : {};
  return { statusCode: STATUS[what.kind], message: what.message, headers };
}
