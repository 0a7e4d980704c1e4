// Reading values out of Meta's payloads (classify.ts and the processing effects): nothing here throws on an odd shape.
import { createHash } from 'node:crypto';

export type JsonRecord = Record<string, unknown>;

export interface ErrorInfo {
  code: number | null;
  title: string | null;
  detail: string | null;
}

const [INT32_MIN, INT32_MAX] = [-(2 ** 31), 2 ** 31 - 1];

/** The first of Meta's `errors[]`, its code kept only when it fits the integer column. */
export function firstError(errors: unknown): ErrorInfo | null {
  if (!Array.isArray(errors) || !isRecord(errors[0])) return null;
  const e = errors[0];
  const data = isRecord(e.error_data) ? e.error_data : undefined;
  const n =
    typeof e.code === 'number'
      ? e.code
      : typeof e.code === 'string' && /^\d{1,10}$/.test(e.code)
        ? Number(e.code)
        : NaN;
  // Stored in an integer column: a code out of its range is kept in the raw item only, never a processing error.
  const code = Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX ? n : null;
  return { code, title: str(e.title) ?? str(e.message) ?? null, detail: str(data?.details) ?? str(e.message) ?? null };
}

/** "IN_APPEAL" → "in appeal". */
export function humanise(event: string): string {
  return event.toLowerCase().replace(/_/g, ' ');
}

/** Unix seconds, as a string (statuses, messages) or an integer (entry.time), to a Date; anything else → null. */
export function unixTime(value: unknown): Date | null {
  const seconds =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(seconds) || seconds < 0) return null;
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A payload's timestamp as text for a dedupe key: Meta sends a string (a number is taken as its digits); nothing gives ''. */
export function timeKey(time: unknown): string {
  if (time === undefined || time === null) return '';
  return typeof time === 'string' || typeof time === 'number' ? String(time) : JSON.stringify(time);
}

export function hashOf(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value) ?? 'null')
    .digest('hex');
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
