import type { FieldError } from '../core/errors/domain-errors.js';
import { BSUID, E164_DIGITS, PARAMETER_TYPES } from '../messages/dto/send-message.dto.js';
import type { NewRecipient } from './campaign-recipients.repository.js';

export const MAX_CAMPAIGN_RECIPIENTS = 100_000;
/** A refusal names at most this many recipients (the first ones): enough to fix a file, not a 100,000-line answer. */
export const MAX_RECIPIENT_ERRORS = 100;

const COMPONENT_TYPES = new Set(['header', 'body', 'button']);
const BUTTON_SUB_TYPES = new Set(['url', 'quick_reply', 'copy_code', 'flow', 'catalog', 'mpm']);
const KEYS = new Set(['to', 'userId', 'components']);

/**
 * Every recipient of a campaign checked before anything is stored: an object with exactly one of `to` (E.164
 * digits) and `userId` (a business-scoped user id), optional template `components` in Meta's shape, and no
 * recipient twice (a campaign reaches each recipient once). Errors name `recipients.<i>.<field>` (the first
 * MAX_RECIPIENT_ERRORS of them). Pure: the template's parameter counts are checked by the caller.
 */
export function checkRecipients(items: unknown[]): { recipients: NewRecipient[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const recipients: NewRecipient[] = [];
  const seen = new Map<string, number>();
  const fail = (field: string, message: string) => {
    if (errors.length < MAX_RECIPIENT_ERRORS) errors.push({ field, message });
  };
  items.forEach((item, i) => {
    const at = `recipients.${i}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      return fail(at, `${at} must be an object {to | userId, components?}`);
    const r = item as Record<string, unknown>;
    const unknown = Object.keys(r).find((k) => !KEYS.has(k));
    if (unknown !== undefined)
      return fail(`${at}.${unknown}`, `${at}.${unknown} is not allowed (to, userId, components)`);
    const { to, userId, components } = r;
    if (to === undefined && userId === undefined)
      return fail(`${at}.to`, `${at}.to (E.164 digits) or ${at}.userId is required`);
    if (to !== undefined && userId !== undefined) return fail(`${at}.userId`, `${at}: give to or userId, not both`);
    if (to !== undefined && (typeof to !== 'string' || !E164_DIGITS.test(to)))
      return fail(`${at}.to`, `${at}.to must be E.164 digits without plus or spaces`);
    if (userId !== undefined && (typeof userId !== 'string' || !BSUID.test(userId)))
      return fail(`${at}.userId`, `${at}.userId must be a business-scoped user id: CC.<id> or CC.ENT.<id>`);
    const problem = components === undefined ? undefined : componentsProblem(components);
    if (problem) return fail(`${at}.components`, `${at}.components: ${problem}`);
    const address = (to ?? userId) as string;
    const first = seen.get(address);
    if (first !== undefined)
      return fail(
        `${at}.${to !== undefined ? 'to' : 'userId'}`,
        `${at} repeats recipients.${first}: a campaign sends to each recipient once`,
      );
    seen.set(address, i);
    recipients.push({
      to: to ?? null,
      userId: userId ?? null,
      components: (components as unknown[] | undefined) ?? null,
    });
  });
  return { recipients, errors };
}

/** Meta's component shape, checked cheaply (100,000 of them may come at once); undefined when fine. */
function componentsProblem(components: unknown): string | undefined {
  if (!Array.isArray(components) || components.length > 10) return 'must be an array of at most 10 components';
  for (const [j, c] of components.entries()) {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return `${j} must be an object {type, parameters}`;
    const { type, sub_type: subType, index, parameters } = c as Record<string, unknown>;
    if (typeof type !== 'string' || !COMPONENT_TYPES.has(type)) return `${j}.type must be one of header, body, button`;
    if (type === 'button') {
      if (typeof subType !== 'string' || !BUTTON_SUB_TYPES.has(subType))
        return `${j}.sub_type must be one of ${[...BUTTON_SUB_TYPES].join(', ')}`;
      if (!(typeof index === 'string' || typeof index === 'number') || !/^\d{1,2}$/.test(String(index)))
        return `${j}.index must be the button position (0-99)`;
    }
    if (!Array.isArray(parameters) || parameters.length > 100) return `${j}.parameters must be an array (at most 100)`;
    for (const [k, p] of parameters.entries()) {
      if (typeof p !== 'object' || p === null || Array.isArray(p)) return `${j}.parameters.${k} must be an object`;
      const pt = (p as Record<string, unknown>).type;
      if (typeof pt !== 'string' || !PARAMETER_TYPES.includes(pt))
        return `${j}.parameters.${k}.type must be one of ${PARAMETER_TYPES.join(', ')}`;
    }
  }
  return undefined;
}
