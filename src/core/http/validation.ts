import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { FieldValidationError, type FieldError } from './api-error.js';

/** Flattens class-validator's tree into one error per failing field, nested fields as dotted paths. */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const messages = Object.values(error.constraints ?? {});
    if (messages.length > 0) {
      // The "should not exist" message of a non-whitelisted field reads better than class-validator's.
      const message = error.constraints?.whitelistValidation ? `${field} is not allowed` : messages[0]!;
      out.push({ field, message });
    }
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}

export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new FieldValidationError(flattenValidationErrors(errors)),
  });
}
