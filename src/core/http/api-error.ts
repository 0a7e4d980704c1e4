import { HttpException } from '@nestjs/common';
import { FIELD_VALIDATION_FAILED, type FieldError } from '../errors/domain-errors.js';

export { FIELD_VALIDATION_FAILED, type FieldError };

export interface ApiErrorOptions {
  errors?: FieldError[];
  /** A payload that still matters on failure (e.g. the stored message of a rejected send). */
  data?: unknown;
  headers?: Record<string, string>;
}

/** An error answered in the spec's envelope: `{statusCode, message, errors?, data?}`. */
export class ApiError extends HttpException {
  constructor(
    status: number,
    message: string,
    readonly details: ApiErrorOptions = {},
  ) {
    super(message, status);
  }
}

/** 422 with one `{field, message}` per failing field. */
export class FieldValidationError extends ApiError {
  constructor(errors: FieldError[]) {
    super(422, FIELD_VALIDATION_FAILED, { errors });
  }

  static of(field: string, message: string): FieldValidationError {
    return new FieldValidationError([{ field, message }]);
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'Not Found') {
    super(404, message);
  }
}
