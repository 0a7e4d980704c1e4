import { metaErrors } from './meta-errors.js';

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
    this.apps.set(
      wabaId,
      (this.apps.get(wabaId) ?? []).filter((a) => a.id !== appId),
    );
  }

  setFault(
    wabaId: string,
    method: SubscriptionMethod,
    fault: SubscriptionFault | null,
  ): Partial<Record<SubscriptionMethod, SubscriptionFault>> {
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
