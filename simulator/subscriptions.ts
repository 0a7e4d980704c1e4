import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimContext } from './context.js';
import type { SimAccount } from './fixture.js';
import { sendMeta } from './http-util.js';
import { type MetaError, metaErrors } from './meta-errors.js';
import { SUBSCRIPTION_FAULTS } from './subscribed-apps.js';

/** The app every simulator token belongs to (set WHATSAPP_APP_ID to its id to have the service check for it). */
export const SIMULATOR_APP = {
  id: '1987654321098765',
  link: 'https://www.facebook.com/games/?app_id=1987654321098765',
  name: 'Business Messaging API (simulator)',
} as const;

/**
 * `GET | POST | DELETE /{waba-id}/subscribed_apps` with the account's token, in Meta's shapes: POST and DELETE
 * answer `{success: true}`, GET `{data: [{whatsapp_business_api_data: {id, link, name}}]}`.
 */
export function handleSubscribedApps(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  account: SimAccount,
  wabaId: string,
): void {
  const method = req.method ?? 'GET';
  const refuse = (error: MetaError) => sendMeta(res, error.httpStatus, error.body);
  if (wabaId !== account.id || !['GET', 'POST', 'DELETE'].includes(method)) {
    return refuse(metaErrors.unsupportedRequest(method === 'GET' ? 'get' : 'post', wabaId));
  }
  const subscriptions = ctx.store.subscriptions;
  const fault = subscriptions.fault(wabaId, method);
  const error = fault ? SUBSCRIPTION_FAULTS[fault] : null;
  if (error) return refuse(error());
  switch (method) {
    case 'GET':
      return sendMeta(res, 200, {
        data: subscriptions.list(wabaId).map((app) => ({ whatsapp_business_api_data: app })),
      });
    case 'POST':
      if (fault !== 'not_listed') subscriptions.subscribe(wabaId, SIMULATOR_APP);
      return sendMeta(res, 200, { success: true });
    default:
      subscriptions.unsubscribe(wabaId, SIMULATOR_APP.id);
      return sendMeta(res, 200, { success: true });
  }
}
