/**
 * The console API on the same origin. The session is the HttpOnly cookie set by POST /auth/login, so the
 * browser sends it and this code never sees it. Every answer is the service's envelope
 * `{statusCode, message, data?, errors?}`.
 */

export interface FieldError {
  field: string;
  message: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
  }

  /** The message for one field (422 Field Validation Failed lists one per failing field). */
  field(name: string): string | undefined {
    return this.errors.find((e) => e.field === name)?.message;
  }
}

export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

export interface Operator {
  id: string;
  email: string;
  role: 'owner' | 'member';
  organization: { id: string; name: string };
  createdAt: string;
}

export interface Session {
  operator: Operator;
  expiresAt: string;
}

export interface BusinessAccount {
  id: string;
  wabaId: string;
  name: string;
  status: 'connected' | 'disconnected';
  phoneNumbersSyncedAt: string | null;
  templatesSyncedAt: string | null;
  createdAt: string;
  disconnectedAt: string | null;
  /** Meta's ban state, restrictions, pricing tiers and alerts (account-level webhooks). */
  standing: AccountStanding;
}

export interface AccountStanding {
  banState: string | null;
  banDate: string | null;
  banned: boolean;
  restrictions: Array<{ type: string; expiration: string | null; active: boolean }>;
  violationType: string | null;
  pricingTiers: Array<{ pricingCategory: string | null; region: string | null; tier: string | null; effectiveMonth: string | null; at: string }>;
  alerts: Array<{ type: string | null; severity: string | null; status: string | null; description: string | null; entityType: string | null; entityId: string | null; at: string }>;
  updatedAt: string | null;
}

export interface PhoneNumber {
  phoneNumberId: string;
  displayPhoneNumber: string;
  verifiedName: string | null;
  qualityRating: string | null;
  status: string | null;
  nameStatus: string | null;
  throughputLevel: string | null;
  /** Meta's messaging limit (TIER_250, TIER_2K, …, TIER_UNLIMITED), from phone_number_quality_update webhooks. */
  messagingLimit: string | null;
  removed: boolean;
  syncedAt: string;
}

export interface Template {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string | null;
  /** Meta's quality score (GREEN, YELLOW, RED, UNKNOWN), from message_template_quality_update webhooks. */
  qualityScore: string | null;
  sendable: boolean;
  removed: boolean;
}

export interface SyncCounts {
  added: number;
  updated: number;
  removed: number;
  total: number;
}

export interface ApiKey {
  id: string;
  name: string;
  wabaId: string;
  accessKey: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface Invitation {
  id: string;
  email: string;
  role: 'owner' | 'member';
  invitedBy: string;
  expiresAt: string;
  createdAt: string;
}

export interface CreatedInvitation extends Invitation {
  token: string;
  /** `/console/signup?invite=…` on this origin. */
  path: string;
}

export interface CreatedApiKey {
  id: string;
  name: string;
  wabaId: string;
  accessKey: string;
  secretKey: string;
  createdAt: string;
}

export interface MessageError {
  code: number | null;
  title: string | null;
  detail: string | null;
  category: string | null;
}

export interface Message {
  id: number;
  upstreamMessageId: string | null;
  phoneNumberId: string;
  to: string;
  type: string;
  status: string;
  templateName: string | null;
  templateLanguage: string | null;
  createdAt: string;
  error: MessageError | null;
  /** What was sent: `{[type]: Meta's object, context?}`, `{components}` for templates. */
  content?: unknown;
}

export interface StatusHistoryItem {
  status: string;
  timestamp: string | null;
  receivedAt: string;
  source: 'send' | 'webhook';
}

export interface MessageDetail extends Message {
  content: unknown;
  sentAt: string | null;
  deliveredAt: string | null;
  readAt: string | null;
  failedAt: string | null;
  statusHistory: StatusHistoryItem[];
}

/** GET /webhooks/events with `after`: the feed form. */
export interface EventFeed<T> {
  items: T[];
  nextCursor: string;
  limit: number;
}

export interface WebhookEvent {
  id: number;
  eventType: string;
  kind: string;
  title: string;
  status: string | null;
  recipient: string | null;
  /** Business-scoped user id: Meta may send it without a phone number (recipient null). */
  userId: string | null;
  messageId: string | null;
  phoneNumberId: string | null;
  upstreamTimestamp: string | null;
  error: { code: number | null; title: string | null; detail: string | null } | null;
  pricing: { pricing_model: string | null; category: string | null; type: string | null; billable: boolean | null } | null;
  processed: boolean;
  createdAt: string;
  raw: unknown;
  /** Inbound media: Meta's media id and what it is; downloadPath streams the bytes (console session). */
  media?: { id: string; mimeType: string | null; caption: string | null; filename: string | null; downloadPath: string } | null;
}

export interface AccountDeliveryHealth {
  wabaId: string;
  pending: number;
  failed: number;
  oldestPendingAt: string | null;
  lagSeconds: number;
}

export interface Counts {
  sent: number;
  delivered: number;
  read: number;
  failed: number;
}

/** Messages Meta priced, by its pricing category and type (counts only: Meta bills the customer directly). */
export interface PricingCounts {
  byCategory: Record<string, number>;
  byType: Record<string, number>;
}

export interface Analytics {
  since: string;
  until: string;
  granularity: 'day' | 'hour';
  totals: Counts & { total: number };
  rates: { delivery: number; read: number; failure: number };
  series: Array<Counts & { bucket: string; pricing: PricingCounts }>;
  pricing: PricingCounts;
  failureReasons: Array<{ code: number | null; title: string | null; count: number }>;
  templates: Array<{ templateName: string; total: number; delivered: number; read: number; failed: number }>;
}

type Query = Record<string, string | number | undefined | null>;

const unauthorizedListeners = new Set<() => void>();

/** Called when a request answers 401: the session ended (expired, revoked, logged out elsewhere). */
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiFailure(0, 'The service cannot be reached. Check your connection and try again.');
  }
  const payload = (await res.json().catch(() => null)) as { message?: string; data?: T; errors?: FieldError[] } | null;
  if (!res.ok) {
    // A failed login is a 401 too, but it is the form's business, not a lost session.
    if (res.status === 401 && !path.startsWith('/auth/login')) unauthorizedListeners.forEach((l) => l());
    throw new ApiFailure(res.status, payload?.message ?? `Request failed (HTTP ${res.status})`, payload?.errors ?? []);
  }
  return payload?.data as T;
}

export const api = {
  get: <T,>(path: string, query?: Query) => request<T>('GET', withQuery(path, query)),
  post: <T,>(path: string, body: unknown = {}) => request<T>('POST', path, body),
  delete: <T,>(path: string) => request<T>('DELETE', path),
};

/** Path segment for user-supplied ids. */
export const seg = (value: string | number) => encodeURIComponent(String(value));
