import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimContext } from './context.js';
import { BadRequest, readJson, sendMeta } from './http-util.js';
import { type MetaError, metaErrors } from './meta-errors.js';
import { newWamid } from './meta-json.js';
import { MARKETING_STOPPED_STEPS, NORMAL_STEPS, type StatusStep, outcomeFor } from './outcomes.js';
import { handleMediaInfo, handleUpload } from './media.js';
import { checkSend } from './send-validation.js';
import { handleTemplateEdit, handleTemplates } from './templates.js';
import { handleSubscribedApps } from './subscriptions.js';
import { recipientDigits } from './store.js';
import { handoverValue, webhookOf } from './payloads/webhooks.js';
import { perSecondOf } from './throughput.js';

const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 1000;

function bearerToken(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}

function sendError(res: ServerResponse, error: MetaError): void {
  sendMeta(res, error.httpStatus, error.body);
}

/** A token the simulator does not know: one it issued and rotated since, or one it never issued. */
const unknownToken = (ctx: SimContext, token: string | undefined) =>
  ctx.store.isRevoked(token) ? metaErrors.tokenInvalidated() : metaErrors.invalidToken();

/** Meta's paths under the version prefix: `segments` is the path after `/vNN.N/`. */
export async function handleGraph(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  segments: string[],
  url: URL,
): Promise<void> {
  const [id = '', edge, ...rest] = segments;
  // Sends check the token themselves so that refused sends are recorded too.
  if (req.method === 'POST' && edge === 'messages' && rest.length === 0)
    return handleSend(ctx, req, res, id, 'messages');
  if (req.method === 'POST' && edge === 'marketing_messages' && rest.length === 0)
    return handleSend(ctx, req, res, id, 'marketing_messages');

  const account = ctx.store.accountByToken(bearerToken(req));
  if (!account) return sendError(res, unknownToken(ctx, bearerToken(req)));
  if (edge === 'subscribed_apps' && rest.length === 0) return handleSubscribedApps(ctx, req, res, account, id);
  if (req.method === 'POST' && edge === 'media' && rest.length === 0) {
    const sender = ctx.store.phone(id);
    if (!sender || sender.account !== account) return sendError(res, metaErrors.unsupportedRequest('post', id));
    ctx.store.countUpload(id);
    ctx.store.uploadsOpen++;
    res.once('close', () => ctx.store.uploadsOpen--);
    return handleUpload(ctx, req, res, account);
  }
  if (req.method === 'GET' && edge === undefined && ctx.store.media(id)) return handleMediaInfo(ctx, res, account, id);
  if (edge === 'block_users' && rest.length === 0) {
    const sender = ctx.store.phone(id);
    if (!sender || sender.account !== account)
      return sendError(res, metaErrors.unsupportedRequest(req.method === 'GET' ? 'get' : 'post', id));
    if (req.method === 'GET')
      return sendList(
        ctx,
        res,
        ctx.store.blockedOn(id).map((b) => ({ messaging_product: 'whatsapp', ...b })),
        url,
        (b) => ({ messaging_product: b.messaging_product, wa_id: b.wa_id }),
      );
    return handleBlockUsers(ctx, req, res, id);
  }
  if (edge === 'message_templates' && rest.length === 0 && id === account.id && req.method !== 'GET')
    return handleTemplates(ctx, req, res, account, url);
  const template = edge === undefined && req.method === 'POST' ? account.templates.find((t) => t.id === id) : undefined;
  if (template) return handleTemplateEdit(ctx, req, res, account, template);
  if (req.method !== 'GET' || id !== account.id) {
    return sendError(res, metaErrors.unsupportedRequest(req.method === 'GET' ? 'get' : 'post', id));
  }
  if (rest.length > 0) return sendError(res, metaErrors.unknownPath(segments.slice(1).join('/')));
  switch (edge) {
    case undefined: {
      const status = account.marketing_messages_onboarding_status;
      return sendMeta(
        res,
        200,
        project(
          { id: account.id, name: account.name, ...(status ? { marketing_messages_onboarding_status: status } : {}) },
          url,
        ),
      );
    }
    case 'phone_numbers':
      return sendList(ctx, res, account.phoneNumbers, url);
    case 'message_templates':
      return sendList(ctx, res, account.templates, url);
    default:
      return sendError(res, metaErrors.unknownPath(edge));
  }
}

/** Keeps only the requested `fields` (plus `id`, which Meta always returns); all fields when absent. */
function project<T extends { id: string }>(item: T, url: URL): Partial<T> {
  const fields = url.searchParams.get('fields');
  if (!fields) return item;
  // Sub-selections such as `throughput{level}` select the whole nested object here.
  const wanted = new Set([
    'id',
    ...fields
      .replace(/\{[^}]*\}/g, '')
      .split(',')
      .map((f) => f.trim()),
  ]);
  return Object.fromEntries(Object.entries(item).filter(([key]) => wanted.has(key))) as Partial<T>;
}

const cursorOf = (id: string) => Buffer.from(`sim:${id}`).toString('base64url');
const idOf = (cursor: string) => Buffer.from(cursor, 'base64url').toString('utf8').replace(/^sim:/, '');

/** Cursor paging like the Graph API: `paging.next` (absolute, with `after`) only when more items follow. */
function sendList<T extends { id: string }>(
  ctx: SimContext,
  res: ServerResponse,
  items: T[],
  url: URL,
  shape: (item: T) => unknown = (item) => project(item, url),
): void {
  const requested = Number(url.searchParams.get('limit'));
  const limit = Number.isInteger(requested) && requested > 0 ? Math.min(requested, MAX_LIMIT) : DEFAULT_LIMIT;
  const after = url.searchParams.get('after');
  let start = 0;
  if (after) {
    const index = items.findIndex((item) => item.id === idOf(after));
    if (index < 0) return sendError(res, metaErrors.invalidCursor());
    start = index + 1;
  }
  const page = items.slice(start, start + limit);
  if (page.length === 0) return sendMeta(res, 200, { data: [] });

  const paging: Record<string, unknown> = {
    cursors: { before: cursorOf(page[0]!.id), after: cursorOf(page[page.length - 1]!.id) },
  };
  if (start + limit < items.length) {
    const next = new URL(url.pathname + url.search, ctx.origin());
    next.searchParams.set('limit', String(limit));
    next.searchParams.set('after', cursorOf(page[page.length - 1]!.id));
    paging.next = next.toString();
  }
  sendMeta(res, 200, { data: page.map(shape), paging });
}

/**
 * `POST|DELETE /{phone-number-id}/block_users` `{messaging_product, block_users: [{user}]}`: per user, added (or
 * removed) with its wa_id, or failed with Meta's error (only users who wrote in the last 24 h can be blocked).
 */
async function handleBlockUsers(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  phoneNumberId: string,
): Promise<void> {
  let body: unknown;
  try {
    body = await readJson(req);
  } catch (err) {
    if (!(err instanceof BadRequest)) throw err;
  }
  const list = (body as { block_users?: unknown } | undefined)?.block_users;
  if (
    (body as { messaging_product?: unknown } | undefined)?.messaging_product !== 'whatsapp' ||
    !Array.isArray(list) ||
    list.length === 0
  ) {
    return sendError(
      res,
      metaErrors.invalidParameter('The parameter block_users is required: a non-empty array of {user}.'),
    );
  }
  const users = list.map((u) =>
    typeof (u as { user?: unknown })?.user === 'string' ? (u as { user: string }).user : '',
  );
  if (users.some((u) => u === ''))
    return sendError(res, metaErrors.invalidParameter("The parameter block_users[]['user'] is required."));
  const done: { input: string; wa_id: string }[] = [];
  const failed: Record<string, unknown>[] = [];
  for (const user of users) {
    const waId =
      req.method === 'DELETE' ? ctx.store.unblock(phoneNumberId, user) : ctx.store.block(phoneNumberId, user);
    if (waId !== undefined) done.push({ input: user, wa_id: waId });
    else if (req.method === 'DELETE')
      failed.push({
        input: user,
        errors: [
          { code: 139102, message: 'Failed to unblock user', error_data: { details: 'The user is not blocked.' } },
        ],
      });
    else failed.push({ input: user, errors: [metaErrors.blockNotEligible()] });
  }
  const key = req.method === 'DELETE' ? 'removed_users' : 'added_users';
  sendMeta(res, 200, {
    messaging_product: 'whatsapp',
    block_users: { [key]: done, ...(failed.length > 0 ? { failed_users: failed } : {}) },
  });
}

/**
 * A send through the Cloud API (`messages`) or the Marketing Messages API (`marketing_messages`: marketing templates
 * of onboarded businesses only, the same body and answer).
 */
async function handleSend(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  phoneNumberId: string,
  edge: 'messages' | 'marketing_messages',
) {
  // Meta counts a request against the number's tier when it reaches its edge. Stamped here, before the body is read:
  // reading it yields to the event loop, and on a busy host the time spent queued behind other work in this process
  // would otherwise bunch sends that arrived evenly spaced (and refuse some of them with 130429).
  const arrivedAt = new Date();
  let body: unknown;
  try {
    body = await readJson(req);
  } catch (err) {
    if (!(err instanceof BadRequest)) throw err;
    body = undefined;
  }
  const account = ctx.store.accountByToken(bearerToken(req));
  /** When the send took its throughput slot (its arrival): the time it is recorded at, as the window counts it. */
  let takenAt: Date | undefined;
  const respond = (status: number, payload: unknown) => {
    ctx.store.record({
      phoneNumberId,
      edge,
      wabaId: account?.id ?? null,
      body,
      response: { status, body: payload },
      at: (takenAt ?? new Date()).toISOString(),
    });
    sendMeta(res, status, payload);
  };
  const reject = (error: MetaError) => respond(error.httpStatus, error.body);

  if (!account) return reject(unknownToken(ctx, bearerToken(req)));
  const sender = ctx.store.phone(phoneNumberId);
  if (!sender || sender.account !== account) return reject(metaErrors.unsupportedRequest('post', phoneNumberId));
  // Meta counts every message request on the number against its tier, whatever becomes of it afterwards.
  takenAt = arrivedAt;
  if (!ctx.store.throughput.take(phoneNumberId, perSecondOf(sender.phone.throughput.level), takenAt.getTime()))
    return reject(metaErrors.throughputReached());
  const check = checkSend(body, account, sender.phone, (mediaId) => ctx.store.media(mediaId)?.wabaId === account.id);
  if (!check.ok) return reject(check.error);
  if (edge === 'marketing_messages') {
    if (account.marketing_messages_onboarding_status !== 'ONBOARDED') return reject(metaErrors.marketingNotOnboarded());
    if (check.template?.category !== 'MARKETING')
      return reject(metaErrors.notMarketingTemplate(check.template?.name ?? String((body as { type?: unknown }).type)));
  }

  const send = body as { to?: string; biz_opaque_callback_data?: unknown };
  const recipient = check.recipient;
  const digits = recipient.kind === 'phone' ? recipient.digits : recipientDigits(send);
  if (recipient.kind === 'dropped') {
    // Meta reads a BSUID in `to` as a phone number: it answers like any accepted send and never delivers it.
    return respond(200, {
      messaging_product: 'whatsapp',
      contacts: [{ input: recipient.input, wa_id: digits }],
      messages: [{ id: newWamid(digits), ...(check.template ? { message_status: 'accepted' } : {}) }],
    });
  }
  const user = recipient.kind === 'user' ? recipient.userId : digits;
  const outcome = recipient.kind === 'user' ? { kind: 'accept' as const, steps: NORMAL_STEPS } : outcomeFor(digits);
  let steps: StatusStep[];
  switch (outcome.kind) {
    case 'reject':
      if (!outcome.firstAttemptOnly || ctx.store.isFirstAttempt(phoneNumberId, digits)) return reject(outcome.error());
      steps = NORMAL_STEPS;
      break;
    case 'hang':
      if (!(await ctx.scheduler.sleep(ctx.hangMs))) return; // simulator closing
      steps = NORMAL_STEPS;
      break;
    case 'accept':
      steps = outcome.steps;
      break;
  }
  // A user who stopped marketing messages: accepted, then failed with 131050 (Meta does not refuse it at once).
  if (check.template?.category === 'MARKETING' && ctx.store.stoppedMarketing(account.id, user))
    steps = MARKETING_STOPPED_STEPS;

  const wamid = newWamid(user);
  respond(200, {
    messaging_product: 'whatsapp',
    // A send to a BSUID names the user by it (input and user_id); Meta gives no wa_id for it.
    contacts: [
      recipient.kind === 'user'
        ? { input: recipient.userId, user_id: recipient.userId }
        : { input: send.to, wa_id: digits },
    ],
    // Meta reports message_status for template sends only.
    messages: [{ id: wamid, ...(check.template ? { message_status: 'accepted' } : {}) }],
  });
  // A service message from the business takes the conversation from Meta Business Agent (Meta's control_taken).
  const addresses = recipient.kind === 'user' ? [recipient.userId] : [digits];
  if (ctx.store.agentHolds(phoneNumberId, ...addresses)) {
    ctx.store.setAgent(phoneNumberId, addresses, false);
    const user = recipient.kind === 'user' ? { userId: recipient.userId } : { waId: digits };
    const value = handoverValue(sender.phone, user, 'control_taken');
    if (ctx.dispatcher.receiverUrl)
      ctx.dispatcher.deliver(webhookOf(account.id, [{ field: 'messaging_handovers', value }])).catch(() => undefined);
  }
  ctx.statuses.start(
    {
      wabaId: account.id,
      phone: sender.phone,
      wamid,
      recipientId: recipient.kind === 'user' ? undefined : digits,
      recipientUserId: recipient.kind === 'user' ? recipient.userId : undefined,
      templateCategory: check.template?.category.toLowerCase(),
      bizOpaqueCallbackData:
        typeof send.biz_opaque_callback_data === 'string' ? send.biz_opaque_callback_data : undefined,
    },
    steps,
  );
}
