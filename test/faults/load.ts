// Signed webhook deliveries in Meta's shapes, and a sender that posts them at a steady rate and, like Meta,
// retries every answer other than 200 (same bytes, same signature) with growing delays.
import { createHash, randomInt } from 'node:crypto';
import http from 'node:http';
import { signedDelivery } from '../../simulator/payloads/signature.js';
import { messagesValue, webhookOf } from '../../simulator/payloads/webhooks.js';
import type { FaultTenant, ItemKey } from './db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Delivery {
  body: Buffer;
  signature: string;
  items: number;
  /** sha256 of the body (hex), to match acknowledgements with stored rows. */
  hash: string;
}

/** The changes signed as Meta posts them: Meta's escaping, signed over those bytes. */
function delivery(
  tenant: FaultTenant,
  changes: { field: string; value: unknown }[],
  secret: string,
  items: number,
): Delivery {
  const { body, signature } = signedDelivery(webhookOf(tenant.wabaId, changes), secret);
  return { body, signature, items, hash: createHash('sha256').update(body).digest('hex') };
}

export interface Workload {
  deliveries: Delivery[];
  /** One per distinct item (status or inbound message). */
  expected: ItemKey[];
  /** Final state of each message: read, with the timestamps of its sent/delivered/read statuses (ms). */
  expectedMessages: Map<string, { sentAt: number; deliveredAt: number; readAt: number }>;
  /** Distinct inbound senders: one customer service window each. */
  expectedWindows: number;
}

type Item =
  | { kind: 'status'; value: Record<string, unknown> }
  | { kind: 'inbound'; value: Record<string, unknown>; contact: Record<string, unknown> };

function shuffle<T>(a: T[]): T[] {
  for (let i = a.length - 1; i > 0; i--) {
    const j = randomInt(0, i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

export interface WorkloadOptions {
  secret: string;
  /** Inbound messages, each from a different customer. */
  inbound: number;
  /** Share of deliveries that carry several items (2..maxBatch); the rest carry one, as Meta mostly does. */
  batchShare?: number;
  maxBatch?: number;
  /** A few large deliveries (e.g. 4 × 60 items), so that a worker is likely to die in the middle of one. */
  bigDeliveries?: { count: number; size: number };
}

/** sent, delivered and read for every message of the tenant, plus inbound messages, shuffled into deliveries. */
export function buildWorkload(tenant: FaultTenant, opts: WorkloadOptions): Workload {
  const base = Math.floor(Date.now() / 1000) - 3600;
  const items: Item[] = [];
  const expected: ItemKey[] = [];
  const expectedMessages = new Map<string, { sentAt: number; deliveredAt: number; readAt: number }>();
  let i = 0;
  for (const [wamid] of tenant.messages) {
    const t0 = base + i++;
    const recipient = `4477009${String(i).padStart(5, '0')}`;
    (['sent', 'delivered', 'read'] as const).forEach((status, k) => {
      const value: Record<string, unknown> = { id: wamid, status, timestamp: String(t0 + k), recipient_id: recipient };
      if (status !== 'read') {
        value.conversation = { id: `conv-${wamid}`, origin: { type: 'utility' } };
        value.pricing = { billable: true, pricing_model: 'PMP', category: 'utility' };
      }
      items.push({ kind: 'status', value });
      expected.push({ kind: 'status_update', messageId: wamid, status });
    });
    expectedMessages.set(wamid, { sentAt: t0 * 1000, deliveredAt: (t0 + 1) * 1000, readAt: (t0 + 2) * 1000 });
  }
  for (let n = 0; n < opts.inbound; n++) {
    const from = `4478001${String(n).padStart(5, '0')}`;
    const id = `wamid.in.${tenant.wabaId}.${n}`;
    items.push({
      kind: 'inbound',
      // Non-ASCII text: Meta escapes it as \uXXXX, which the signature must be checked over.
      value: {
        from,
        id,
        timestamp: String(base + n),
        type: 'text',
        text: { body: `Olá ${n} — 👋 when does it arrive?` },
      },
      contact: { profile: { name: `Cliente ${n}` }, wa_id: from },
    });
    expected.push({ kind: 'inbound_message', messageId: id, status: null });
  }

  shuffle(items);
  const groups: Item[][] = [];
  let rest = items;
  if (opts.bigDeliveries) {
    for (let b = 0; b < opts.bigDeliveries.count && rest.length > 0; b++) {
      groups.push(rest.slice(0, opts.bigDeliveries.size));
      rest = rest.slice(opts.bigDeliveries.size);
    }
  }
  const batchShare = opts.batchShare ?? 0.2;
  const maxBatch = opts.maxBatch ?? 5;
  while (rest.length > 0) {
    const size = Math.random() < batchShare ? randomInt(2, maxBatch + 1) : 1;
    groups.push(rest.slice(0, size));
    rest = rest.slice(size);
  }
  const deliveries = shuffle(groups).map((g) => toDelivery(tenant, g, opts.secret));
  return { deliveries, expected, expectedMessages, expectedWindows: opts.inbound };
}

function toDelivery(tenant: FaultTenant, group: Item[], secret: string): Delivery {
  const statuses = group.filter((g) => g.kind === 'status').map((g) => g.value);
  const inbound = group.filter((g): g is Extract<Item, { kind: 'inbound' }> => g.kind === 'inbound');
  const changes: { field: string; value: unknown }[] = [];
  if (statuses.length > 0)
    changes.push({ field: 'messages', value: messagesValue(tenant.phoneNumberId, { statuses }) });
  if (inbound.length > 0)
    changes.push({
      field: 'messages',
      value: messagesValue(tenant.phoneNumberId, {
        contacts: inbound.map((m) => m.contact),
        messages: inbound.map((m) => m.value),
      }),
    });
  return delivery(tenant, changes, secret, group.length);
}

/** A delivery that carries the given deliveries' items again (Meta may batch an item anew on a retry). */
export function rebatch(tenant: FaultTenant, parts: Delivery[], secret: string): Delivery {
  const changes = parts.flatMap(
    (p) =>
      (JSON.parse(p.body.toString('utf8')) as { entry: { changes: { field: string; value: unknown }[] }[] }).entry[0]!
        .changes,
  );
  return delivery(
    tenant,
    changes,
    secret,
    parts.reduce((n, p) => n + p.items, 0),
  );
}

export interface Scheduled {
  delivery: Delivery;
  /** When to make the first attempt, in ms after the start. */
  at: number;
}

/** Evenly spaced: `rate` deliveries per second. */
export function steady(deliveries: Delivery[], rate: number): Scheduled[] {
  return deliveries.map((delivery, i) => ({ delivery, at: (i * 1000) / rate }));
}

export interface SendStats {
  /** HTTP attempts made (first tries and retries). */
  posts: number;
  /** Deliveries (scheduled sends) that ended with a 200: every acknowledged one must be stored. */
  acked: number;
  /** 200s per body hash. */
  ackedByHash: Map<string, number>;
  /** Answers by HTTP status, plus `network` (no answer: refused, reset) and `timeout` (outcome unknown). */
  answers: Record<string, number>;
  retries: number;
  /**
   * Attempts sent on a kept-alive socket the API had just closed as idle (ECONNRESET or EPIPE on a reused socket, before
   * any answer): the request never reached the receiver, and is sent again at once on a new socket, as Node's
   * documentation advises any client to do. Neither a POST nor an answer of the receiver; counted here only.
   */
  staleSockets: number;
  /** Scheduled sends still not acknowledged at the deadline. */
  gaveUp: number;
  /** Non-200 answers: first and last, in ms after the start. */
  firstNon200At: number | null;
  lastNon200At: number | null;
  elapsedMs: number;
  /** Acknowledgement latency of first attempts answered 200, ms. */
  p50: number;
  p99: number;
  /** The slowest attempts: when they started (ms after the start), how long they took, their answer. */
  slowest: { at: number; ms: number; status: string }[];
  /** Every attempt: wall-clock start and end (epoch ms) and its answer. */
  attempts: { startedAt: number; endedAt: number; status: string }[];
}

export interface SendOptions {
  /** The API; several (a load balancer's spread): each attempt goes to the next in turn. */
  url: string | string[];
  retry: boolean;
  maxInFlight?: number;
  /** No new attempt after this many ms (the sender gives up, as Meta does after its retry window). */
  deadlineMs: number;
  timeoutMs?: number;
}

/** Posts every scheduled delivery; resolves when each is acknowledged or given up. */
export async function send(schedule: Scheduled[], opts: SendOptions): Promise<SendStats> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.maxInFlight ?? 64 });
  const targets = (Array.isArray(opts.url) ? opts.url : [opts.url]).map((u) => new URL('/webhooks/whatsapp', u));
  let turn = 0;
  const stats: SendStats = {
    posts: 0,
    acked: 0,
    ackedByHash: new Map(),
    answers: {},
    retries: 0,
    staleSockets: 0,
    gaveUp: 0,
    firstNon200At: null,
    lastNon200At: null,
    elapsedMs: 0,
    p50: 0,
    p99: 0,
    slowest: [],
    attempts: [],
  };
  const latencies: number[] = [];
  const start = Date.now();
  const count = (k: string) => (stats.answers[k] = (stats.answers[k] ?? 0) + 1);

  const attempt = (d: Delivery): Promise<{ status: number | 'network' | 'timeout' | 'stale-socket'; ms: number }> =>
    new Promise((resolve) => {
      const t = performance.now();
      const req = http.request(
        targets[turn++ % targets.length]!,
        {
          method: 'POST',
          agent,
          timeout: opts.timeoutMs ?? 10_000,
          headers: {
            'content-type': 'application/json',
            'content-length': d.body.length,
            'x-hub-signature-256': d.signature,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t }));
          res.on('error', () => resolve({ status: 'network', ms: performance.now() - t }));
        },
      );
      let timedOut = false;
      req.on('timeout', () => {
        timedOut = true;
        req.destroy();
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
        resolve({ status: timedOut ? 'timeout' : stale ? 'stale-socket' : 'network', ms: performance.now() - t });
      });
      req.end(d.body);
    });

  const deliver = async (d: Delivery): Promise<void> => {
    for (let n = 0; ; n++) {
      stats.posts++;
      if (n > 0) stats.retries++;
      const startedAt = Date.now();
      let r = await attempt(d);
      while (r.status === 'stale-socket') {
        stats.staleSockets++;
        r = await attempt(d);
      }
      count(String(r.status));
      stats.attempts.push({ startedAt, endedAt: Date.now(), status: String(r.status) });
      if (r.status === 200) {
        stats.acked++;
        stats.ackedByHash.set(d.hash, (stats.ackedByHash.get(d.hash) ?? 0) + 1);
        if (n === 0) latencies.push(r.ms);
        return;
      }
      const at = Date.now() - start;
      stats.firstNon200At ??= at;
      stats.lastNon200At = at;
      // 4xx other than 408/429 would be permanent for Meta; here none is expected, so stop and let the
      // assertions report it.
      const retryable =
        r.status === 'network' ||
        r.status === 'timeout' ||
        r.status === 408 ||
        r.status === 429 ||
        (typeof r.status === 'number' && r.status >= 500);
      if (!opts.retry || !retryable || Date.now() - start > opts.deadlineMs) {
        stats.gaveUp++;
        return;
      }
      await sleep(Math.min(250 * 2 ** n, 2000) * (0.75 + Math.random() * 0.5));
    }
  };

  const inFlight = new Set<Promise<void>>();
  const max = opts.maxInFlight ?? 64;
  for (const s of [...schedule].sort((a, b) => a.at - b.at)) {
    const wait = start + s.at - Date.now();
    if (wait > 0) await sleep(wait);
    while (inFlight.size >= max) await Promise.race(inFlight);
    const p = deliver(s.delivery).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  agent.destroy();
  stats.elapsedMs = Date.now() - start;
  latencies.sort((a, b) => a - b);
  const pct = (q: number) =>
    latencies.length
      ? Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! * 10) / 10
      : 0;
  stats.p50 = pct(0.5);
  stats.p99 = pct(0.99);
  stats.slowest = [...stats.attempts]
    .sort((a, b) => b.endedAt - b.startedAt - (a.endedAt - a.startedAt))
    .slice(0, 3)
    .map((a) => ({ at: a.startedAt - start, ms: a.endedAt - a.startedAt, status: a.status }));
  return stats;
}
