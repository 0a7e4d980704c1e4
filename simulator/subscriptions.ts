import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimContext } from './context.js';
import type { SimAccount } from './fixture.js';
import { sendMeta } from './http-util.js';
import { type MetaError, metaErrors } from './meta-errors.js';

/** The app every simulator token belongs to (set WHATSAPP_APP_ID to its id to have the service check for it). */
export const SIMULATOR_APP = {
  id: '1987654321098765',
  link: 'https://www.facebook.com/games/?app_id=1987654321098765',
  name: 'Business Messaging API (simulator)',
} as const;

export type SubscribedApp = { id: string; link: string; name: string };
export type SubscriptionMethod = 'GET' | 'POST' | 'DELETE';

/** How `POST /_sim/subscribed-apps/faults` makes one method of one account's `subscribed_apps` fail. */
export const SUBSCRIPTION_FAULTS = {
  permission: metaErrors.permissionError,
  unavailable: metaErrors.serviceUnavailable,
  rate_limit: metaErrors.wabaRateLimit,
  /** POST answers `{success: true}` but subscribes nothing, so GET does not list the app. */
  not_listed: null,
} as const;
export type SubscriptionFault = keyof typeof SUBSCRIPTION_FAULTS;

/** Per business account: the apps subscribed to its webhooks, and the faults set on its `subscribed_apps` edge. */
export class SubscribedApps {
  private readonly apps = new Map<string, SubscribedApp[]>();
  private readonly faults = new Map<string, SubscriptionFault>();

  list(wabaId: string): SubscribedApp[] {
    return structuredClone(this.apps.get(wabaId) ?? []);
  }

  subscribe(wabaId: string, app: SubscribedApp): void {
    const apps = this.apps.get(wabaId) ?? [];
    if (!apps.some((a) => a.id === app.id)) apps.push({ ...app });
    this.apps.set(wabaId, apps);
  }

  unsubscribe(wabaId: string, appId: string): void {
    this.apps.set(wabaId, (this.apps.get(wabaId) ?? []).filter((a) => a.id !== appId));
  }

  setFault(wabaId: string, method: SubscriptionMethod, fault: SubscriptionFault | null): Partial<Record<SubscriptionMethod, SubscriptionFault>> {
    if (fault === null) this.faults.delete(`${wabaId} ${method}`);
    else this.faults.set(`${wabaId} ${method}`, fault);
    return this.faultsOf(wabaId);
  }

  fault(wabaId: string, method: string): SubscriptionFault | undefined {
    return this.faults.get(`${wabaId} ${method}`);
  }

  faultsOf(wabaId: string): Partial<Record<SubscriptionMethod, SubscriptionFault>> {
    const out: Partial<Record<SubscriptionMethod, SubscriptionFault>> = {};
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const fault = this.fault(wabaId, method);
      if (fault) out[method] = fault;
    }
    return out;
  }
}

/**
 * `GET | POST | DELETE /{waba-id}/subscribed_apps` with the account's token, in Meta's shapes: POST and DELETE
 * answer `{success: true}`, GET `{data: [{whatsapp_business_api_data: {id, link, name}}]}`.
 */
export function handleSubscribedApps(ctx: SimContext, req: IncomingMessage, res: ServerResponse, account: SimAccount, wabaId: string): void {
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
      return sendMeta(res, 200, { data: subscriptions.list(wabaId).map((app) => ({ whatsapp_business_api_data: app })) });
    case 'POST':
      if (fault !== 'not_listed') subscriptions.subscribe(wabaId, SIMULATOR_APP);
      return sendMeta(res, 200, { success: true });
    default:
      subscriptions.unsubscribe(wabaId, SIMULATOR_APP.id);
      return sendMeta(res, 200, { success: true });
  }
}
