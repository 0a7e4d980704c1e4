/**
 * What went wrong, in the domain's words. Services throw these and never pick a status code: the one
 * mapper (core/http/error-mapper.ts) turns each kind into an HTTP answer in the spec's envelope.
 */
export interface FieldError {
  field: string;
  message: string;
}

export type DomainErrorKind =
  | 'not_found'
  | 'gone'
  | 'conflict'
  | 'invalid_input'
  | 'malformed'
  | 'too_large'
  | 'timed_out'
  | 'unauthenticated'
  | 'forbidden'
  | 'too_many_attempts'
  | 'temporarily_unavailable'
  | 'credential_rejected'
  | 'account_blocked'
  | 'upstream_rate_limited'
  | 'upstream_unavailable'
  | 'upstream_rejected';

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;

  constructor(
    message: string,
    /** One entry per offending field, when the error is about the caller's input. */
    readonly fields?: FieldError[],
    /** When trying again makes sense, and not before. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * An error of a client below the domain (the upstream client's UpstreamError) that knows which domain error it stands
 * for: the edge answers it by that, and core needs no import of the client.
 */
export interface TranslatableError {
  toDomainError(): DomainError;
}

export function isTranslatableError(error: unknown): error is TranslatableError {
  return error instanceof Error && typeof (error as Partial<TranslatableError>).toDomainError === 'function';
}

export class NotFound extends DomainError {
  readonly kind = 'not_found';
}

/** It existed, and is no more (a signed link past its expiry): asking again will not help. */
export class Gone extends DomainError {
  readonly kind = 'gone';
}

/** The request collides with existing state (a unique name or id already taken). */
export class Conflict extends DomainError {
  readonly kind = 'conflict';
}

export const FIELD_VALIDATION_FAILED = 'Field Validation Failed';

/** Input that passed validation but is refused by a rule that needs the data (or the upstream) to decide. */
export class InvalidInput extends DomainError {
  readonly kind = 'invalid_input';

  constructor(fields: FieldError[]) {
    super(FIELD_VALIDATION_FAILED, fields);
  }

  static of(field: string, message: string): InvalidInput {
    return new InvalidInput([{ field, message }]);
  }
}

/** A body that cannot be read as what it should be (not JSON, not the document expected): no field to name. */
export class Malformed extends DomainError {
  readonly kind = 'malformed';
}

/** A body over a size limit, named by its field (an upload over Meta's limit for its type). */
export class TooLarge extends DomainError {
  readonly kind = 'too_large';

  constructor(field: string, message: string) {
    super('Payload Too Large', [{ field, message }]);
  }
}

/** The caller stopped sending a body (or took longer than allowed): what was received is dropped. */
export class TimedOut extends DomainError {
  readonly kind = 'timed_out';
}

export class Unauthenticated extends DomainError {
  readonly kind = 'unauthenticated';
}

/** The caller is known but may not do this (a member inviting operators, signup in invite-only mode). */
export class Forbidden extends DomainError {
  readonly kind = 'forbidden';
}

export class TooManyAttempts extends DomainError {
  readonly kind = 'too_many_attempts';

  constructor(message: string, retryAfterSeconds: number) {
    super(message, undefined, retryAfterSeconds);
  }
}

/**
 * A dependency this request cannot safely go without (the login throttle's Redis, the webhook deliveries' storage,
 * the readiness probe's PostgreSQL and Redis) is down, or the process is stopping: try again later (after retryAfterSeconds when there is a time to name).
 */
export class TemporarilyUnavailable extends DomainError {
  readonly kind = 'temporarily_unavailable';

  constructor(message: string, retryAfterSeconds?: number, fields?: FieldError[]) {
    super(message, fields, retryAfterSeconds);
  }
}

/** The upstream platform refused the business account's stored token: the operator must reconnect it. */
export class CredentialRejected extends DomainError {
  readonly kind = 'credential_rejected';

  constructor(reason: string) {
    super(
      `The upstream platform rejected the business account's access token (${reason}); reconnect it with a new token (PUT /business-accounts/:wabaId/access-token)`,
    );
  }
}

/** Meta restricted the business account: nothing we send will pass until it lifts the restriction. */
export class AccountBlocked extends DomainError {
  readonly kind = 'account_blocked';

  constructor(reason: string) {
    super(`The upstream platform blocked this business account: ${reason}`);
  }
}

/**
 * Meta's own state of the business account or of the sending number (a webhook or a sync told us) forbids this
 * send: refused before any upstream call, with the reason. Answered like a blocked account (424).
 */
export class SendingRefused extends DomainError {
  readonly kind = 'account_blocked';
}

export class UpstreamRateLimited extends DomainError {
  readonly kind = 'upstream_rate_limited';

  constructor(reason: string, retryAfterSeconds: number) {
    super(`Upstream rate limit: ${reason}`, undefined, retryAfterSeconds);
  }
}

export class UpstreamUnavailable extends DomainError {
  readonly kind = 'upstream_unavailable';

  constructor(reason: string, note?: string) {
    super(`Upstream platform unavailable: ${reason}${note ? `; ${note}` : ''}`);
  }
}

/** The upstream platform refused this request as sent; the same request will never pass. */
export class UpstreamRejected extends DomainError {
  readonly kind = 'upstream_rejected';

  constructor(reason: string, what = 'the message') {
    super(`Upstream rejected ${what}: ${reason}`);
  }
}
