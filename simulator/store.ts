import { randomBytes, randomInt } from 'node:crypto';
import type { Fixture, SimAccount, SimPhoneNumber, SimTemplate } from './fixture.js';
import { SubscribedApps } from './subscribed-apps.js';
import { ThroughputWindows } from './throughput.js';

/** A media object as Meta keeps it: the bytes, readable only with the owning account's token. */
export interface SimMedia {
  id: string;
  wabaId: string;
  bytes: Buffer;
  mimeType: string;
  sha256: string;
}

/** One recorded `POST /{phone-number-id}/messages`, kept for tests (`GET /_sim/sends`). */
export interface RecordedSend {
  phoneNumberId: string;
  /** Which API took it: the Cloud API (`messages`) or the Marketing Messages API (`marketing_messages`). */
  edge: 'messages' | 'marketing_messages';
  /** The business account of the bearer token, or null when the token was not recognised. */
  wabaId: string | null;
  body: unknown;
  response: { status: number; body: unknown };
  at: string;
}

export interface CreatedAccount {
  wabaId: string;
  name: string;
  accessToken: string;
  phoneNumbers: SimPhoneNumber[];
  templates: SimTemplate[];
}

/** The simulator's mutable state: accounts (tokens, numbers, templates) and recorded sends. */
export class SimStore {
  private readonly accounts = new Map<string, SimAccount>();
  private readonly byToken = new Map<string, SimAccount>();
  private readonly byPhone = new Map<string, { account: SimAccount; phone: SimPhoneNumber }>();
  private readonly usedIds = new Set<string>();
  private readonly recorded: RecordedSend[] = [];
  private readonly attempted = new Set<string>();
  private readonly mediaById = new Map<string, SimMedia>();
  private readonly uploads = new Map<string, number>();
  private readonly model: SimAccount;
  /** Tokens replaced by `rotateToken`: Meta answers them 190 (session invalidated), not "cannot parse". */
  private readonly revoked = new Set<string>();
  /** Each number's sends in the last second (Meta's per-number throughput, 130429 over it). */
  readonly throughput = new ThroughputWindows();
  /** Each account's `subscribed_apps` and the faults set on it. */
  readonly subscriptions = new SubscribedApps();
  /** Users (phone digits or BSUID) who stopped marketing messages, per business account. */
  private readonly marketingStops = new Map<string, Set<string>>();
  /** When each user (phone digits and BSUID) last wrote to a phone number: `<phone-number-id>:<user>` → ms. */
  private readonly lastInbound = new Map<string, number>();
  /** The phone digits Meta knows for a BSUID (learnt from inbound messages carrying both). */
  private readonly phoneOfUser = new Map<string, string>();
  /** Blocked users per phone number id, by wa_id, in blocking order. */
  private readonly blocked = new Map<string, Map<string, { input: string; wa_id: string }>>();

  constructor(fixture: Fixture) {
    if (fixture.accounts.length === 0) throw new Error('the simulator fixture needs at least one account');
    fixture.accounts.forEach((account) => this.add(structuredClone(account)));
    this.model = structuredClone(fixture.accounts[0]!);
  }

  accountByToken(token: string | undefined): SimAccount | undefined {
    return token === undefined ? undefined : this.byToken.get(token);
  }

  /** Whether this token was an account's until it was rotated. */
  isRevoked(token: string | undefined): boolean {
    return token !== undefined && this.revoked.has(token);
  }

  /** Gives the account a new token; the old one is rejected from now on (a regenerated system-user token). */
  rotateToken(wabaId: string): string | undefined {
    const account = this.accounts.get(wabaId);
    if (!account) return undefined;
    this.byToken.delete(account.accessToken);
    this.revoked.add(account.accessToken);
    account.accessToken = `sim-token-${randomBytes(16).toString('hex')}`;
    this.byToken.set(account.accessToken, account);
    return account.accessToken;
  }

  account(wabaId: string): SimAccount | undefined {
    return this.accounts.get(wabaId);
  }

  phone(phoneNumberId: string): { account: SimAccount; phone: SimPhoneNumber } | undefined {
    return this.byPhone.get(phoneNumberId);
  }

  /**
   * A new business account cloned from the fixture's first one, with fresh random ids and token, so every
   * test can connect its own WABA (the service refuses to connect one twice, and a database may outlive
   * a simulator restart, hence random rather than sequential ids).
   */
  createAccount(name?: string): CreatedAccount {
    const account: SimAccount = {
      id: this.freshId('3109', 15),
      name: name ?? `${this.model.name} ${randomInt(1000, 9999)}`,
      accessToken: `sim-token-${randomBytes(16).toString('hex')}`,
      phoneNumbers: this.model.phoneNumbers.map((p) => {
        const id = this.freshId('4029', 15);
        return { ...structuredClone(p), id, display_phone_number: `+44 7700 9${id.slice(-5)}` };
      }),
      // Kept below 2^53: webhooks carry template ids as JSON numbers.
      templates: this.model.templates.map((t) => ({ ...structuredClone(t), id: this.freshId('12099', 16) })),
    };
    this.add(account);
    return {
      wabaId: account.id,
      name: account.name,
      accessToken: account.accessToken,
      phoneNumbers: structuredClone(account.phoneNumbers),
      templates: structuredClone(account.templates),
    };
  }

  /** True only the first time a sender number sends to this recipient (for fail-once recipients). */
  isFirstAttempt(phoneNumberId: string, recipient: string): boolean {
    const key = `${phoneNumberId}:${recipient}`;
    if (this.attempted.has(key)) return false;
    this.attempted.add(key);
    return true;
  }

  /** A user's marketing preference (user_preferences): a stopped user's marketing templates fail with 131050. */
  setMarketingPreference(wabaId: string, users: string[], value: 'stop' | 'resume'): void {
    const stops = this.marketingStops.get(wabaId) ?? new Set<string>();
    for (const user of users) {
      if (value === 'stop') stops.add(user);
      else stops.delete(user);
    }
    this.marketingStops.set(wabaId, stops);
  }

  stoppedMarketing(wabaId: string, user: string): boolean {
    return this.marketingStops.get(wabaId)?.has(user) ?? false;
  }

  /** A customer wrote to this number (opens Meta's 24 h block eligibility), by phone and/or BSUID. */
  recordInbound(phoneNumberId: string, from: string | undefined, userId: string | undefined, at = Date.now()): void {
    for (const user of [from, userId]) if (user) this.lastInbound.set(`${phoneNumberId}:${user}`, at);
    if (from && userId) this.phoneOfUser.set(userId, from);
  }

  /** Conversations Meta Business Agent holds: `<phone-number-id>:<user>` (phone digits and BSUID). */
  private readonly agentHeld = new Set<string>();

  /** Whether Meta Business Agent holds the conversation of any of these addresses of a user on the number. */
  agentHolds(phoneNumberId: string, ...users: (string | undefined)[]): boolean {
    return users.some((u) => u !== undefined && this.agentHeld.has(`${phoneNumberId}:${u}`));
  }

  /** Meta Business Agent takes (`held`) or leaves the conversation of these addresses of a user. */
  setAgent(phoneNumberId: string, users: (string | undefined)[], held: boolean): void {
    for (const u of users)
      if (u !== undefined) {
        if (held) this.agentHeld.add(`${phoneNumberId}:${u}`);
        else this.agentHeld.delete(`${phoneNumberId}:${u}`);
      }
  }

  /** A user's address changed (Meta's user id or number change): what Meta keeps per user follows it. */
  followUser(previous: string, next: string): void {
    for (const [k, at] of [...this.lastInbound]) {
      const [phoneNumberId, user] = k.split(':');
      if (user === previous) this.lastInbound.set(`${phoneNumberId}:${next}`, at);
    }
    for (const stops of this.marketingStops.values()) if (stops.has(previous)) stops.add(next);
    const phone = this.phoneOfUser.get(previous);
    if (phone) this.phoneOfUser.set(next, phone);
  }

  /** Blocks `user` on the number: its wa_id, or undefined when it did not write in the last 24 h (Meta's rule). */
  block(phoneNumberId: string, user: string, now = Date.now()): string | undefined {
    const digits = /^\+?\d+$/.test(user) ? user.replace(/\D/g, '') : undefined;
    const last = this.lastInbound.get(`${phoneNumberId}:${digits ?? user}`);
    if (last === undefined || last < now - 24 * 3600_000) return undefined;
    const waId = digits ?? this.phoneOfUser.get(user) ?? user;
    const list = this.blocked.get(phoneNumberId) ?? new Map<string, { input: string; wa_id: string }>();
    list.set(waId, { input: user, wa_id: waId });
    this.blocked.set(phoneNumberId, list);
    return waId;
  }

  /** Unblocks `user` (by wa_id or as it was given): its wa_id, or undefined when it was not blocked. */
  unblock(phoneNumberId: string, user: string): string | undefined {
    const list = this.blocked.get(phoneNumberId);
    const digits = /^\+?\d+$/.test(user) ? user.replace(/\D/g, '') : user;
    const entry = list && [...list.values()].find((b) => b.wa_id === digits || b.input === user);
    if (!list || !entry) return undefined;
    list.delete(entry.wa_id);
    return entry.wa_id;
  }

  blockedOn(phoneNumberId: string): { id: string; wa_id: string }[] {
    return [...(this.blocked.get(phoneNumberId)?.values() ?? [])].map((b) => ({ id: b.wa_id, wa_id: b.wa_id }));
  }

  addMedia(media: SimMedia): void {
    this.mediaById.set(media.id, media);
  }

  /** Upload requests whose connection is still open (the body still arriving, or the answer not sent). */
  uploadsOpen = 0;

  countUpload(phoneNumberId: string): void {
    this.uploads.set(phoneNumberId, this.uploadAttempts(phoneNumberId) + 1);
  }

  uploadAttempts(phoneNumberId: string): number {
    return this.uploads.get(phoneNumberId) ?? 0;
  }

  /** Media objects stored for an account (uploads and inbound media). */
  mediaCount(wabaId: string): number {
    let n = 0;
    for (const media of this.mediaById.values()) if (media.wabaId === wabaId) n++;
    return n;
  }

  media(id: string): SimMedia | undefined {
    return this.mediaById.get(id);
  }

  record(send: RecordedSend): void {
    this.recorded.push(send);
  }

  /** Recorded sends, oldest first; `to` filters on the recipient's digits (or on a BSUID `recipient`). */
  sends(to?: string): RecordedSend[] {
    const digits = to && /^[A-Z]{2}\./.test(to) ? to : to?.replace(/\D/g, '');
    return structuredClone(digits ? this.recorded.filter((s) => recipientDigits(s.body) === digits) : this.recorded);
  }

  clearSends(): void {
    this.recorded.length = 0;
  }

  private add(account: SimAccount): void {
    this.accounts.set(account.id, account);
    this.byToken.set(account.accessToken, account);
    for (const phone of account.phoneNumbers) this.byPhone.set(phone.id, { account, phone });
    [account.id, ...account.phoneNumbers.map((p) => p.id), ...account.templates.map((t) => t.id)].forEach((id) =>
      this.usedIds.add(id),
    );
  }

  /** A new template id, unused so far (kept below 2^53: webhooks carry template ids as JSON numbers). */
  freshTemplateId(): string {
    return this.freshId('12099', 16);
  }

  private freshId(prefix: string, length: number): string {
    for (;;) {
      let id = prefix;
      while (id.length < length) id += String(randomInt(0, 10));
      if (!this.usedIds.has(id)) {
        this.usedIds.add(id);
        return id;
      }
    }
  }
}

/** The digits of a send body's `to`, whatever its shape (`+44…`, `44…`), or its `recipient` (a BSUID); '' when absent. */
export function recipientDigits(body: unknown): string {
  const { to, recipient } = (body ?? {}) as { to?: unknown; recipient?: unknown };
  if (typeof to === 'string') return to.replace(/\D/g, '');
  return typeof recipient === 'string' ? recipient : '';
}
