import type { SimAccount, SimPhoneNumber, SimTemplate } from './fixture.js';
import { type MetaError, metaErrors } from './meta-errors.js';

type Json = Record<string, unknown>;

/**
 * Who a send goes to: a phone number (`to`), a business-scoped user id (`recipient`, no `to`), or a BSUID put into
 * `to`, which Meta reads as a phone number that is never delivered to (`dropped`: 200 and nothing else).
 */
export type SimRecipient = { kind: 'phone'; digits: string } | { kind: 'user'; userId: string } | { kind: 'dropped'; input: string };
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
export function checkSend(body: unknown, account: SimAccount, phone: SimPhoneNumber, mediaExists: (id: string) => boolean = () => false): SendCheck {
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
    return fail(metaErrors.invalidParameter(`Authentication templates with ${otp} buttons cannot be sent to a business-scoped user id.`));
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
    if (body.recipient_type !== undefined && body.recipient_type !== 'individual') return { error: metaErrors.invalidParameter('The parameter recipient_type must be individual.') };
    if (typeof body.recipient !== 'string' || !BSUID.test(body.recipient)) return { error: metaErrors.invalidParameter('The parameter recipient must be a business-scoped user id (CC.<id>).') };
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
    const text = body.text;
    if (!isObject(text) || typeof text.body !== 'string' || text.body.length === 0) {
      return fail(metaErrors.invalidParameter("The parameter text['body'] is required."));
    }
    if (text.body.length > 4096) return fail(metaErrors.invalidParameter("Param text['body'] is too long."));
    return { ok: true };
  }
  if (body.context !== undefined && (!isObject(body.context) || typeof body.context.message_id !== 'string')) {
    return fail(metaErrors.invalidParameter("The parameter context['message_id'] is required."));
  }
  if (body.type === 'template') return checkTemplate(body.template, account);
  const type = typeof body.type === 'string' ? body.type : '';
  const check = CONTENT_CHECKS[type];
  if (!check) return fail(metaErrors.invalidParameter(`Param type must be one of {${Object.keys(CONTENT_CHECKS).join(', ').toUpperCase()}, TEMPLATE, TEXT}.`));
  if (body[type] === undefined) return fail(metaErrors.invalidParameter(`The parameter ${type} is required.`));
  const error = check(body[type], mediaExists);
  return error ? fail(error) : { ok: true };
}

type ContentCheck = (value: unknown, known: (id: string) => boolean) => MetaError | undefined;
const bad = (details: string) => metaErrors.invalidValue(details);
const str = (v: unknown, min: number, max: number) => typeof v === 'string' && v.length >= min && v.length <= max;
const HTTPS = /^https:\/\/[^\s/]+/;

function media(type: string, extra: string[]): ContentCheck {
  return (value, known) => {
    if (!isObject(value)) return metaErrors.invalidParameter(`Param ${type} must be an object.`);
    const unknown = Object.keys(value).find((k) => !['link', 'id', ...extra].includes(k));
    if (unknown) return metaErrors.invalidParameter(`Param ${type}['${unknown}'] is not a valid parameter.`);
    if ((value.link === undefined) === (value.id === undefined)) return metaErrors.invalidParameter(`Param ${type} must have exactly one of link or id.`);
    if (value.link !== undefined && (typeof value.link !== 'string' || !HTTPS.test(value.link))) return bad(`${type}['link'] must be an https URL.`);
    if (value.id !== undefined && (typeof value.id !== 'string' || !known(value.id))) return bad(`${type}['id'] (${JSON.stringify(value.id)}) is not a valid media id.`);
    if (value.caption !== undefined && !str(value.caption, 1, 1024)) return bad(`${type}['caption'] must be 1 to 1024 characters.`);
    if (value.filename !== undefined && !str(value.filename, 1, 240)) return bad(`${type}['filename'] must be 1 to 240 characters.`);
    return undefined;
  };
}

function checkInteractive(value: unknown): MetaError | undefined {
  if (!isObject(value)) return metaErrors.invalidParameter('Param interactive must be an object.');
  if (!isObject(value.body) || !str(value.body.text, 1, 1024)) return bad("interactive['body']['text'] must be 1 to 1024 characters.");
  if (value.footer !== undefined && (!isObject(value.footer) || !str(value.footer.text, 1, 60))) return bad("interactive['footer']['text'] must be 1 to 60 characters.");
  const action = value.action;
  if (!isObject(action)) return metaErrors.invalidParameter("The parameter interactive['action'] is required.");
  switch (value.type) {
    case 'button': {
      const buttons = action.buttons;
      if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3) return bad("interactive['action']['buttons'] must have 1 to 3 buttons.");
      const ids = new Set<unknown>();
      for (const [i, b] of buttons.entries()) {
        if (!isObject(b) || b.type !== 'reply' || !isObject(b.reply)) return metaErrors.invalidParameter(`buttons[${i}] must be a reply button.`);
        if (!str(b.reply.title, 1, 20)) return bad(`buttons[${i}]['reply']['title'] must be 1 to 20 characters.`);
        if (!str(b.reply.id, 1, 256) || ids.has(b.reply.id)) return bad(`buttons[${i}]['reply']['id'] must be unique, 1 to 256 characters.`);
        ids.add(b.reply.id);
      }
      return undefined;
    }
    case 'list': {
      if (!str(action.button, 1, 20)) return bad("interactive['action']['button'] must be 1 to 20 characters.");
      const sections = action.sections;
      if (!Array.isArray(sections) || sections.length < 1 || sections.length > 10) return bad("interactive['action']['sections'] must have 1 to 10 sections.");
      const rows = sections.flatMap((s): unknown[] => (isObject(s) && Array.isArray(s.rows) ? (s.rows as unknown[]) : []));
      if (rows.length < 1 || rows.length > 10) return bad('Total row count exceeded: a list has 1 to 10 rows.');
      const ids = new Set<unknown>();
      for (const r of rows) {
        if (!isObject(r) || !str(r.title, 1, 24)) return bad('Row title must be 1 to 24 characters.');
        if (!str(r.id, 1, 200) || ids.has(r.id)) return bad('Row ids must be unique, 1 to 200 characters.');
        if (r.description !== undefined && !str(r.description, 1, 72)) return bad('Row description must be 1 to 72 characters.');
        ids.add(r.id);
      }
      return undefined;
    }
    case 'cta_url': {
      const p = action.parameters;
      if (action.name !== 'cta_url' || !isObject(p)) return metaErrors.invalidParameter("interactive['action'] must have name cta_url and parameters.");
      if (!str(p.display_text, 1, 20)) return bad("parameters['display_text'] must be 1 to 20 characters.");
      if (typeof p.url !== 'string' || !HTTPS.test(p.url)) return bad("parameters['url'] must be an https URL.");
      return undefined;
    }
    default:
      return metaErrors.invalidParameter("interactive['type'] must be one of {button, list, cta_url, flow, product, product_list}.");
  }
}

const EMOJI = /^(?:\p{Regional_Indicator}{2}|[#*0-9]\uFE0F?\u20E3|\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})*(?:\u200D\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})*)*)?$/u;

const CONTENT_CHECKS: Record<string, ContentCheck> = {
  image: media('image', ['caption']),
  video: media('video', ['caption']),
  audio: media('audio', []),
  document: media('document', ['caption', 'filename']),
  sticker: media('sticker', []),
  location: (v) => {
    if (!isObject(v)) return metaErrors.invalidParameter('Param location must be an object.');
    const { latitude: lat, longitude: lon } = v;
    if (typeof lat !== 'number' || lat < -90 || lat > 90) return bad("location['latitude'] must be between -90 and 90.");
    if (typeof lon !== 'number' || lon < -180 || lon > 180) return bad("location['longitude'] must be between -180 and 180.");
    return undefined;
  },
  contacts: (v) => {
    if (!Array.isArray(v) || v.length === 0) return metaErrors.invalidParameter('Param contacts must be a non-empty array.');
    const i = v.findIndex((c) => !isObject(c) || !isObject(c.name) || !str(c.name.formatted_name, 1, 512));
    return i >= 0 ? metaErrors.invalidParameter(`The parameter contacts[${i}]['name']['formatted_name'] is required.`) : undefined;
  },
  interactive: checkInteractive,
  reaction: (v) => {
    if (!isObject(v) || typeof v.message_id !== 'string' || v.message_id === '') return metaErrors.invalidParameter("The parameter reaction['message_id'] is required.");
    if (typeof v.emoji !== 'string' || !EMOJI.test(v.emoji)) return bad("reaction['emoji'] must be a single emoji.");
    return undefined;
  },
};

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
      return metaErrors.paramFormat('header', header.format, (typeof given[0]!.type === 'string' ? given[0]!.type : 'UNKNOWN').toUpperCase());
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
