import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { FieldValidationError, type FieldError } from './api-error.js';

const PRIORITY = ['isDefined', 'isNotEmpty', 'isString', 'isInt', 'isIn'];

/** Flattens class-validator's tree into one error per failing field, nested fields as dotted paths. */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const constraints = error.constraints ?? {};
    const messages = Object.values(constraints);
    if (messages.length > 0) {
      // One message per field: a missing value says "required" rather than, say, a length rule.
      const primary = PRIORITY.find((name) => constraints[name] !== undefined);
      const message = constraints.whitelistValidation ? `${field} is not allowed` : primary ? constraints[primary]! : messages[0]!;
      out.push({ field, message });
    }
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}

/** `@Transform(trimString)`: surrounding spaces do not count, so `IsNotEmpty` refuses a blank name. */
export const trimString = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new FieldValidationError(flattenValidationErrors(errors)),
  });
}
