import type { SimAccount, SimPhoneNumber, SimTemplate } from './fixture.js';
import { type MetaError, metaErrors } from './meta-errors.js';

type Json = Record<string, unknown>;
type SendCheck = { ok: true; template?: SimTemplate } | { ok: false; error: MetaError };

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

/** Distinct placeholder names in order of appearance (`1`, `2` or `first_name`, …). */
function placeholders(text: string | undefined): string[] {
  return [...new Set([...(text ?? '').matchAll(PLACEHOLDER)].map((m) => m[1]))];
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const fail = (error: MetaError): SendCheck => ({ ok: false, error });

/**
 * Validates a `POST /{phone-number-id}/messages` body the way Meta does, in Meta's order: envelope, sender
 * number, message type, then the template and its parameters against the stored template.
 */
export function checkSend(body: unknown, account: SimAccount, phone: SimPhoneNumber): SendCheck {
  if (!isObject(body) || body.messaging_product !== 'whatsapp') {
    return fail(metaErrors.invalidParameter('The parameter messaging_product is required and must be whatsapp.'));
  }
  if (typeof body.to !== 'string' || !/^\+?\d{6,15}$/.test(body.to.replace(/[\s-]/g, ''))) {
    return fail(metaErrors.invalidParameter('The parameter to is required and must be a phone number.'));
  }
  if (phone.status !== 'CONNECTED') return fail(metaErrors.numberNotRegistered());

  if (body.type === 'text') {
    const text = body.text;
    if (!isObject(text) || typeof text.body !== 'string' || text.body.length === 0) {
      return fail(metaErrors.invalidParameter("The parameter text['body'] is required."));
    }
    if (text.body.length > 4096) return fail(metaErrors.invalidParameter("Param text['body'] is too long."));
    return { ok: true };
  }
  if (body.type === 'template') return checkTemplate(body.template, account);
  return fail(metaErrors.invalidParameter('Param type must be one of {TEXT, TEMPLATE} in this simulator.'));
}

function checkTemplate(request: unknown, account: SimAccount): SendCheck {
  if (!isObject(request) || typeof request.name !== 'string' || !isObject(request.language)) {
    return fail(metaErrors.invalidParameter("The parameters template['name'] and template['language'] are required."));
  }
  const name = request.name;
  const language = String(request.language.code ?? '');
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
    if (given[0].type !== format) {
      return metaErrors.paramFormat('header', header.format, String(given[0].type ?? 'UNKNOWN').toUpperCase());
    }
    return undefined;
  }
  return checkTextParams('header', placeholders(header?.text), given, template.parameter_format);
}

function checkBody(template: SimTemplate, components: Json[]): MetaError | undefined {
  const body = template.components.find((c) => c.type === 'BODY');
  return checkTextParams('body', placeholders(body?.text), paramsOf(components, 'body'), template.parameter_format);
}

/** Each URL button with a `{{1}}` in its URL takes exactly one parameter, addressed by its index. */
function checkButtons(template: SimTemplate, components: Json[]): MetaError | undefined {
  const buttons = template.components.find((c) => c.type === 'BUTTONS')?.buttons ?? [];
  for (const [index, button] of buttons.entries()) {
    const expected = button.type === 'URL' ? placeholders(button.url).length : 0;
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
