import type { SimAccount, SimPhoneNumber, SimTemplate } from './fixture.js';
import { checkText, CONTENT_CHECKS } from './content-checks.js';
import { type MetaError, metaErrors } from './meta-errors.js';

type Json = Record<string, unknown>;

/**
 * Who a send goes to: a phone number (`to`), a business-scoped user id (`recipient`, no `to`), or a BSUID put into
 * `to`, which Meta reads as a phone number that is never delivered to (`dropped`: 200 and nothing else).
 */
export type SimRecipient =
  { kind: 'phone'; digits: string } | { kind: 'user'; userId: string } | { kind: 'dropped'; input: string };
type MessageCheck = { ok: true; template?: SimTemplate } | { ok: false; error: MetaError };
type SendCheck = { ok: true; template?: SimTemplate; recipient: SimRecipient } | { ok: false; error: MetaError };

/** Meta's BSUID: country code, a dot, up to 128 alphanumerics; the parent form is `CC.ENT.<id>`. */
export const BSUID = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;
/** Authentication templates Meta does not send to a BSUID (by their OTP button's otp_type). */
const NOT_FOR_USER_IDS = new Set(['ONE_TAP', 'ZERO_TAP', 'COPY_CODE']);

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

/** Distinct placeholder names in order of appearance (`1`, `2` or `first_name`, …). */
function placeholders(text: string | undefined): string[] {
  return [...new Set([...(text ?? '').matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const fail = (error: MetaError): { ok: false; error: MetaError } => ({ ok: false, error });

/**
 * Validates a `POST /{phone-number-id}/messages` body the way Meta does, in Meta's order: envelope, sender
 * number, message type, then the template and its parameters against the stored template.
 */
export function checkSend(
  body: unknown,
  account: SimAccount,
  phone: SimPhoneNumber,
  mediaExists: (id: string) => boolean = () => false,
): SendCheck {
  if (!isObject(body) || body.messaging_product !== 'whatsapp') {
    return fail(metaErrors.invalidParameter('The parameter messaging_product is required and must be whatsapp.'));
  }
  const recipient = recipientOf(body);
  if ('error' in recipient) return fail(recipient.error);
  if (phone.status !== 'CONNECTED') return fail(metaErrors.numberNotRegistered());
  const checked = checkContent(body, account, mediaExists);
  if (!checked.ok) return checked;
  const otp = otpTypeOf(checked.template);
  if (recipient.kind === 'user' && otp && NOT_FOR_USER_IDS.has(otp)) {
    return fail(
      metaErrors.invalidParameter(
        `Authentication templates with ${otp} buttons cannot be sent to a business-scoped user id.`,
      ),
    );
  }
  return { ...checked, recipient };
}

/** `to` wins when both are given (as Meta does); a BSUID in `to` is taken as a number and dropped. */
function recipientOf(body: Json): SimRecipient | { error: MetaError } {
  if (typeof body.to === 'string') {
    const to = body.to.replace(/[\s-]/g, '');
    if (/^\+?[A-Za-z]{2}\.[A-Za-z0-9.]+$/.test(to)) return { kind: 'dropped', input: body.to };
    if (/^\+?\d{6,15}$/.test(to)) return { kind: 'phone', digits: to.replace(/\D/g, '') };
    return { error: metaErrors.invalidParameter('The parameter to is required and must be a phone number.') };
  }
  if (body.to === undefined && body.recipient !== undefined) {
    if (body.recipient_type !== undefined && body.recipient_type !== 'individual')
      return { error: metaErrors.invalidParameter('The parameter recipient_type must be individual.') };
    if (typeof body.recipient !== 'string' || !BSUID.test(body.recipient))
      return {
        error: metaErrors.invalidParameter('The parameter recipient must be a business-scoped user id (CC.<id>).'),
      };
    return { kind: 'user', userId: body.recipient };
  }
  return { error: metaErrors.invalidParameter('The parameter to is required and must be a phone number.') };
}

function otpTypeOf(template: SimTemplate | undefined): string | undefined {
  return template?.components.flatMap((c) => c.buttons ?? []).find((b) => b.type === 'OTP')?.otp_type;
}

/** The message itself (type, content, template), once the recipient and the sender are known to be fine. */
function checkContent(body: Json, account: SimAccount, mediaExists: (id: string) => boolean): MessageCheck {
  if (body.type === 'text') {
    const error = checkText(body.text, mediaExists);
    return error ? fail(error) : { ok: true };
  }
  if (body.context !== undefined && (!isObject(body.context) || typeof body.context.message_id !== 'string')) {
    return fail(metaErrors.invalidParameter("The parameter context['message_id'] is required."));
  }
  if (body.type === 'template') return checkTemplate(body.template, account);
  const type = typeof body.type === 'string' ? body.type : '';
  const check = CONTENT_CHECKS[type];
  if (!check)
    return fail(
      metaErrors.invalidParameter(`Param type must be one of {${NOT_TEXT.join(', ').toUpperCase()}, TEMPLATE, TEXT}.`),
    );
  if (body[type] === undefined) return fail(metaErrors.invalidParameter(`The parameter ${type} is required.`));
  const error = check(body[type], mediaExists);
  return error ? fail(error) : { ok: true };
}

/** Meta's list of types in its error: the content types, then template and text. */
const NOT_TEXT = Object.keys(CONTENT_CHECKS).filter((t) => t !== 'text');

function checkTemplate(request: unknown, account: SimAccount): MessageCheck {
  if (!isObject(request) || typeof request.name !== 'string' || !isObject(request.language)) {
    return fail(metaErrors.invalidParameter("The parameters template['name'] and template['language'] are required."));
  }
  const name = request.name;
  const code = request.language.code;
  const language = typeof code === 'string' ? code : code === undefined || code === null ? '' : JSON.stringify(code);
  // language.code must match the approved locale exactly: en_GB does not fall back to en or en_US.
  const template = account.templates.find((t) => t.name === name && t.language === language);
  if (!template) return fail(metaErrors.templateMissing(name, language));
  if (template.status === 'PAUSED') return fail(metaErrors.templatePaused(name));
  if (template.status === 'DISABLED') return fail(metaErrors.templateDisabled(name));
  if (template.status !== 'APPROVED') return fail(metaErrors.templateMissing(name, language));

  const components = request.components ?? [];
  if (!Array.isArray(components) || !components.every(isObject)) {
    return fail(metaErrors.invalidParameter("Param template['components'] must be an array of objects."));
  }
  const error =
    checkHeader(template, components) ?? checkBody(template, components) ?? checkButtons(template, components);
  return error ? fail(error) : { ok: true, template };
}

function paramsOf(components: Json[], type: string, index?: string): Json[] {
  const component = components.find((c) => c.type === type && (index === undefined || String(c.index) === index));
  const params = component?.parameters;
  return Array.isArray(params) ? params.filter(isObject) : [];
}

function checkHeader(template: SimTemplate, components: Json[]): MetaError | undefined {
  const header = template.components.find((c) => c.type === 'HEADER');
  const given = paramsOf(components, 'header');
  if (header && header.format && header.format !== 'TEXT') {
    const format = header.format.toLowerCase();
    if (given.length !== 1) return metaErrors.paramCount('header', given.length, 1);
    if (given[0]!.type !== format) {
      return metaErrors.paramFormat(
        'header',
        header.format,
        (typeof given[0]!.type === 'string' ? given[0]!.type : 'UNKNOWN').toUpperCase(),
      );
    }
    return undefined;
  }
  return checkTextParams('header', placeholders(header?.text), given, template.parameter_format);
}

function checkBody(template: SimTemplate, components: Json[]): MetaError | undefined {
  const body = template.components.find((c) => c.type === 'BODY');
  return checkTextParams('body', placeholders(body?.text), paramsOf(components, 'body'), template.parameter_format);
}

/** Each URL button with a `{{1}}` in its URL, and each OTP button, takes exactly one parameter, addressed by its index. */
function checkButtons(template: SimTemplate, components: Json[]): MetaError | undefined {
  const buttons = template.components.find((c) => c.type === 'BUTTONS')?.buttons ?? [];
  for (const [index, button] of buttons.entries()) {
    // An authentication template's OTP button takes the code as its one parameter (as Meta requires).
    const expected = button.type === 'URL' ? placeholders(button.url).length : button.type === 'OTP' ? 1 : 0;
    const given = paramsOf(components, 'button', String(index)).length;
    if (given !== expected) return metaErrors.paramCount(`buttons[${index}]`, given, expected);
  }
  const unknown = components.find((c) => c.type === 'button' && !buttons[Number(c.index)]);
  if (!unknown) return undefined;
  return metaErrors.paramCount(`buttons[${String(unknown.index)}]`, paramsOf([unknown], 'button').length, 0);
}

function checkTextParams(
  component: string,
  expected: string[],
  given: Json[],
  format: SimTemplate['parameter_format'],
): MetaError | undefined {
  if (given.length !== expected.length) return metaErrors.paramCount(component, given.length, expected.length);
  for (const param of given) {
    if (param.type === 'text' && (typeof param.text !== 'string' || param.text === '')) {
      return metaErrors.invalidParameter(`${component}: Param text cannot be empty.`);
    }
    if (format !== 'NAMED') continue;
    if (typeof param.parameter_name !== 'string' || param.parameter_name === '') {
      return metaErrors.invalidParameter(`${component}: parameter_name is required for a NAMED template.`);
    }
    if (!expected.includes(param.parameter_name)) {
      const name = param.parameter_name;
      return metaErrors.invalidParameter(`${component}: parameter_name (${name}) is not in the template.`);
    }
  }
  return undefined;
}
