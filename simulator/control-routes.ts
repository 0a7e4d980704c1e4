import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimContext } from './context.js';
import type { SimAccount, SimPhoneNumber, SimTemplate } from './fixture.js';
import { readJson, sendJson } from './http-util.js';
import { storeMedia } from './media.js';
import { flowReplyOf } from './flows.js';
import { perSecondOf, THROUGHPUT_PER_SECOND } from './throughput.js';
import { handleHealthControl, type HealthRouteHelpers } from './health-routes.js';
import { newWamid, unixSeconds } from './meta-json.js';
import { SUBSCRIPTION_FAULTS, type SubscriptionFault, type SubscriptionMethod } from './subscribed-apps.js';
import {
  agentEchoValue,
  callValue,
  fieldWebhook,
  handoverValue,
  messagesWebhook,
  templateStatusValue,
  userChangeValue,
  webhookOf,
} from './payloads/webhooks.js';

/** A refused control request: answered as `{ error: { message } }` with this status. */
export class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Body = Record<string, unknown>;

/** Template status after each template event; events absent here (FLAGGED) leave the status as it is. */
const STATUS_AFTER_EVENT: Record<string, string> = {
  APPROVED: 'APPROVED',
  REJECTED: 'REJECTED',
  PENDING: 'PENDING',
  PAUSED: 'PAUSED',
  DISABLED: 'DISABLED',
  REINSTATED: 'APPROVED',
  UNARCHIVED: 'APPROVED',
  IN_APPEAL: 'IN_APPEAL',
  LIMIT_EXCEEDED: 'LIMIT_EXCEEDED',
  LOCKED: 'LOCKED',
  ARCHIVED: 'ARCHIVED',
  PENDING_DELETION: 'PENDING_DELETION',
};
const TEMPLATE_EVENTS = new Set([...Object.keys(STATUS_AFTER_EVENT), 'FLAGGED', 'DELETED']);

/** Test-only endpoints under `/_sim/`, kept apart from Meta's paths. */
export async function handleControl(ctx: SimContext, req: IncomingMessage, res: ServerResponse, url: URL) {
  const route = `${req.method ?? ''} ${url.pathname.replace(/\/+$/, '')}`;
  switch (route) {
    case 'GET /_sim/health':
      return sendJson(res, 200, { status: 'ok', version: ctx.version, webhookUrl: ctx.dispatcher.receiverUrl ?? null });
    case 'GET /_sim/sends':
      return sendJson(res, 200, { data: ctx.store.sends(url.searchParams.get('to') ?? undefined) });
    case 'DELETE /_sim/sends':
      ctx.store.clearSends();
      return sendJson(res, 200, { cleared: true });
    case 'POST /_sim/accounts': {
      const body = await readBody(req);
      return sendJson(res, 201, ctx.store.createAccount(optionalString(body, 'name')));
    }
    case 'POST /_sim/token': {
      const account = accountOf(ctx, (await readBody(req)).wabaId);
      return sendJson(res, 200, { wabaId: account.id, accessToken: ctx.store.rotateToken(account.id) });
    }
    case 'GET /_sim/subscribed-apps': {
      const account = accountOf(ctx, url.searchParams.get('wabaId'));
      return sendJson(res, 200, {
        data: ctx.store.subscriptions.list(account.id),
        faults: ctx.store.subscriptions.faultsOf(account.id),
      });
    }
    case 'POST /_sim/subscribed-apps/faults':
      return sendJson(res, 200, subscriptionFault(ctx, await readBody(req)));
    case 'POST /_sim/inbound':
      return sendJson(res, 200, await inbound(ctx, await readBody(req)));
    case 'POST /_sim/agent':
      return sendJson(res, 200, await agent(ctx, await readBody(req)));
    case 'POST /_sim/agent-reply':
      return sendJson(res, 200, await agentReply(ctx, await readBody(req)));
    case 'POST /_sim/user-change':
      return sendJson(res, 200, await userChange(ctx, await readBody(req)));
    case 'POST /_sim/calls':
      return sendJson(res, 200, await call(ctx, await readBody(req)));
    case 'POST /_sim/flow-reply': {
      // {wabaId, phoneNumberId, wamid (a flow message sent), response?: {answers}, body?}: the user's nfm_reply.
      const body = await readBody(req);
      const { phone } = phoneOf(ctx, body);
      const reply = flowReplyOf(ctx, body, phone.display_phone_number);
      if ('refused' in reply) throw new ControlError(reply.status, reply.refused);
      return sendJson(res, 200, await inbound(ctx, reply.inbound));
    }
    case 'POST /_sim/template-status':
      return sendJson(res, 200, await templateStatus(ctx, await readBody(req)));
    case 'POST /_sim/account-update': {
      const body = await readBody(req);
      const { wabaId, event, ...extra } = body;
      const account = accountOf(ctx, wabaId);
      requireString(body, 'event');
      const webhook = fieldWebhook(account.id, 'account_update', { event, ...extra });
      return sendJson(res, 200, { delivery: await deliver(ctx, webhook) });
    }
    case 'POST /_sim/throughput': {
      // {wabaId, phoneNumberId, level: STANDARD|HIGH|COEXISTENCE}: the number's tier from now on (listing and sends), no webhook.
      const body = await readBody(req);
      const { phone } = phoneOf(ctx, body);
      const level = requireString(body, 'level');
      if (!(level in THROUGHPUT_PER_SECOND))
        throw new ControlError(400, `level must be one of ${Object.keys(THROUGHPUT_PER_SECOND).join(', ')}`);
      phone.throughput = { level };
      return sendJson(res, 200, { phoneNumberId: phone.id, level, perSecond: perSecondOf(level) });
    }
    case 'GET /_sim/throughput': {
      const { phone } = phoneOf(ctx, {
        wabaId: url.searchParams.get('wabaId'),
        phoneNumberId: url.searchParams.get('phoneNumberId'),
      });
      return sendJson(res, 200, {
        phoneNumberId: phone.id,
        level: phone.throughput.level,
        perSecond: perSecondOf(phone.throughput.level),
        refused: ctx.store.throughput.refused(phone.id),
      });
    }
    case 'POST /_sim/statuses':
      return sendJson(res, 200, await statuses(ctx, await readBody(req)));
    case 'POST /_sim/user-preferences':
      return sendJson(res, 200, await userPreferences(ctx, await readBody(req)));
    case 'POST /_sim/marketing-messages':
      return sendJson(res, 200, await marketingMessages(ctx, await readBody(req)));
    case 'POST /_sim/webhooks/raw': {
      const { payload } = await readBody(req);
      if (payload === undefined) throw new ControlError(400, 'payload is required');
      // One attempt, no retry: the caller wants the receiver's answer to this exact POST.
      return sendJson(res, 200, await deliver(ctx, payload, false));
    }
    default: {
      const answer = await handleHealthControl(ctx, route, req, HEALTH_HELPERS);
      if (answer === undefined) throw new ControlError(404, `no simulator control route ${route}`);
      return sendJson(res, 200, answer);
    }
  }
}

/** `{wabaId, method?: POST|GET|DELETE (POST), error: permission|unavailable|rate_limit|not_listed|null}`. */
function subscriptionFault(ctx: SimContext, body: Body) {
  const account = accountOf(ctx, body.wabaId);
  const method = (optionalString(body, 'method') ?? 'POST') as SubscriptionMethod;
  if (!['GET', 'POST', 'DELETE'].includes(method)) throw new ControlError(400, 'method must be GET, POST or DELETE');
  const error = body.error ?? null;
  if (error !== null && !(typeof error === 'string' && error in SUBSCRIPTION_FAULTS)) {
    throw new ControlError(400, `error must be null or one of ${Object.keys(SUBSCRIPTION_FAULTS).join(', ')}`);
  }
  return {
    wabaId: account.id,
    faults: ctx.store.subscriptions.setFault(account.id, method, error as SubscriptionFault | null),
  };
}

const INBOUND_MEDIA = new Set(['image', 'video', 'audio', 'document', 'sticker']);
const INBOUND_OTHER = new Set(['location', 'interactive', 'reaction', 'button', 'contacts']);

/**
 * An inbound message from a customer: `text` (a string) by default; or `type` with the type's object in
 * Meta's inbound shape (`location`, `reaction`, `interactive: {type: 'button_reply', button_reply: {…}}`, …);
 * media types take `media: {base64, mimeType}` (stored like an upload) plus `caption` / `filename` in the type's
 * object, and arrive as `{id, mime_type, sha256, …}`. `context` is passed through (a reply).
 */
async function inbound(ctx: SimContext, body: Body) {
  const { account, phone } = phoneOf(ctx, body);
  // A user with a username: Meta may send only the business-scoped user id (`userId`), without `from`.
  const userId = optionalString(body, 'userId');
  const from = userId && body.from === undefined ? undefined : requireString(body, 'from').replace(/\D/g, '');
  const wamid = newWamid(from ?? userId!);
  const type = optionalString(body, 'type') ?? 'text';
  let content: unknown;
  let mediaId: string | undefined;
  if (type === 'text') content = { body: requireString(body, 'text') };
  else if (INBOUND_MEDIA.has(type)) {
    const media = body.media as { base64?: unknown; mimeType?: unknown } | undefined;
    if (typeof media?.base64 !== 'string' || typeof media.mimeType !== 'string')
      throw new ControlError(400, 'media {base64, mimeType} is required');
    const stored = storeMedia(ctx, account, Buffer.from(media.base64, 'base64'), media.mimeType);
    mediaId = stored.id;
    content = {
      ...(body[type] as object | undefined),
      mime_type: stored.mimeType,
      sha256: stored.sha256,
      id: stored.id,
    };
  } else if (INBOUND_OTHER.has(type)) {
    if (typeof body[type] !== 'object' || body[type] === null) throw new ControlError(400, `${type} is required`);
    content = body[type];
  } else throw new ControlError(400, `unsupported inbound type ${type}`);
  const message = {
    ...(from ? { from } : {}),
    ...(userId ? { from_user_id: userId } : {}),
    id: wamid,
    timestamp: String(unixSeconds()),
    type,
    [type]: content,
    ...(body.context ? { context: body.context } : {}),
  };
  const value = {
    contacts: [
      {
        profile: { name: optionalString(body, 'name') ?? 'Sim Customer' },
        ...(from ? { wa_id: from } : {}),
        ...(userId ? { user_id: userId } : {}),
      },
    ],
    messages: [message],
  };
  ctx.store.recordInbound(phone.id, from, userId);
  // While Meta Business Agent holds the conversation, the customer's messages come on `standby`.
  const field = ctx.store.agentHolds(phone.id, from, userId) ? 'standby' : 'messages';
  return { wamid, mediaId, field, delivery: await deliver(ctx, messagesWebhook(account.id, phone, value, field)) };
}

/**
 * Meta Business Agent and a customer's conversation (`{wabaId, phoneNumberId, from?, userId?, active?: true,
 * metadata?}`): `active` true, the agent takes it (Meta's `messaging_handovers` control_passed to ai_agent; the
 * customer's messages then come on `standby`); false, the business releases it back without a notification (Meta
 * sends none for a release). A service message the business sends takes it back (graph-routes.ts, control_taken).
 */
async function agent(ctx: SimContext, body: Body) {
  const { account, phone } = phoneOf(ctx, body);
  const userId = optionalString(body, 'userId');
  const from = userId && body.from === undefined ? undefined : requireString(body, 'from').replace(/\D/g, '');
  const active = body.active !== false;
  ctx.store.setAgent(phone.id, [from, userId], active);
  if (!active) return { active };
  const value = handoverValue(phone, { waId: from, userId }, 'control_passed', optionalString(body, 'metadata'));
  return { active, delivery: await deliver(ctx, webhookOf(account.id, [{ field: 'messaging_handovers', value }])) };
}

/**
 * Meta Business Agent answers a customer (`{wabaId, phoneNumberId, to, text}`): its message's echo, then its
 * `delivered` status, both on `standby`.
 */
async function agentReply(ctx: SimContext, body: Body) {
  const { account, phone } = phoneOf(ctx, body);
  const to = requireString(body, 'to').replace(/\D/g, '');
  const wamid = newWamid(to);
  const echo = await deliver(
    ctx,
    webhookOf(account.id, [{ field: 'standby', value: agentEchoValue(phone, to, wamid, requireString(body, 'text')) }]),
  );
  const status = { id: wamid, status: 'delivered', timestamp: String(unixSeconds()), recipient_id: to };
  const delivered = await deliver(
    ctx,
    messagesWebhook(account.id, phone, { contacts: [{ wa_id: to }], statuses: [status] }, 'standby'),
  );
  return { wamid, deliveries: [echo, delivered] };
}

/**
 * A user's address changes (`{wabaId, phoneNumberId, type?: user_changed_user_id | user_changed_number, from?,
 * waId?, previousUserId, userId}`): Meta's system message, and what the simulator keeps per user (the 24 h window,
 * a marketing stop) follows the user.
 */
async function userChange(ctx: SimContext, body: Body) {
  const { account, phone } = phoneOf(ctx, body);
  const type = optionalString(body, 'type') ?? 'user_changed_user_id';
  if (type !== 'user_changed_user_id' && type !== 'user_changed_number')
    throw new ControlError(400, 'type must be user_changed_user_id or user_changed_number');
  const from = optionalString(body, 'from')?.replace(/\D/g, '');
  const waId = optionalString(body, 'waId')?.replace(/\D/g, '');
  if (type === 'user_changed_number' && (!from || !waId))
    throw new ControlError(400, 'from and waId are required for user_changed_number');
  const previousUserId = requireString(body, 'previousUserId');
  const userId = requireString(body, 'userId');
  const wamid = newWamid(from ?? userId);
  ctx.store.followUser(previousUserId, userId);
  if (from && waId) ctx.store.followUser(from, waId);
  const value = userChangeValue(phone, { type, from, waId, userId, previousUserId, wamid });
  return { wamid, delivery: await deliver(ctx, webhookOf(account.id, [{ field: 'messages', value }])) };
}

/**
 * A call on the number (`{wabaId, phoneNumberId, from, event?: connect | terminate, direction?: USER_INITIATED |
 * BUSINESS_INITIATED, callId?, status?, duration?}`): Meta's `calls` webhook. A user-initiated call opens the
 * customer service window (Meta's rule since 2026-05-21).
 */
async function call(ctx: SimContext, body: Body) {
  const { account, phone } = phoneOf(ctx, body);
  const customer = requireString(body, 'from').replace(/\D/g, '');
  const event = optionalString(body, 'event') ?? 'connect';
  const direction = optionalString(body, 'direction') ?? 'USER_INITIATED';
  if (event !== 'connect' && event !== 'terminate') throw new ControlError(400, 'event must be connect or terminate');
  if (direction !== 'USER_INITIATED' && direction !== 'BUSINESS_INITIATED')
    throw new ControlError(400, 'direction must be USER_INITIATED or BUSINESS_INITIATED');
  const callId = optionalString(body, 'callId') ?? `wacid.${newWamid(customer).slice('wamid.'.length)}`;
  const duration = typeof body.duration === 'number' ? body.duration : undefined;
  if (direction === 'USER_INITIATED') ctx.store.recordInbound(phone.id, customer, undefined);
  const value = callValue(phone, {
    id: callId,
    customer,
    event,
    direction,
    status: optionalString(body, 'status'),
    duration,
  });
  return { callId, delivery: await deliver(ctx, webhookOf(account.id, [{ field: 'calls', value }])) };
}

async function templateStatus(ctx: SimContext, body: Body) {
  const account = accountOf(ctx, body.wabaId);
  const event = requireString(body, 'event');
  if (!TEMPLATE_EVENTS.has(event)) throw new ControlError(400, `unknown template event ${event}`);
  const template = templateOf(account, body);

  if (event === 'DELETED') account.templates.splice(account.templates.indexOf(template), 1);
  template.status = STATUS_AFTER_EVENT[event] ?? template.status;
  const value = templateStatusValue(template, event, optionalString(body, 'reason') ?? 'NONE');
  const delivery = await deliver(ctx, fieldWebhook(account.id, 'message_template_status_update', value));
  return { templateId: template.id, status: event === 'DELETED' ? 'DELETED' : template.status, delivery };
}

async function statuses(ctx: SimContext, body: Body) {
  const { account, phone } = phoneOf(ctx, body);
  if (!Array.isArray(body.statuses) || body.statuses.length === 0) {
    throw new ControlError(400, 'statuses must be a non-empty array');
  }
  const contacts: Body[] = [];
  const list = (body.statuses as Body[]).map((s) => {
    const { id, status, recipient_id, recipient_user_id, timestamp, ...rest } = s;
    for (const [key, value] of Object.entries({ id, status })) {
      if (typeof value !== 'string') throw new ControlError(400, `statuses[].${key} is required`);
    }
    // A user with a username: `recipient_user_id` (the BSUID) instead of, or besides, `recipient_id`.
    if (typeof recipient_id !== 'string' && typeof recipient_user_id !== 'string')
      throw new ControlError(400, 'statuses[].recipient_id or statuses[].recipient_user_id is required');
    // Meta adds a contacts entry per user to BSUID-era statuses (not to failed ones).
    if (typeof recipient_user_id === 'string' && status !== 'failed')
      contacts.push({
        ...(typeof recipient_id === 'string' ? { wa_id: recipient_id } : {}),
        user_id: recipient_user_id,
      });
    return {
      id,
      status,
      timestamp:
        typeof timestamp === 'string' || typeof timestamp === 'number' ? String(timestamp) : String(unixSeconds()),
      ...(typeof recipient_id === 'string' ? { recipient_id } : {}),
      ...(typeof recipient_user_id === 'string' ? { recipient_user_id } : {}),
      ...rest,
    };
  });
  const value = { ...(contacts.length > 0 ? { contacts } : {}), statuses: list };
  return { delivery: await deliver(ctx, messagesWebhook(account.id, phone, value)) };
}

/**
 * A user stops or resumes marketing messages (`{wabaId, phoneNumberId, waId?, userId?, value: stop|resume, name?, webhook?}`):
 * remembered (a stopped user's marketing templates then fail with 131050) and posted as Meta's `user_preferences`
 * webhook, the item carrying `wa_id` and/or `user_id`.
 */
async function userPreferences(ctx: SimContext, body: Body) {
  const { account, phone } = phoneOf(ctx, body);
  const waId = optionalString(body, 'waId')?.replace(/\D/g, '');
  const userId = optionalString(body, 'userId');
  if (!waId && !userId) throw new ControlError(400, 'waId or userId is required');
  const value = requireString(body, 'value');
  if (value !== 'stop' && value !== 'resume') throw new ControlError(400, 'value must be stop or resume');
  ctx.store.setMarketingPreference(
    account.id,
    [waId, userId].filter((u): u is string => u !== undefined),
    value,
  );
  // `webhook: false`: Meta knows, the service not (yet): its next marketing template fails with 131050.
  if (body.webhook === false) return { delivery: null };
  const who = { ...(waId ? { wa_id: waId } : {}), ...(userId ? { user_id: userId } : {}) };
  const payload = {
    contacts: [{ ...who, profile: { name: optionalString(body, 'name') ?? 'Sim Customer' } }],
    user_preferences: [
      {
        ...who,
        detail: `User requested to ${value} marketing messages`,
        category: 'marketing_messages',
        value,
        timestamp: Number(body.timestamp ?? unixSeconds()),
      },
    ],
  };
  return { delivery: await deliver(ctx, messagesWebhook(account.id, phone, payload, 'user_preferences')) };
}

/**
 * The account's Marketing Messages API onboarding (`{wabaId, status, webhook?}`): `marketing_messages_onboarding_status`
 * from now on; ONBOARDED also posts Meta's `account_update` MM_LITE_TERMS_SIGNED webhook unless `webhook` is false.
 */
async function marketingMessages(ctx: SimContext, body: Body) {
  const account = accountOf(ctx, body.wabaId);
  const status = requireString(body, 'status');
  account.marketing_messages_onboarding_status = status;
  if (status !== 'ONBOARDED' || body.webhook === false) return { wabaId: account.id, status };
  const webhook = fieldWebhook(account.id, 'account_update', {
    event: 'MM_LITE_TERMS_SIGNED',
    waba_info: { waba_id: account.id, owner_business_id: '1099000000000001' },
  });
  return { wabaId: account.id, status, delivery: await deliver(ctx, webhook) };
}

function deliver(ctx: SimContext, payload: unknown, retry = true) {
  if (!ctx.dispatcher.receiverUrl) {
    throw new ControlError(409, 'no webhook receiver configured (startSimulator webhookUrl / SIMULATOR_WEBHOOK_URL)');
  }
  return ctx.dispatcher.deliver(payload, { retry });
}

function templateOf(account: SimAccount, body: Body): SimTemplate {
  const name = requireString(body, 'templateName');
  const language = requireString(body, 'language');
  const template = account.templates.find((t) => t.name === name && t.language === language);
  if (!template) throw new ControlError(404, `template ${name} (${language}) not found in ${account.id}`);
  return template;
}

const HEALTH_HELPERS: HealthRouteHelpers = {
  readBody,
  accountOf,
  phoneOf,
  templateOf,
  requireString,
  optionalString,
  deliver: (ctx, payload) => deliver(ctx, payload),
  invalid: (message) => new ControlError(400, message),
};

function accountOf(ctx: SimContext, wabaId: unknown): SimAccount {
  if (typeof wabaId !== 'string' || wabaId === '')
    throw new ControlError(400, 'wabaId (the business account) is required');
  const account = ctx.store.account(wabaId);
  if (!account) throw new ControlError(404, `business account ${wabaId} not found`);
  return account;
}

function phoneOf(ctx: SimContext, body: Body): { account: SimAccount; phone: SimPhoneNumber } {
  const account = accountOf(ctx, body.wabaId);
  const phone = account.phoneNumbers.find((p) => p.id === body.phoneNumberId);
  if (!phone) throw new ControlError(404, `phone number ${String(body.phoneNumberId)} not found in ${account.id}`);
  return { account, phone };
}

async function readBody(req: IncomingMessage): Promise<Body> {
  const body = await readJson(req);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ControlError(400, 'expected a JSON object');
  }
  return body as Body;
}

function requireString(body: Body, key: string): string {
  const value = body[key];
  if (typeof value !== 'string' || value === '') throw new ControlError(400, `${key} is required`);
  return value;
}

function optionalString(body: Body, key: string): string | undefined {
  const value = body[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
