import {
  AccountBlocked,
  CredentialRejected,
  UpstreamRateLimited,
  UpstreamRejected,
  UpstreamUnavailable,
  type DomainError,
  type TranslatableError,
} from '../core/errors/domain-errors.js';
import { CONNECT_TIMEOUT_CODE } from './connect-timeout.agent.js';
import {
  classifyUpstreamError,
  defaultRetryAfterSeconds,
  isRateLimit,
  type UpstreamErrorClass,
} from './meta-error-catalogue.js';

export type { UpstreamErrorClass };

/** Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); undefined when absent or invalid. */
export function parseRetryAfter(header: unknown, now = Date.now()): number | undefined {
  if (typeof header !== 'string' || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Meta prefixes WhatsApp errors' messages with the code: "(#131047) Re-engagement message". */
function stripCodePrefix(message: string): string {
  return message.replace(/^\(#\d+\)\s*/, '');
}

/** Defence in depth: an upstream (or a proxy) echoing the token must not put it into our logs. */
function redact(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => (secret ? out.split(secret).join('[redacted]') : out), text);
}

const asRecord = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const asString = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export interface UpstreamErrorInit {
  /** The client call that failed, e.g. `sendMessage`. */
  operation: string;
  title: string;
  errorClass: UpstreamErrorClass;
  httpStatus?: number;
  code?: number;
  /** Meta's `error.error_subcode` (e.g. 2388024: a template's name and language exist already). */
  subcode?: number;
  detail?: string;
  fbtraceId?: string;
  retryAfterSeconds?: number;
  isTimeout?: boolean;
  isNetwork?: boolean;
  neverSent?: boolean;
}

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

/**
 * Transport failures before the request could be written (no connection: refused, unreachable, not resolved, not
 * connected in time): Meta cannot have received it. Any other failure without an answer (a reset or a timeout once
 * connected) leaves a send's outcome unknown.
 */
const BEFORE_CONNECTION = new Set([
  CONNECT_TIMEOUT_CODE,
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * A failed call to Meta, built from plain values only. The client never keeps or rethrows an axios error:
 * those carry the request config, Authorization header included, into logs and inspect output.
 */
export class UpstreamError extends Error implements TranslatableError {
  readonly operation: string;
  readonly title: string;
  readonly errorClass: UpstreamErrorClass;
  readonly httpStatus?: number;
  /** Meta's error code (`error.code`). */
  readonly code?: number;
  /** Meta's `error.error_subcode`. */
  readonly subcode?: number;
  /** Meta's `error.error_data.details` (or, for Graph API errors such as template management's, `error_user_msg`). */
  readonly detail?: string;
  readonly fbtraceId?: string;
  readonly retryAfterSeconds?: number;
  /** No answer within the configured connect or read timeout; for a send, the outcome is unknown. */
  readonly isTimeout: boolean;
  /** The connection failed (refused, reset, DNS, connect timeout) before any answer arrived. */
  readonly isNetwork: boolean;
  /** No connection was made, so nothing was written: Meta cannot have received the request (sending it again is no duplicate). */
  readonly neverSent: boolean;

  constructor(init: UpstreamErrorInit) {
    const codePart = [
      init.code !== undefined ? `code ${init.code}` : '',
      init.httpStatus ? `HTTP ${init.httpStatus}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    super(`WhatsApp ${init.operation} failed: ${init.title}${codePart ? ` (${codePart})` : ''}`);
    this.name = 'UpstreamError';
    this.operation = init.operation;
    this.title = init.title;
    this.errorClass = init.errorClass;
    this.httpStatus = init.httpStatus;
    this.code = init.code;
    this.subcode = init.subcode;
    this.detail = init.detail;
    this.fbtraceId = init.fbtraceId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.isTimeout = init.isTimeout ?? false;
    this.isNetwork = init.isNetwork ?? false;
    this.neverSent = init.neverSent ?? false;
  }

  /** From a non-2xx answer; `body` is Meta's `{ error: {...} }` when there is one. */
  static fromResponse(
    operation: string,
    httpStatus: number,
    body: unknown,
    retryAfterHeader: unknown,
    secrets: readonly string[],
  ): UpstreamError {
    const error = asRecord(asRecord(body)?.error);
    const code = typeof error?.code === 'number' ? error.code : undefined;
    const message = asString(error?.message);
    const detail = asString(asRecord(error?.error_data)?.details) ?? asString(error?.error_user_msg);
    return new UpstreamError({
      operation,
      title: message ? redact(stripCodePrefix(message), secrets) : `Upstream answered HTTP ${httpStatus}`,
      errorClass: classifyUpstreamError(code, httpStatus),
      httpStatus,
      code,
      subcode: typeof error?.error_subcode === 'number' ? error.error_subcode : undefined,
      detail: detail && redact(detail, secrets),
      fbtraceId: asString(error?.fbtrace_id),
      retryAfterSeconds: parseRetryAfter(retryAfterHeader),
    });
  }

  /** From a request that got no answer. Reads only the error's `code` string, nothing else of it. */
  static fromTransport(operation: string, err: unknown, timeoutMs: number): UpstreamError {
    const code = asString(asRecord(err)?.code);
    if (code === CONNECT_TIMEOUT_CODE) {
      return new UpstreamError({
        operation,
        title: 'Could not connect to the upstream in time',
        errorClass: 'retryable',
        isTimeout: true,
        isNetwork: true,
        neverSent: true,
      });
    }
    if (code === 'ETIMEDOUT' || code === 'ECONNABORTED') {
      return new UpstreamError({
        operation,
        title: `No answer from the upstream within ${timeoutMs} ms`,
        errorClass: 'retryable',
        isTimeout: true,
      });
    }
    return new UpstreamError({
      operation,
      title: `Network error${code ? ` (${code})` : ''}`,
      errorClass: 'retryable',
      isNetwork: true,
      neverSent: code !== undefined && BEFORE_CONNECTION.has(code),
    });
  }

  /** What to tell a user: Meta's title and code, never the token (the title is already redacted). */
  get reason(): string {
    return `${this.title}${this.code !== undefined ? ` (${this.code})` : ''}`;
  }

  /** The domain error this failure stands for, read from its class and the Meta error catalogue. */
  toDomainError(options: UpstreamFailureOptions = {}): DomainError {
    const reason = options.during ? `${options.during}: ${this.reason}` : this.reason;
    switch (this.errorClass) {
      case 'credential':
        return new CredentialRejected(reason);
      case 'account_blocked':
        return new AccountBlocked(reason);
      case 'retryable':
        if (isRateLimit(this.code))
          return new UpstreamRateLimited(reason, this.retryAfterSeconds ?? defaultRetryAfterSeconds(this.code));
        return new UpstreamUnavailable(reason, this.isTimeout ? options.outcomeUnknownNote : undefined);
      case 'permanent':
        return options.permanent === 'unavailable' ? new UpstreamUnavailable(reason) : new UpstreamRejected(reason);
    }
  }

  /** Plain, token-free fields for structured logs. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      errorClass: this.errorClass,
      httpStatus: this.httpStatus,
      code: this.code,
      subcode: this.subcode,
      title: this.title,
      detail: this.detail,
      fbtraceId: this.fbtraceId,
      retryAfterSeconds: this.retryAfterSeconds,
      isTimeout: this.isTimeout,
      isNetwork: this.isNetwork,
    };
  }
}
