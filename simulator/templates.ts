import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimContext } from './context.js';
import type { SimAccount, SimTemplate, SimTemplateComponent } from './fixture.js';
import { BadRequest, readJson, sendMeta } from './http-util.js';
import { fbtraceId } from './meta-json.js';
import type { MetaError } from './meta-errors.js';
import { fieldWebhook, templateStatusValue } from './payloads/webhooks.js';

/**
 * Template management as Meta does it (section 8 of the reference): create (`POST /{waba-id}/message_templates`),
 * edit (`POST /{template-id}`) and delete (`DELETE /{waba-id}/message_templates?name=…[&hsm_id=…]`), each checked
 * the way Meta checks it, answered in Meta's shapes. A created or edited template is PENDING, then reviewed after
 * REVIEW_DELAY_MS: the simulator posts the `message_template_status_update` webhook with the outcome. The outcome
 * goes by name, like the simulator's magic recipients: `pending_…` stays in review, `rejected_…` is REJECTED
 * (INVALID_FORMAT), any other is APPROVED.
 */
export const REVIEW_DELAY_MS = 1000;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'];
const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;
const placeholders = (text: unknown) =>
  typeof text === 'string' ? [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))] : [];

/** Meta's template-management errors: code 100 with a subcode and the user-facing title and message. */
function templateError(subcode: number, title: string, message: string): MetaError {
  return {
    httpStatus: 400,
    body: {
      error: {
        message: 'Invalid parameter',
        type: 'OAuthException',
        code: 100,
        error_subcode: subcode,
        is_transient: false,
        error_user_title: title,
        error_user_msg: message,
        fbtrace_id: fbtraceId(),
      },
    },
  };
}

const invalid = (message: string) => templateError(2388040, 'Invalid template', message);

/** `POST|DELETE /{waba-id}/message_templates` of the token's own account. */
export async function handleTemplates(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  account: SimAccount,
  url: URL,
): Promise<void> {
  if (req.method === 'DELETE') return answer(res, deleteTemplates(account, url));
  const body = await readBody(req);
  const error = checkDefinition(body);
  if (error) return answer(res, error);
  const definition = body as { name: string; language: string; category: string; components: Json[] };
  if (account.templates.some((t) => t.name === definition.name && t.language === definition.language))
    return answer(
      res,
      templateError(
        2388024,
        'Content in this language already exists',
        `The template ${definition.name} already has content in ${definition.language}. Edit it, or choose another name.`,
      ),
    );
  const template: SimTemplate = {
    id: ctx.store.freshTemplateId(),
    name: definition.name,
    language: definition.language,
    status: 'PENDING',
    category: definition.category as SimTemplate['category'],
    parameter_format: body.parameter_format === 'NAMED' ? 'NAMED' : 'POSITIONAL',
    components: definition.components as unknown as SimTemplateComponent[],
  };
  account.templates.push(template);
  review(ctx, account, template);
  sendMeta(res, 200, { id: template.id, status: template.status, category: template.category });
}

/** `POST /{template-id}` `{components?, category?}`: the template goes back to review. */
export async function handleTemplateEdit(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  account: SimAccount,
  template: SimTemplate,
): Promise<void> {
  const body = await readBody(req);
  if (body.components === undefined && body.category === undefined)
    return answer(res, invalid('Give components or category to edit a template.'));
  if (template.status === 'PENDING')
    return answer(
      res,
      templateError(2388023, 'Template is in review', 'A template cannot be edited while it is in review.'),
    );
  const error = checkDefinition({
    name: template.name,
    language: template.language,
    category: body.category ?? template.category,
    parameter_format: template.parameter_format,
    components: body.components ?? template.components,
  });
  if (error) return answer(res, error);
  if (body.components !== undefined) template.components = body.components as SimTemplateComponent[];
  if (body.category !== undefined) template.category = body.category as SimTemplate['category'];
  template.status = 'PENDING';
  review(ctx, account, template);
  sendMeta(res, 200, { success: true });
}

function deleteTemplates(account: SimAccount, url: URL): MetaError | undefined {
  const name = url.searchParams.get('name');
  const hsmId = url.searchParams.get('hsm_id');
  if (!name) return invalid('The parameter name is required.');
  const doomed = account.templates.filter((t) => t.name === name && (hsmId === null || t.id === hsmId));
  if (doomed.length === 0)
    return templateError(2593002, 'Template not found', `No template ${name}${hsmId ? ` with id ${hsmId}` : ''}.`);
  account.templates = account.templates.filter((t) => !doomed.includes(t));
  return undefined;
}

function answer(res: ServerResponse, error: MetaError | undefined): void {
  if (error) sendMeta(res, error.httpStatus, error.body);
  else sendMeta(res, 200, { success: true });
}

async function readBody(req: IncomingMessage): Promise<Json> {
  try {
    const body = await readJson(req);
    return isObject(body) ? body : {};
  } catch (err) {
    if (err instanceof BadRequest) return {};
    throw err;
  }
}

/** Meta's checks of a template definition, in its order; the first failure is answered. */
export function checkDefinition(body: Json): MetaError | undefined {
  if (typeof body.name !== 'string' || !/^[a-z0-9_]{1,512}$/.test(body.name))
    return invalid('The name may only contain lowercase letters, digits and underscores (at most 512).');
  if (typeof body.language !== 'string' || !/^[a-z]{2,3}(_[A-Za-z0-9]{2,4})?$/.test(body.language))
    return invalid(`The language ${JSON.stringify(body.language)} is not supported.`);
  if (typeof body.category !== 'string' || !CATEGORIES.includes(body.category))
    return invalid(`The category must be one of ${CATEGORIES.join(', ')}.`);
  if (
    body.parameter_format !== undefined &&
    body.parameter_format !== 'POSITIONAL' &&
    body.parameter_format !== 'NAMED'
  )
    return invalid('parameter_format must be POSITIONAL or NAMED.');
  const components = body.components;
  if (!Array.isArray(components) || !components.every(isObject))
    return invalid('The parameter components is required: an array of objects.');
  const bodyComponent = components.find((c) => c.type === 'BODY');
  if (!bodyComponent) return invalid('A template needs a BODY component.');
  if (body.category !== 'AUTHENTICATION' && (typeof bodyComponent.text !== 'string' || bodyComponent.text === ''))
    return invalid('The BODY component needs text.');
  const variables = placeholders(bodyComponent.text);
  if (variables.length === 0) return undefined;
  const example = isObject(bodyComponent.example) ? bodyComponent.example : {};
  const samples =
    body.parameter_format === 'NAMED'
      ? (Array.isArray(example.body_text_named_params) ? example.body_text_named_params : []).length
      : (Array.isArray(example.body_text) && Array.isArray(example.body_text[0]) ? example.body_text[0] : []).length;
  if (samples !== variables.length)
    return templateError(
      2388043,
      'Missing sample values',
      `The body has ${variables.length} variables and ${samples} sample values: add one sample per variable.`,
    );
  return undefined;
}

/** The review: the outcome after REVIEW_DELAY_MS, posted as Meta's webhook (when a receiver is configured). */
function review(ctx: SimContext, account: SimAccount, template: SimTemplate): void {
  if (template.name.startsWith('pending_')) return;
  const rejected = template.name.startsWith('rejected_');
  const components = template.components;
  ctx.scheduler.after(REVIEW_DELAY_MS, () => {
    // Edited or deleted since: that change has its own review (or none).
    if (!account.templates.includes(template) || template.components !== components || template.status !== 'PENDING')
      return;
    template.status = rejected ? 'REJECTED' : 'APPROVED';
    if (!ctx.dispatcher.receiverUrl) return;
    const value = templateStatusValue(template, template.status, rejected ? 'INVALID_FORMAT' : 'NONE');
    void ctx.dispatcher
      .deliver(fieldWebhook(account.id, 'message_template_status_update', value))
      .catch((err: unknown) => console.error('[simulator] template review webhook failed', err));
  });
}
