import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import axios, { type AxiosInstance, type AxiosRequestConfig, type AxiosResponse } from 'axios';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { AppConfig } from '../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { Metrics } from '../core/metrics/metrics.js';
import { ConnectTimeoutHttpAgent, ConnectTimeoutHttpsAgent } from './connect-timeout.agent.js';
import { UpstreamError } from './upstream.error.js';
import { BSUID } from './upstream.types.js';
import type {
  BlockOutcome,
  BlockUsersResponse,
  CreatedTemplate,
  GraphPage,
  MediaInfo,
  UploadMediaResponse,
  SendMessageResponse,
  SendPayload,
  SendResult,
  TemplateDefinition,
  TemplateSend,
  UpstreamBusinessAccount,
  UpstreamPhoneNumber,
  UpstreamSubscribedApp,
  UpstreamSuccess,
  UpstreamTemplate,
} from './upstream.types.js';

const PHONE_NUMBER_FIELDS = [
  'id',
  'display_phone_number',
  'verified_name',
  'quality_rating',
  'code_verification_status',
  'status',
  'name_status',
  'platform_type',
  'throughput',
].join(',');
const TEMPLATE_FIELDS = 'id,name,language,status,category,parameter_format,components';
const DEFAULT_PAGE_SIZE = 100;
/** Where Meta serves media URLs from (besides the configured upstream itself, e.g. the simulator). */
const META_MEDIA_HOST = /(^|\.)(fbsbx\.com|fbcdn\.net|whatsapp\.net)$/;
/** A sync that needs more pages than this is a paging bug (ours or Meta's), not a big account. */
const MAX_PAGES = 1000;

/**
 * The one client of Meta's WhatsApp Cloud API. Each business account has its own access token, so the
 * token is an argument of every call rather than client state. Every failure surfaces as UpstreamError.
 */
@Injectable()
export class WhatsAppClient implements OnModuleDestroy {
  private readonly http: AxiosInstance;
  private readonly httpAgent: ConnectTimeoutHttpAgent;
  private readonly httpsAgent: ConnectTimeoutHttpsAgent;
  /** Media's own pools: a slow or stuck transfer can never hold a socket sends and syncs need. */
  private readonly mediaHttpAgent: ConnectTimeoutHttpAgent;
  private readonly mediaHttpsAgent: ConnectTimeoutHttpsAgent;
  private readonly mediaDeadlineMs: number;
  private readonly origin: string;
  private readonly timeoutMs: number;

  constructor(
    config: AppConfig,
    private readonly metrics: Metrics,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {
    // keepAlive: sends are short and frequent; a TLS handshake per message would dominate latency. Sized for
    // the send path: ≈ 1,200 sends/s × 20–50 ms upstream ≈ 25–60 calls in flight, bursts above that. Every socket
    // a burst opened is kept (maxFreeSockets = maxSockets) rather than closed and re-opened on the next burst;
    // LIFO reuse keeps the warm ones busy and lets the rest reach the server's keep-alive timeout, whose hint
    // (Keep-Alive: timeout) Node's agent honours so it does not reuse a socket the server is closing.
    const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 256, scheduling: 'lifo' as const };
    this.httpAgent = new ConnectTimeoutHttpAgent(agentOptions, config.upstreamConnectTimeoutMs);
    this.httpsAgent = new ConnectTimeoutHttpsAgent(agentOptions, config.upstreamConnectTimeoutMs);
    // As many sockets as media transfers the process admits (MediaService's quota), so none ever waits for one.
    const mediaOptions = {
      keepAlive: true,
      maxSockets: config.mediaMaxTransfers,
      maxFreeSockets: 4,
      scheduling: 'lifo' as const,
    };
    this.mediaHttpAgent = new ConnectTimeoutHttpAgent(mediaOptions, config.upstreamConnectTimeoutMs);
    this.mediaHttpsAgent = new ConnectTimeoutHttpsAgent(mediaOptions, config.upstreamConnectTimeoutMs);
    this.mediaDeadlineMs = config.mediaDeadlineMs;
    this.origin = new URL(config.upstreamBaseUrl).origin;
    this.timeoutMs = config.upstreamTimeoutMs;
    this.http = axios.create({
      baseURL: config.upstreamBaseUrl,
      timeout: config.upstreamTimeoutMs,
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      // Redirects could carry the bearer token to another host; Meta's API does not redirect.
      maxRedirects: 0,
      maxContentLength: 10 * 1024 * 1024,
      // Every status resolves so errors are built from the response alone (see call()).
      validateStatus: () => true,
      transitional: { clarifyTimeoutError: true },
      headers: { Accept: 'application/json' },
    });
  }

  /**
   * The business account itself, with its Marketing Messages API onboarding status; also the cheapest check
   * that a token works for it.
   */
  async getBusinessAccount(token: string, wabaId: string): Promise<UpstreamBusinessAccount> {
    const operation = 'getBusinessAccount';
    const url = `/${idSegment(operation, wabaId)}`;
    return this.call(operation, token, {
      method: 'GET',
      url,
      params: { fields: 'id,name,marketing_messages_onboarding_status' },
    });
  }

  /** `POST /{waba-id}/subscribed_apps`: subscribes the token's app to the account's webhooks (`{ success: true }`). */
  async subscribeApp(token: string, wabaId: string): Promise<void> {
    const operation = 'subscribeApp';
    const body = await this.call<UpstreamSuccess>(operation, token, {
      method: 'POST',
      url: `/${idSegment(operation, wabaId)}/subscribed_apps`,
    });
    if (body?.success !== true)
      throw new UpstreamError({
        operation,
        title: 'Subscription answered without success',
        errorClass: 'permanent',
        httpStatus: 200,
      });
  }

  /** `GET /{waba-id}/subscribed_apps`: the apps that receive the account's webhooks. */
  async listSubscribedApps(token: string, wabaId: string): Promise<UpstreamSubscribedApp[]> {
    const operation = 'listSubscribedApps';
    return this.listAll(operation, token, `/${idSegment(operation, wabaId)}/subscribed_apps`, {});
  }

  async listPhoneNumbers(token: string, wabaId: string): Promise<UpstreamPhoneNumber[]> {
    const operation = 'listPhoneNumbers';
    return this.listAll(operation, token, `/${idSegment(operation, wabaId)}/phone_numbers`, {
      fields: PHONE_NUMBER_FIELDS,
      limit: DEFAULT_PAGE_SIZE,
    });
  }

  async listTemplates(token: string, wabaId: string, opts: { pageSize?: number } = {}): Promise<UpstreamTemplate[]> {
    const operation = 'listTemplates';
    return this.listAll(operation, token, `/${idSegment(operation, wabaId)}/message_templates`, {
      fields: TEMPLATE_FIELDS,
      limit: opts.pageSize ?? DEFAULT_PAGE_SIZE,
    });
  }

  /** `POST /{waba-id}/message_templates`: submits a new template for review. */
  async createTemplate(token: string, wabaId: string, definition: TemplateDefinition): Promise<CreatedTemplate> {
    const operation = 'createTemplate';
    const body = await this.call<Partial<CreatedTemplate> & { id?: unknown }>(operation, token, {
      method: 'POST',
      url: `/${idSegment(operation, wabaId)}/message_templates`,
      data: definition,
    });
    if (body?.id === undefined || body.id === null || typeof body.status !== 'string')
      throw new UpstreamError({
        operation,
        title: 'Template creation answered without an id and status',
        errorClass: 'permanent',
        httpStatus: 200,
      });
    return {
      id: String(body.id),
      status: body.status,
      category: body.category ?? definition.category,
    };
  }

  /** `POST /{template-id}`: new components and/or category; Meta reviews the template again. */
  async editTemplate(
    token: string,
    templateId: string,
    change: { components?: object[]; category?: string },
  ): Promise<void> {
    const operation = 'editTemplate';
    const body = await this.call<UpstreamSuccess>(operation, token, {
      method: 'POST',
      url: `/${idSegment(operation, templateId)}`,
      data: change,
    });
    this.expectSuccess(operation, body);
  }

  /** `DELETE /{waba-id}/message_templates?name=…&hsm_id=…`: deletes one language of a template (by its id). */
  async deleteTemplate(token: string, wabaId: string, name: string, templateId: string): Promise<void> {
    const operation = 'deleteTemplate';
    const body = await this.call<UpstreamSuccess>(operation, token, {
      method: 'DELETE',
      url: `/${idSegment(operation, wabaId)}/message_templates`,
      params: { name, hsm_id: idSegment(operation, templateId) },
    });
    this.expectSuccess(operation, body);
  }

  private expectSuccess(operation: string, body: UpstreamSuccess | undefined): void {
    if (body?.success !== true)
      throw new UpstreamError({
        operation,
        title: 'Answered without success',
        errorClass: 'permanent',
        httpStatus: 200,
      });
  }

  /** `POST /{phone-number-id}/messages`: the Cloud API. */
  sendMessage(token: string, phoneNumberId: string, payload: SendPayload): Promise<SendResult> {
    return this.postSend('sendMessage', 'messages', token, phoneNumberId, payload);
  }

  /**
   * `POST /{phone-number-id}/marketing_messages`: the Marketing Messages API (marketing templates of onboarded
   * businesses); the same body and answer as a Cloud API template send.
   */
  sendMarketingMessage(token: string, phoneNumberId: string, payload: TemplateSend): Promise<SendResult> {
    return this.postSend('sendMarketingMessage', 'marketing_messages', token, phoneNumberId, payload);
  }

  /** `POST /{phone-number-id}/block_users`: per user, added (with Meta's wa_id) or failed with Meta's reason. */
  async blockUsers(token: string, phoneNumberId: string, users: string[]): Promise<BlockOutcome[]> {
    return this.blockCall('blockUsers', 'POST', token, phoneNumberId, users);
  }

  /** `DELETE /{phone-number-id}/block_users` with the same body: per user, removed or failed. */
  async unblockUsers(token: string, phoneNumberId: string, users: string[]): Promise<BlockOutcome[]> {
    return this.blockCall('unblockUsers', 'DELETE', token, phoneNumberId, users);
  }

  private async blockCall(
    operation: string,
    method: 'POST' | 'DELETE',
    token: string,
    phoneNumberId: string,
    users: string[],
  ): Promise<BlockOutcome[]> {
    const body = await this.call<BlockUsersResponse>(operation, token, {
      method,
      url: `/${idSegment(operation, phoneNumberId)}/block_users`,
      data: { messaging_product: 'whatsapp', block_users: users.map((user) => ({ user })) },
    });
    const result = body?.block_users;
    if (!result || typeof result !== 'object')
      throw new UpstreamError({
        operation,
        title: 'block_users answered without block_users',
        errorClass: 'permanent',
        httpStatus: 200,
      });
    const done = (method === 'POST' ? result.added_users : result.removed_users) ?? [];
    return [
      ...done.map((u) => ({ input: u.input, waId: u.wa_id ?? null, error: null })),
      ...(result.failed_users ?? []).map((u) => {
        const e = u.errors?.[0];
        return {
          input: u.input,
          waId: u.wa_id ?? null,
          error: {
            code: e?.code ?? null,
            message: e?.error_data?.details ?? e?.message ?? 'refused by the upstream platform',
          },
        };
      }),
    ];
  }

  private async postSend(
    operation: string,
    edge: string,
    token: string,
    phoneNumberId: string,
    payload: SendPayload,
  ): Promise<SendResult> {
    const body = await this.call<SendMessageResponse>(operation, token, {
      method: 'POST',
      url: `/${idSegment(operation, phoneNumberId)}/${edge}`,
      data: metaSendBody(operation, payload),
    });
    const message = body?.messages?.[0];
    const contact = body?.contacts?.[0];
    if (typeof message?.id !== 'string' || !contact) {
      const title = 'Send accepted without a message id';
      throw new UpstreamError({ operation, title, errorClass: 'permanent', httpStatus: 200 });
    }
    return { wamid: message.id, waId: contact.wa_id, input: contact.input, messageStatus: message.message_status };
  }

  /**
   * `POST /{phone-number-id}/media`: the file is streamed through as the multipart body (never buffered) on
   * media's own sockets; `signal` (the caller went away, stalled, or passed a limit) aborts it and frees the socket.
   */
  async uploadMedia(
    token: string,
    phoneNumberId: string,
    file: { stream: Readable; mimeType: string; filename: string },
    signal: AbortSignal,
  ): Promise<string> {
    const operation = 'uploadMedia';
    const boundary = `----bm${randomBytes(12).toString('hex')}`;
    const body = await this.call<UploadMediaResponse>(operation, token, {
      method: 'POST',
      url: `/${idSegment(operation, phoneNumberId)}/media`,
      data: Readable.from(multipartBody(boundary, file)),
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      maxBodyLength: Infinity,
      timeout: this.mediaDeadlineMs,
      signal,
      httpAgent: this.mediaHttpAgent,
      httpsAgent: this.mediaHttpsAgent,
    });
    if (typeof body?.id !== 'string')
      throw new UpstreamError({
        operation,
        title: 'Upload answered without a media id',
        errorClass: 'permanent',
        httpStatus: 200,
      });
    return body.id;
  }

  /** `GET /{media-id}`: the short-lived download URL and what it holds. */
  getMedia(token: string, mediaId: string): Promise<MediaInfo> {
    const operation = 'getMedia';
    return this.call(operation, token, { method: 'GET', url: `/${idSegment(operation, mediaId)}` });
  }

  /**
   * Opens Meta's media URL with the token. The token goes only to Meta's media hosts (https) or to the
   * configured upstream's own origin; redirects are not followed.
   */
  async downloadMedia(
    token: string,
    mediaUrl: string,
    signal: AbortSignal,
  ): Promise<{ stream: Readable; contentType: string; contentLength?: number }> {
    const operation = 'downloadMedia';
    let url: URL;
    try {
      url = new URL(mediaUrl);
    } catch {
      throw new UpstreamError({ operation, title: 'Media URL is not a URL', errorClass: 'permanent' });
    }
    const meta =
      url.protocol === 'https:' && META_MEDIA_HOST.test(url.hostname) && (url.port === '' || url.port === '443');
    if (!meta && url.origin !== this.origin)
      throw new UpstreamError({ operation, title: 'Media URL points outside Meta', errorClass: 'permanent' });
    let response: AxiosResponse<Readable>;
    try {
      response = await this.http.request<Readable>({
        method: 'GET',
        url: url.toString(),
        baseURL: undefined,
        responseType: 'stream',
        maxContentLength: -1,
        timeout: this.mediaDeadlineMs,
        signal,
        httpAgent: this.mediaHttpAgent,
        httpsAgent: this.mediaHttpsAgent,
        headers: { Authorization: `Bearer ${token}`, Accept: '*/*' },
      });
    } catch (err) {
      throw UpstreamError.fromTransport(operation, err, this.mediaDeadlineMs);
    }
    if (response.status < 200 || response.status >= 300) {
      response.data.resume();
      throw new UpstreamError({
        operation,
        title: `Media download answered ${response.status}`,
        errorClass: 'permanent',
        httpStatus: response.status,
      });
    }
    const length = Number(response.headers['content-length']);
    return {
      stream: response.data,
      contentType: String(response.headers['content-type'] ?? 'application/octet-stream'),
      contentLength: Number.isFinite(length) ? length : undefined,
    };
  }

  /** Sockets media transfers hold open to the upstream now (in use, not idle in the pool). */
  get mediaSocketsInUse(): number {
    let n = 0;
    for (const agent of [this.mediaHttpAgent, this.mediaHttpsAgent])
      for (const list of Object.values(agent.sockets)) n += list?.length ?? 0;
    return n;
  }

  onModuleDestroy(): void {
    for (const agent of [this.httpAgent, this.httpsAgent, this.mediaHttpAgent, this.mediaHttpsAgent]) agent.destroy();
  }

  /** Follows `paging.next` until it is absent, refusing loops and links that leave the upstream's origin. */
  private async listAll<T>(
    operation: string,
    token: string,
    path: string,
    params: Record<string, unknown>,
  ): Promise<T[]> {
    const items: T[] = [];
    const seen = new Set<string>();
    let request: AxiosRequestConfig = { method: 'GET', url: path, params };
    for (let page = 1; ; page++) {
      const body = await this.call<GraphPage<T>>(operation, token, request);
      if (!Array.isArray(body?.data)) {
        const title = 'List answer without a data array';
        throw new UpstreamError({ operation, title, errorClass: 'permanent', httpStatus: 200 });
      }
      items.push(...body.data);
      const next = body.paging?.next;
      if (!next) return items;
      const url = this.nextUrl(operation, next);
      if (seen.has(url) || page >= MAX_PAGES) {
        const why = seen.has(url) ? 'repeats a page' : `exceeds ${MAX_PAGES} pages`;
        throw new UpstreamError({ operation, title: `Paging ${why}`, errorClass: 'permanent' });
      }
      seen.add(url);
      request = { method: 'GET', url };
    }
  }

  private nextUrl(operation: string, next: string): string {
    let url: URL;
    try {
      url = new URL(next);
    } catch {
      throw new UpstreamError({ operation, title: 'paging.next is not a URL', errorClass: 'permanent' });
    }
    // The token goes in a header on every page; only ever to the configured upstream.
    if (url.origin !== this.origin) {
      throw new UpstreamError({ operation, title: 'paging.next points outside the upstream', errorClass: 'permanent' });
    }
    // Graph API next links can embed access_token; the header carries it, so keep it out of URLs.
    url.searchParams.delete('access_token');
    return url.toString();
  }

  private async call<T>(operation: string, token: string, request: AxiosRequestConfig): Promise<T> {
    let response: AxiosResponse;
    const timer = this.metrics.upstreamRequests.startTimer({ operation });
    try {
      response = await this.http.request({
        ...request,
        headers: { ...(request.headers as Record<string, string> | undefined), Authorization: `Bearer ${token}` },
      });
    } catch (err) {
      // Never rethrow or wrap err: axios errors hold config.headers, i.e. the token.
      throw this.failed(
        UpstreamError.fromTransport(operation, err, this.timeoutMs),
        timer({ outcome: 'unavailable' }),
        'unavailable',
      );
    }
    const ok = response.status >= 200 && response.status < 300;
    const seconds = timer({ outcome: ok ? 'ok' : 'error' });
    if (ok) {
      // One line per call, as for a failed one (below): in the request's or job's log context, so it carries its ids.
      this.logger.info(
        { operation, outcome: 'ok', httpStatus: response.status, latencyMs: Math.round(seconds * 10_000) / 10 },
        'upstream call',
      );
      return response.data as T;
    }
    const retryAfter: unknown = response.headers['retry-after'];
    throw this.failed(
      UpstreamError.fromResponse(operation, response.status, response.data, retryAfter, [token]),
      seconds,
      'error',
    );
  }

  /**
   * One line per failed call, with what Meta's support asks for (fbtrace_id); in a request's or job's log context,
   * so it carries the request id. A rejection (permanent, credential, blocked) is the caller's business: info; an
   * unavailable or retryable platform is ours: warn.
   */
  private failed(error: UpstreamError, seconds: number, outcome: 'error' | 'unavailable'): UpstreamError {
    this.logger[error.errorClass === 'retryable' ? 'warn' : 'info'](
      {
        operation: error.operation,
        outcome,
        httpStatus: error.httpStatus,
        code: error.code,
        errorClass: error.errorClass,
        // Why, in words (Meta's title, or the network error's code): already free of the token.
        title: error.title,
        fbtraceId: error.fbtraceId,
        timeout: error.isTimeout || undefined,
        latencyMs: Math.round(seconds * 10_000) / 10,
      },
      'upstream call failed',
    );
    return error;
  }
}

function recipientOf(operation: string, payload: SendPayload): { to: string } | { recipient: string } {
  if (payload.recipient !== undefined && payload.to === undefined) {
    if (!BSUID.test(payload.recipient))
      throw new UpstreamError({
        operation,
        title: 'Recipient is not a business-scoped user id',
        errorClass: 'permanent',
      });
    return { recipient: payload.recipient };
  }
  const to = payload.to ?? '';
  const digits = to.startsWith('+') ? to.slice(1) : to;
  if (payload.recipient !== undefined || !/^\d{6,15}$/.test(digits)) {
    throw new UpstreamError({ operation, title: 'Recipient is not E.164 digits', errorClass: 'permanent' });
  }
  return { to: `+${digits}` };
}

/** Meta ids are numeric strings; anything else would let a caller rewrite the request path. */
function idSegment(operation: string, id: string): string {
  if (!/^\d+$/.test(id)) throw new UpstreamError({ operation, title: 'Not a Meta object id', errorClass: 'permanent' });
  return id;
}

/** Meta's upload form: `messaging_product`, `type` (the MIME type) and `file`, the file's bytes passed through. */
async function* multipartBody(
  boundary: string,
  file: { stream: Readable; mimeType: string; filename: string },
): AsyncGenerator<Buffer> {
  const part = (name: string, extra = '') =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n`;
  const filename = file.filename.replace(/["\r\n\\]/g, '_');
  yield Buffer.from(
    `${part('messaging_product')}\r\nwhatsapp\r\n${part('type')}\r\n${file.mimeType}\r\n${part('file', `; filename="${filename}"`)}Content-Type: ${file.mimeType}\r\n\r\n`,
  );
  for await (const chunk of file.stream) yield chunk as Buffer;
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

/**
 * Meta's send body. `to` always gets its `+`: without it Meta may prepend the sender's country code. A
 * business-scoped user id goes as `recipient` with no `to` (Meta lets `to` win when both are given, and reads a
 * BSUID in `to` as a phone number that it never delivers to).
 */
function metaSendBody(operation: string, payload: SendPayload): Record<string, unknown> {
  const common = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    ...recipientOf(operation, payload),
    ...(payload.bizOpaqueCallbackData !== undefined ? { biz_opaque_callback_data: payload.bizOpaqueCallbackData } : {}),
    ...(payload.context !== undefined ? { context: { message_id: payload.context.message_id } } : {}),
  };
  switch (payload.type) {
    case 'text':
      return {
        ...common,
        type: 'text',
        text: { preview_url: payload.text.preview_url ?? false, body: payload.text.body },
      };
    case 'template':
      return { ...common, type: 'template', template: payload.template };
    default:
      return { ...common, type: payload.type, [payload.type]: payload.content };
  }
}
