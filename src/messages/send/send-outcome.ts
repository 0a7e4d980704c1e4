import type { DomainError, DomainErrorKind } from '../../core/errors/domain-errors.js';
import type { StoredMessage } from '../messages.repository.js';

/** Why a stored attempt did not go through, in the domain's words (the edge picks the status code). */
export interface SendRejection {
  kind: DomainErrorKind;
  /** The whole reason, as the caller reads it. */
  message: string;
  /** When trying again makes sense, and not before. */
  retryAfterSeconds?: number;
}

/** The upstream platform accepted the message (or a status webhook showed it did): the stored message. */
export interface SendAccepted {
  outcome: 'accepted';
  message: StoredMessage;
}

/** The attempt is stored `failed` (or held back before any upstream call), with the reason. */
export interface SendRejected {
  outcome: 'rejected';
  message: StoredMessage;
  reason: SendRejection;
}

/** What the first request with the same Idempotency-Key and body came to: answered again, nothing sent. */
export interface SendReplayed {
  outcome: 'replayed';
  earlier: EarlierOutcome;
}

export type FinalOutcome = SendAccepted | SendRejected;
export type SendOutcome = FinalOutcome | SendReplayed;

/** What an earlier request with the same Idempotency-Key came to, as its record keeps it. */
export type EarlierOutcome = FinalOutcome;

/** The rejection a domain error stands for, with a note said after its message. */
export function rejectionOf(error: DomainError, note?: string): SendRejection {
  const message = note ? `${error.message}; ${note}` : error.message;
  return error.retryAfterSeconds !== undefined
    ? { kind: error.kind, message, retryAfterSeconds: error.retryAfterSeconds }
    : { kind: error.kind, message };
}

/** Kinds a retry may fix (rate limits, an unavailable upstream): not kept against a key, so the same key sends again. */
const RETRYABLE: ReadonlySet<DomainErrorKind> = new Set<DomainErrorKind>([
  'too_many_attempts',
  'upstream_rate_limited',
  'upstream_unavailable',
  'temporarily_unavailable',
]);

/** Whether the outcome is kept against an Idempotency-Key for replays. */
export function isFinal(outcome: FinalOutcome): boolean {
  return outcome.outcome === 'accepted' || !RETRYABLE.has(outcome.reason.kind);
}

/** bmapi_sends_total's label for an outcome (refusals before any attempt are in the request histogram). */
export function outcomeLabel(
  outcome: SendOutcome,
): 'accepted' | 'replayed' | 'rate_limited' | 'upstream_unavailable' | 'rejected' {
  if (outcome.outcome !== 'rejected') return outcome.outcome;
  switch (outcome.reason.kind) {
    case 'too_many_attempts':
    case 'upstream_rate_limited':
      return 'rate_limited';
    case 'upstream_unavailable':
      return 'upstream_unavailable';
    default:
      return 'rejected';
  }
}

// ---- As kept in an Idempotency-Key record (JSON) -------------------------------------------------------------

/** The dates of a stored message, which JSON keeps as ISO strings. */
const DATE_FIELDS = ['acceptedAt', 'sentAt', 'deliveredAt', 'readAt', 'failedAt', 'createdAt', 'updatedAt'] as const;

type Json<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

/** A final outcome as an Idempotency-Key record keeps it: JSON, no HTTP in it. */
export type RecordedOutcome =
  | { outcome: 'accepted'; message: Json<StoredMessage> }
  | { outcome: 'rejected'; message: Json<StoredMessage>; reason: SendRejection };

export function recordOf(outcome: FinalOutcome): RecordedOutcome {
  return JSON.parse(JSON.stringify(outcome)) as RecordedOutcome;
}

/** The outcome a completed record holds. */
export function earlierOutcomeOf(record: { responseBody: unknown }): EarlierOutcome {
  const recorded = record.responseBody as RecordedOutcome;
  const message = reviveMessage(recorded.message);
  return recorded.outcome === 'accepted'
    ? { outcome: 'accepted', message }
    : { outcome: 'rejected', message, reason: recorded.reason };
}

function reviveMessage(json: Json<StoredMessage>): StoredMessage {
  const message = { ...json } as Record<string, unknown>;
  for (const field of DATE_FIELDS) {
    const value = json[field];
    message[field] = value === null ? null : new Date(value);
  }
  return message as StoredMessage;
}
