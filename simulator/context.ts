import type { Scheduler } from './scheduler.js';
import type { StatusEmitter } from './status-emitter.js';
import type { SimStore } from './store.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';

/** What the route handlers share; built once per simulator instance. */
export interface SimContext {
  store: SimStore;
  dispatcher: WebhookDispatcher;
  statuses: StatusEmitter;
  scheduler: Scheduler;
  version: string;
  hangMs: number;
  /** Origin the simulator is reachable at, for absolute `paging.next` links. */
  origin: () => string;
}
