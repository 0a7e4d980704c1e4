import type { FieldError } from '../../core/errors/domain-errors.js';

/**
 * Meta's rules for a template's components, checked before a create or an edit goes to Meta (which would answer
 * one vague error at a time): every problem at once, each naming its field as a dotted path
 * (`components.1.example.body_text`). The request's shape (name, language, category, an array of objects) is the
 * DTO's; this is what needs the components read together.
 */
export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
export const PARAMETER_FORMATS = ['POSITIONAL', 'NAMED'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];
export type ParameterFormat = (typeof PARAMETER_FORMATS)[number];

/** Meta's names: lowercase letters, digits and underscores. */
export const TEMPLATE_NAME = /^[a-z0-9_]+$/;
/** Meta's language codes: `en`, `en_US`, `pt_BR`, `es_419`… */
export const TEMPLATE_LANGUAGE = /^[a-z]{2,3}(_[A-Za-z0-9]{2,4})?$/;

const COMPONENT_TYPES = ['HEADER', 'BODY', 'FOOTER', 'BUTTONS'];
const HEADER_FORMATS = ['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'];
const BUTTON_TYPES = ['QUICK_REPLY', 'URL', 'PHONE_NUMBER', 'COPY_CODE', 'OTP', 'FLOW', 'CATALOG', 'MPM'];
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const NAMED_VARIABLE = /^[a-z][a-z0-9_]*$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

/** The distinct variables of a text, in order of first appearance (`1`, `2` or `first_name`). */
export function variablesOf(value: unknown): string[] {
  return typeof value === 'string' ? [...new Set([...value.matchAll(PLACEHOLDER)].map((m) => m[1]!))] : [];
}

export function checkTemplateComponents(
  components: unknown[],
  category: string,
  format: ParameterFormat,
): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  components.forEach((component, i) => {
    const at = `components.${i}`;
    if (!isObject(component)) return errors.push({ field: at, message: `${at} must be an object` });
    const type = component.type;
    if (typeof type !== 'string' || !COMPONENT_TYPES.includes(type))
      return errors.push({ field: `${at}.type`, message: `type must be one of ${COMPONENT_TYPES.join(', ')}` });
    if (seen.has(type)) return errors.push({ field: `${at}.type`, message: `only one ${type} component is allowed` });
    seen.add(type);
    switch (type) {
      case 'HEADER':
        return errors.push(...checkHeader(component, at, format));
      case 'BODY':
        return errors.push(...checkBody(component, at, category, format));
      case 'FOOTER':
        return errors.push(...checkFooter(component, at));
      default:
        return errors.push(...checkButtons(component, at));
    }
  });
  if (!seen.has('BODY')) errors.push({ field: 'components', message: 'a BODY component (with its text) is required' });
  return errors;
}

function checkBody(component: Json, at: string, category: string, format: ParameterFormat): FieldError[] {
  // An authentication template's body is Meta's own text (with add_security_recommendation); the others say theirs.
  if (category === 'AUTHENTICATION' && component.text === undefined) return [];
  if (!text(component.text) || component.text.length > 1024)
    return [{ field: `${at}.text`, message: 'the BODY needs text, 1 to 1024 characters' }];
  return checkVariables(component, at, format, 'body_text');
}

function checkHeader(component: Json, at: string, format: ParameterFormat): FieldError[] {
  const headerFormat = component.format ?? 'TEXT';
  if (typeof headerFormat !== 'string' || !HEADER_FORMATS.includes(headerFormat))
    return [{ field: `${at}.format`, message: `format must be one of ${HEADER_FORMATS.join(', ')}` }];
  if (headerFormat === 'LOCATION') return [];
  if (headerFormat !== 'TEXT') {
    const example = isObject(component.example) ? component.example.header_handle : undefined;
    return Array.isArray(example) && example.length > 0 && example.every(text)
      ? []
      : [
          {
            field: `${at}.example.header_handle`,
            message: `a ${headerFormat} header needs an example: the handle of an uploaded sample (header_handle)`,
          },
        ];
  }
  if (!text(component.text) || component.text.length > 60)
    return [{ field: `${at}.text`, message: 'a TEXT header needs text, 1 to 60 characters' }];
  if (variablesOf(component.text).length > 1)
    return [{ field: `${at}.text`, message: 'a header has at most one variable' }];
  return checkVariables(component, at, format, 'header_text');
}

function checkFooter(component: Json, at: string): FieldError[] {
  if (!text(component.text) || component.text.length > 60)
    return [{ field: `${at}.text`, message: 'the FOOTER needs text, 1 to 60 characters' }];
  if (variablesOf(component.text).length > 0)
    return [{ field: `${at}.text`, message: 'the FOOTER cannot have variables' }];
  return [];
}

/**
 * The variables of a header or body text: well formed for the parameter format (POSITIONAL: `{{1}}` to `{{n}}` in
 * sequence; NAMED: lowercase names), and one example each (`example.body_text: [[…]]` or `header_text: […]`;
 * NAMED: `…_named_params: [{param_name, example}]`).
 */
function checkVariables(
  component: Json,
  at: string,
  format: ParameterFormat,
  key: 'body_text' | 'header_text',
): FieldError[] {
  const variables = variablesOf(component.text);
  if (variables.length === 0) return [];
  if (format === 'POSITIONAL') {
    const expected = variables.map((_, i) => String(i + 1));
    if ([...variables].sort((a, b) => Number(a) - Number(b)).join() !== expected.join())
      return [
        {
          field: `${at}.text`,
          message: `positional variables must be {{1}} to {{${variables.length}}}, each once in sequence (a NAMED template takes names)`,
        },
      ];
  } else {
    const bad = variables.find((v) => !NAMED_VARIABLE.test(v));
    if (bad !== undefined)
      return [
        {
          field: `${at}.text`,
          message: `variable {{${bad}}}: named variables are lowercase letters, digits and underscores, starting with a letter`,
        },
      ];
  }
  const example = isObject(component.example) ? component.example : {};
  if (format === 'NAMED') {
    const field = `${key}_named_params`;
    const given = Array.isArray(example[field]) ? example[field] : [];
    const named = new Set(
      given.filter((p) => isObject(p) && text(p.example)).map((p) => (isObject(p) ? p.param_name : undefined)),
    );
    const missing = variables.filter((v) => !named.has(v));
    return missing.length === 0
      ? []
      : [
          {
            field: `${at}.example.${field}`,
            message: `every variable needs an example ({param_name, example}); missing: ${missing.join(', ')}`,
          },
        ];
  }
  const bodyText: unknown = example.body_text;
  const samples: unknown =
    key === 'body_text' ? (Array.isArray(bodyText) ? bodyText[0] : undefined) : example.header_text;
  const values: unknown[] = Array.isArray(samples) ? samples : [];
  if (values.length !== variables.length || !values.every(text))
    return [
      {
        field: `${at}.example.${key}`,
        message: `one example per variable: ${variables.length} variable${variables.length === 1 ? '' : 's'}, ${values.length} example${values.length === 1 ? '' : 's'} (${key === 'body_text' ? 'body_text: [["…", …]]' : 'header_text: ["…"]'})`,
      },
    ];
  return [];
}

function checkButtons(component: Json, at: string): FieldError[] {
  const buttons = component.buttons;
  if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 10)
    return [{ field: `${at}.buttons`, message: 'BUTTONS needs 1 to 10 buttons' }];
  const errors: FieldError[] = [];
  buttons.forEach((button, j) => {
    const b = `${at}.buttons.${j}`;
    if (!isObject(button) || typeof button.type !== 'string' || !BUTTON_TYPES.includes(button.type))
      return errors.push({ field: `${b}.type`, message: `type must be one of ${BUTTON_TYPES.join(', ')}` });
    if (button.type !== 'OTP' && (!text(button.text) || button.text.length > 25))
      return errors.push({ field: `${b}.text`, message: 'a button needs text, 1 to 25 characters' });
    if (button.type === 'URL') {
      if (typeof button.url !== 'string' || !/^https?:\/\/\S+$/.test(button.url))
        return errors.push({ field: `${b}.url`, message: 'a URL button needs its url (http or https)' });
      const variables = variablesOf(button.url);
      if (variables.length > 1 || (variables.length === 1 && !/\{\{\s*1\s*\}\}$/.test(button.url)))
        return errors.push({ field: `${b}.url`, message: 'a URL button has at most one variable, {{1}}, at its end' });
      const example: unknown[] = Array.isArray(button.example) ? button.example : [];
      if (variables.length === 1 && !(example.length === 1 && text(example[0])))
        return errors.push({ field: `${b}.example`, message: 'a URL with {{1}} needs one example: the full URL' });
    }
    if (
      button.type === 'PHONE_NUMBER' &&
      !(typeof button.phone_number === 'string' && /^\+?\d{6,20}$/.test(button.phone_number))
    )
      return errors.push({ field: `${b}.phone_number`, message: 'a PHONE_NUMBER button needs its phone_number' });
    return undefined;
  });
  return errors;
}
