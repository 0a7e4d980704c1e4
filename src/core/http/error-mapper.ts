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
  return domain instanceof DomainError ? answerOf(domain) : undefined;
}

function answerOf(domain: DomainError): HttpErrorAnswer {
  const headers: Record<string, string> = domain.retryAfterSeconds !== undefined ? { 'Retry-After': String(domain.retryAfterSeconds) } : {};
  return { statusCode: STATUS[domain.kind], message: domain.message, errors: domain.fields, headers };
}

/** How a synchronous upstream rejection of a send is answered, and whether the answer may be replayed. */
export interface SendRejection extends HttpErrorAnswer {
  /** False for retryable outcomes (429, 502): an Idempotency-Key retry must try again. */
  final: boolean;
}

/**
 * For POST /messages, in place of the send service's own switch, given the upstream failure's domain error: 424
 * credential or blocked account, 429 + Retry-After rate limit, 502 unavailable or timed out (outcome unknown), 422
 * rejected as sent.
 */
export function sendRejection(failure: DomainError): SendRejection {
  return { ...answerOf(failure), final: failure.kind !== 'upstream_rate_limited' && failure.kind !== 'upstream_unavailable' };
}
