import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import axios, { type AxiosInstance, type AxiosRequestConfig, type AxiosResponse } from 'axios';
import { AppConfig } from '../core/config/app-config.js';
import { Metrics } from '../core/metrics/metrics.js';
import { ConnectTimeoutHttpAgent, ConnectTimeoutHttpsAgent } from './connect-timeout.agent.js';
import { UpstreamError } from './upstream.error.js';
import type {
  GraphPage,
  SendMessageResponse,
  SendPayload,
  SendResult,
  UpstreamBusinessAccount,
  UpstreamPhoneNumber,
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
  private readonly origin: string;
  private readonly timeoutMs: number;

  constructor(
    config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    // keepAlive: sends are short and frequent; a TLS handshake per message would dominate latency. Sized for
    // the send path: ≈ 1,200 sends/s × 20–50 ms upstream ≈ 25–60 calls in flight, bursts above that. Every socket
    // a burst opened is kept (maxFreeSockets = maxSockets) rather than closed and re-opened on the next burst;
    // LIFO reuse keeps the warm ones busy and lets the rest reach the server's keep-alive timeout, whose hint
    // (Keep-Alive: timeout) Node's agent honours so it does not reuse a socket the server is closing.
    const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 256, scheduling: 'lifo' as const };
    this.httpAgent = new ConnectTimeoutHttpAgent(agentOptions, config.upstreamConnectTimeoutMs);
    this.httpsAgent = new ConnectTimeoutHttpsAgent(agentOptions, config.upstreamConnectTimeoutMs);
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

  /** The business account itself; also the cheapest check that a token works for it. */
  async getBusinessAccount(token: string, wabaId: string): Promise<UpstreamBusinessAccount> {
    const operation = 'getBusinessAccount';
    const url = `/${idSegment(operation, wabaId)}`;
    return this.call(operation, token, { method: 'GET', url, params: { fields: 'id,name' } });
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

  async sendMessage(token: string, phoneNumberId: string, payload: SendPayload): Promise<SendResult> {
    const operation = 'sendMessage';
    const body = await this.call<SendMessageResponse>(operation, token, {
      method: 'POST',
      url: `/${idSegment(operation, phoneNumberId)}/messages`,
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

  onModuleDestroy(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
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
      response = await this.http.request({ ...request, headers: { Authorization: `Bearer ${token}` } });
    } catch (err) {
      timer({ outcome: 'unavailable' });
      // Never rethrow or wrap err: axios errors hold config.headers, i.e. the token.
      throw UpstreamError.fromTransport(operation, err, this.timeoutMs);
    }
    const ok = response.status >= 200 && response.status < 300;
    timer({ outcome: ok ? 'ok' : 'error' });
    if (ok) return response.data as T;
    const retryAfter = response.headers['retry-after'];
    throw UpstreamError.fromResponse(operation, response.status, response.data, retryAfter, [token]);
  }
}

/** Meta ids are numeric strings; anything else would let a caller rewrite the request path. */
function idSegment(operation: string, id: string): string {
  if (!/^\d+$/.test(id)) throw new UpstreamError({ operation, title: 'Not a Meta object id', errorClass: 'permanent' });
  return id;
}

/** Meta's send body. `to` always gets its `+`: without it Meta may prepend the sender's country code. */
function metaSendBody(operation: string, payload: SendPayload): Record<string, unknown> {
  const digits = payload.to.startsWith('+') ? payload.to.slice(1) : payload.to;
  if (!/^\d{6,15}$/.test(digits)) {
    throw new UpstreamError({ operation, title: 'Recipient is not E.164 digits', errorClass: 'permanent' });
  }
  const common = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: `+${digits}`,
    ...(payload.bizOpaqueCallbackData !== undefined ? { biz_opaque_callback_data: payload.bizOpaqueCallbackData } : {}),
  };
  return payload.type === 'text'
    ? { ...common, type: 'text', text: { preview_url: payload.text.preview_url ?? false, body: payload.text.body } }
    : { ...common, type: 'template', template: payload.template };
}
