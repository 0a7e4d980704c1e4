import http from 'node:http';
import https from 'node:https';
import { metaJson } from './meta-json.js';
import { signatureHeader } from './payloads/signature.js';
import type { Scheduler } from './scheduler.js';

export interface WebhookRetry {
  /** Total attempts including the first. */
  maxAttempts: number;
  /** Delay before the second attempt; doubles each time after that. */
  baseDelayMs: number;
}

/** Outcome of one POST: the receiver's HTTP status, or null with the reason when it never answered. */
export interface DeliveryResult {
  status: number | null;
  error?: string;
}

/** A receiver that never answers must not pin a simulator test for long. */
const DELIVERY_TIMEOUT_MS = 5000;

/**
 * Signs and posts webhook payloads like Meta: the body serialised once (Meta-style escaping), the HMAC
 * taken over those exact bytes, any non-200 answer retried with exponential backoff up to a bound.
 */
export class WebhookDispatcher {
  private readonly inflight = new Set<http.ClientRequest>();
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true }),
    'https:': new https.Agent({ keepAlive: true }),
  };

  /** One receiver, or several in turn (the stand-in for a load balancer in front of several API processes). */
  private urls: string[] = [];
  private turn = 0;

  constructor(
    private readonly appSecret: string,
    url: string | undefined,
    private readonly retry: WebhookRetry,
    private readonly scheduler: Scheduler,
  ) {
    this.setUrl(url);
  }

  get receiverUrl(): string | undefined {
    return this.urls.length ? this.urls.join(',') : undefined;
  }

  /**
   * One URL, or several separated by commas: each delivery (and each retry of it) goes to the next one in turn,
   * as a load balancer in front of several API processes would spread Meta's POSTs. Rejects a malformed URL here,
   * at configuration time, rather than in a background delivery.
   */
  setUrl(url: string | undefined): void {
    const urls = (url ?? '')
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
    for (const u of urls) {
      if (!/^https?:$/.test(new URL(u).protocol)) throw new Error(`webhook receiver must be an http(s) URL, got ${u}`);
    }
    this.urls = urls;
  }

  private nextUrl(): string {
    if (!this.urls.length) throw new Error('no webhook receiver URL configured');
    return this.urls[this.turn++ % this.urls.length]!;
  }

  /**
   * Posts now and resolves with the first attempt's result; when that is not 200 (and `retry` holds) the
   * later attempts run in the background, so callers never wait on a failing receiver.
   */
  async deliver(payload: unknown, opts: { retry?: boolean } = {}): Promise<DeliveryResult> {
    const url = this.nextUrl();
    const body = Buffer.from(metaJson(payload), 'utf8');
    const first = await this.post(url, body);
    if (first.status !== 200 && opts.retry !== false) this.retryLater(body, 2);
    return first;
  }

  close(): void {
    this.inflight.forEach((req) => req.destroy());
    Object.values(this.agents).forEach((agent) => agent.destroy());
  }

  private retryLater(body: Buffer, attempt: number): void {
    if (attempt > this.retry.maxAttempts) return;
    this.scheduler.after(this.retry.baseDelayMs * 2 ** (attempt - 2), () => {
      if (!this.urls.length) return;
      void this.post(this.nextUrl(), body).then((result) => {
        if (result.status !== 200) this.retryLater(body, attempt + 1);
      });
    });
  }

  private post(url: string, body: Buffer): Promise<DeliveryResult> {
    if (this.scheduler.isClosed) return Promise.resolve({ status: null, error: 'simulator closed' });
    const target = new URL(url);
    const transport = target.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      const req = transport.request(
        target,
        {
          method: 'POST',
          agent: this.agents[target.protocol === 'https:' ? 'https:' : 'http:'],
          timeout: DELIVERY_TIMEOUT_MS,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            'x-hub-signature-256': signatureHeader(body, this.appSecret),
            'user-agent': 'facebookexternalua',
          },
        },
        (res) => {
          res.resume(); // drain so the keep-alive socket is reusable
          res.on('end', () => resolve({ status: res.statusCode ?? null }));
        },
      );
      this.inflight.add(req);
      req.on('close', () => this.inflight.delete(req));
      req.on('timeout', () => req.destroy(new Error(`no answer within ${DELIVERY_TIMEOUT_MS} ms`)));
      req.on('error', (err) => resolve({ status: null, error: err.message }));
      req.end(body);
    });
  }
}
