import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimContext } from './context.js';
import { ControlError, handleControl } from './control-routes.js';
import { type Fixture, defaultFixture } from './fixture.js';
import { handleGraph } from './graph-routes.js';
import { handleDownload } from './media.js';
import { BadRequest, sendJson, sendMeta } from './http-util.js';
import { metaErrors } from './meta-errors.js';
import { Scheduler } from './scheduler.js';
import { type StatusDelays, StatusEmitter, type UserIdMode } from './status-emitter.js';
import { type CreatedAccount, type RecordedSend, SimStore } from './store.js';
import type { SubscribedApp, SubscriptionFault, SubscriptionMethod } from './subscribed-apps.js';
import { WebhookDispatcher, type WebhookRetry } from './webhook-dispatcher.js';

export interface SimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Graph API version in `baseUrl`; requests under any `/vNN.N/` prefix are served. */
  version?: string;
  /** Key for `X-Hub-Signature-256` on every webhook (the service's WHATSAPP_APP_SECRET). */
  appSecret: string;
  /** Webhook receiver; without one no webhooks are posted (control endpoints answer 409). */
  webhookUrl?: string;
  statusDelaysMs?: Partial<StatusDelays>;
  /** false stops the automatic status webhooks after sends; `/_sim/` triggers still post. Default true. */
  webhooksEnabled?: boolean;
  webhookRetry?: Partial<WebhookRetry>;
  /**
   * Business-scoped user ids on the automatic status webhooks: `off` (the default: `recipient_id` only),
   * `alongside` (`recipient_id`, `recipient_user_id` and a `contacts[{wa_id, user_id}]` entry) or `only`
   * (`recipient_user_id` and `contacts[{user_id}]`, no phone number: a user with a username).
   */
  userIds?: UserIdMode;
  /** How long recipient 15550000010 gets no answer. Default 15 s. */
  hangMs?: number;
  fixture?: Fixture;
}

export interface SimulatorHandle {
  /** e.g. http://127.0.0.1:4010 */
  url: string;
  /** `url` plus the version, e.g. http://127.0.0.1:4010/v25.0 (the service's UPSTREAM_BASE_URL). */
  baseUrl: string;
  /** Cancels every pending timer, webhook and hanging request, then stops listening. */
  close(): Promise<void>;
  sends(filter?: { to?: string }): RecordedSend[];
  clearSends(): void;
  setWebhookUrl(url: string | undefined): void;
  createAccount(opts?: { name?: string }): CreatedAccount;
  /** `POST /{phone-number-id}/media` requests received (stored or refused), per sender number. */
  uploadAttempts(phoneNumberId: string): number;
  /** Upload requests still open (their body arriving or their answer not sent): sockets a client holds here. */
  uploadsOpen(): number;
  /** How many media objects an account holds (uploads and inbound media). */
  mediaCount(wabaId: string): number;
  /** A stored media object's bytes (uploads and inbound media), for tests. */
  mediaBytes(mediaId: string): Buffer | undefined;
  /** The apps subscribed to the account's webhooks (`POST /{waba-id}/subscribed_apps`). */
  subscribedApps(wabaId: string): SubscribedApp[];
  /** Makes one method of the account's `subscribed_apps` fail (null clears it); as `POST /_sim/subscribed-apps/faults`. */
  setSubscriptionFault(wabaId: string, method: SubscriptionMethod, fault: SubscriptionFault | null): void;
  /** Issues the account a new token; the old one is answered 190 from now on. As `POST /_sim/token`. */
  rotateToken(wabaId: string): string;
}

export const DEFAULT_STATUS_DELAYS_MS: StatusDelays = { sent: 50, delivered: 150, read: 300 };

/** Starts a WhatsApp Cloud API stand-in on plain node:http (see simulator/README.md). */
export async function startSimulator(opts: SimulatorOptions): Promise<SimulatorHandle> {
  const version = opts.version ?? 'v25.0';
  const scheduler = new Scheduler();
  const store = new SimStore(opts.fixture ?? defaultFixture());
  const dispatcher = new WebhookDispatcher(
    opts.appSecret,
    opts.webhookUrl,
    { maxAttempts: 5, baseDelayMs: 200, ...opts.webhookRetry },
    scheduler,
  );
  const statuses = new StatusEmitter(
    dispatcher,
    scheduler,
    { ...DEFAULT_STATUS_DELAYS_MS, ...opts.statusDelaysMs },
    opts.webhooksEnabled ?? true,
    opts.userIds ?? 'off',
  );
  let origin = '';
  const ctx: SimContext = {
    store,
    dispatcher,
    statuses,
    scheduler,
    version,
    hangMs: opts.hangMs ?? 15_000,
    origin: () => origin,
  };

  const server = http.createServer((req, res) => {
    handle(ctx, req, res).catch((err: unknown) => {
      if (err instanceof ControlError) return sendJson(res, err.status, { error: { message: err.message } });
      if (err instanceof BadRequest) return sendJson(res, 400, { error: { message: err.message } });
      console.error('[simulator] request failed', err);
      sendMeta(res, 500, metaErrors.unknownError().body);
    });
  });
  // Idle keep-alive connections stay open a minute (Node's default is 5 s): a client's agent that picks an idle socket
  // just as the server's 5 s timer fires gets ECONNRESET, and on a slow, busy host that race was seen (a connect
  // answered 502 "Network error (ECONNRESET)"). headersTimeout must stay above keepAliveTimeout.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 61_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;

  return {
    url: origin,
    baseUrl: `${origin}/${version}`,
    close: () => {
      scheduler.close();
      dispatcher.close();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive clients (the service's agent) would otherwise hold close() open.
        server.closeAllConnections();
      });
    },
    sends: (filter) => store.sends(filter?.to),
    clearSends: () => store.clearSends(),
    setWebhookUrl: (url) => dispatcher.setUrl(url),
    createAccount: (o) => store.createAccount(o?.name),
    uploadAttempts: (phoneNumberId) => store.uploadAttempts(phoneNumberId),
    mediaCount: (wabaId) => store.mediaCount(wabaId),
    uploadsOpen: () => store.uploadsOpen,
    mediaBytes: (mediaId) => store.media(mediaId)?.bytes,
    subscribedApps: (wabaId) => store.subscriptions.list(wabaId),
    setSubscriptionFault: (wabaId, method, fault) => void store.subscriptions.setFault(wabaId, method, fault),
    rotateToken: (wabaId) => {
      const token = store.rotateToken(wabaId);
      if (!token) throw new Error(`no simulator account ${wabaId}`);
      return token;
    },
  };
}

async function handle(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', ctx.origin());
  if (url.pathname.startsWith('/_sim/')) return handleControl(ctx, req, res, url);
  const download = /^\/_media\/(\d+)$/.exec(url.pathname);
  if (download && req.method === 'GET') return handleDownload(ctx, req, res, download[1]!);
  const match = /^\/v\d+\.\d+\/(.+)$/.exec(url.pathname);
  if (!match) return sendMeta(res, 404, metaErrors.unknownPath(url.pathname.slice(1)).body);
  return handleGraph(ctx, req, res, match[1]!.split('/'), url);
}
