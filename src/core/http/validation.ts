import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { FieldValidationError, type FieldError } from './api-error.js';

const PRIORITY = [
  'isDefined',
  'isNotEmpty',
  'isString',
  'notWithTo',
  'notBsuid',
  'isArray',
  'isInt',
  'isIn',
  'arrayMaxSize',
];

/**
 * Flattens class-validator's tree into one error per failing field, nested fields as dotted paths. A
 * constraint whose `context` has `at` names that item of the field instead (`buttons.3`: the first one
 * over a maximum count).
 */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const constraints = error.constraints ?? {};
    const names = Object.keys(constraints);
    if (names.length > 0) {
      // One message per field: a missing value says "is required" (or the DTO's own @IsDefined message) rather
      // than, say, "must be a string" (an optional field never gets here without a value: @IsOptional skips it).
      const primary = constraints.whitelistValidation
        ? 'whitelistValidation'
        : (PRIORITY.find((name) => constraints[name] !== undefined) ?? names[0]!);
      const missing = error.value === undefined || error.value === null;
      const message =
        primary === 'whitelistValidation'
          ? `${field} is not allowed`
          : missing
            ? (constraints.isDefined ?? `${field} is required`)
            : constraints[primary]!;
      // A count over a maximum can name its first extra item (constraint context `at`): `interactive.action.buttons.3`.
      const at = missing ? undefined : (error.contexts?.[primary] as { at?: number } | undefined)?.at;
      out.push({ field: at === undefined ? field : `${field}.${at}`, message });
    }
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}

/** `@Transform(trimString)`: surrounding spaces do not count, so `IsNotEmpty` refuses a blank name. */
export const trimString = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** `@Transform(normaliseEmail)`: an email is compared trimmed and in lower case (signup, login, invitations). */
export const normaliseEmail = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toLowerCase() : value;

const NUL = '\u0000';
/** A UTF-16 surrogate without its other half: not Unicode text (validators throw on it, PostgreSQL would alter it). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Strings PostgreSQL cannot store or compare (NUL) and strings that are not valid Unicode (lone surrogates),
 * anywhere in a body, query or path value, keys included: one error per field (dotted path). Iterative, so a
 * deeply nested value cannot exhaust the stack.
 */
export function unsafeStringErrors(value: unknown, root: string): FieldError[] {
  const errors: FieldError[] = [];
  const check = (text: string, field: string) => {
    if (text.includes(NUL)) errors.push({ field, message: `${field} must not contain NUL characters` });
    else if (LONE_SURROGATE.test(text))
      errors.push({ field, message: `${field} must be valid Unicode text (no unpaired surrogates)` });
  };
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0 && errors.length < 100) {
    const [v, field] = stack.pop()!;
    if (typeof v === 'string') check(v, field || 'value');
    else if (Array.isArray(v)) v.forEach((item, i) => stack.push([item, field ? `${field}.${i}` : String(i)]));
    else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        const path = field ? `${field}.${key}` : key;
        check(key, path);
        stack.push([item, path]);
      }
    }
  }
  return errors.reverse();
}

/**
 * The global pipe: class-validator, plus string hygiene for body, query and path values. A value that fails
 * hygiene never reaches a handler; its 422 lists those fields together with whatever else failed validation.
 */
class AppValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const hygiene =
      metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param'
        ? unsafeStringErrors(value, metadata.data ?? '')
        : [];
    if (hygiene.length === 0) return super.transform(value, metadata);
    let others: FieldError[] = [];
    try {
      await super.transform(value, metadata);
    } catch (error) {
      // Validators may throw on such strings themselves (validator's isEmail does on a lone surrogate).
      if (error instanceof FieldValidationError) others = error.details.errors ?? [];
    }
    const flagged = new Set(hygiene.map((e) => e.field));
    throw new FieldValidationError([...hygiene, ...others.filter((e) => !flagged.has(e.field))]);
  }
}

export function createValidationPipe(): ValidationPipe {
  return new AppValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    // The value is only looked at by flattenValidationErrors (missing → "is required"); answers never echo it.
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => new FieldValidationError(flattenValidationErrors(errors)),
  });
}
