import type { Response } from 'express';
import type { FieldError } from './api-error.js';

export const SUCCESS = 'Success';

export interface Envelope<T = unknown> {
  statusCode: number;
  message: string;
  data?: T;
  errors?: FieldError[];
}

export function envelope<T>(
  statusCode: number,
  message: string,
  extra: { data?: T; errors?: FieldError[] } = {},
): Envelope<T> {
  const body: Envelope<T> = { statusCode, message };
  if (extra.errors && extra.errors.length > 0) body.errors = extra.errors;
  if (extra.data !== undefined) body.data = extra.data;
  return body;
}

export function sendEnvelope(
  res: Response,
  statusCode: number,
  message: string,
  extra: { data?: unknown; errors?: FieldError[] } = {},
): void {
  res.status(statusCode).json(envelope(statusCode, message, extra));
}
