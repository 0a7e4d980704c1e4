import type { ValidationError } from 'class-validator';
import type { FieldError } from '../errors/domain-errors.js';

// How a DTO's validation reads in the API's contract: one `{field, message}` per failing field of a 422 (the global
// pipe that answers it is core/http/validation.ts), and the transforms DTOs share.

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

/** `word` with its indefinite article, for messages: "an image", "a video" (never "a image"). */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}
