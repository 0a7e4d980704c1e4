// The service tier of connecting business accounts: BusinessAccountsService over in-memory repositories
// (test/utils/in-memory), with a fake of Meta (the account read and the webhook subscription) and the real takeover
// hooks and token sealing. Each test is what an operator sees in the console: the account, its key pairs, the audit
// log of its organization (and of the organization that lost it).
import { randomBytes } from 'node:crypto';
import { AccountTakeoverHooks } from '../../src/accounts/business-accounts/account-takeover-hooks.js';
import {
  ALREADY_CONNECTED,
  BusinessAccountsService,
} from '../../src/accounts/business-accounts/business-accounts.service.js';
import type { ConsoleScope } from '../../src/auth/request-scope.js';
import { SecretBox } from '../../src/core/crypto/secret-box.js';
import { Conflict, InvalidInput, NotFound, UpstreamUnavailable } from '../../src/core/errors/domain-errors.js';
import { UpstreamError } from '../../src/upstream/upstream.error.js';
import {
  accountRow,
  FakeMeta,
  MemoryApiKeys,
  MemoryBusinessAccounts,
  MemoryKeyCache,
  refusal,
} from '../utils/in-memory/accounts.js';
import { MemoryAudit } from '../utils/in-memory/audit.js';
import { MemoryDatabase } from '../utils/in-memory/memory-database.js';

const ORG = 'org-acme';
const OTHER_ORG = 'org-rival';
const WABA = '310000000000001';
const TOKEN = 'EAAG-good-token';

const operatorOf = (organizationId: string): ConsoleScope => ({
  operatorId: `operator-of-${organizationId}`,
  organizationId,
  email: `admin@${organizationId}.example`,
  sessionId: `session-of-${organizationId}`,
  role: 'admin',
  platformAdmin: false,
});
const operator = operatorOf(ORG);

function setUp() {
  const db = new MemoryDatabase();
  const accounts = new MemoryBusinessAccounts(db);
  const keys = new MemoryApiKeys(db);
  const meta = new FakeMeta();
  const box = new SecretBox(randomBytes(32));
  const audit = new MemoryAudit(db);
  const keyCache = new MemoryKeyCache();
  const hooks = new AccountTakeoverHooks();
  const service = new BusinessAccountsService(
    db,
    accounts,
    keys,
    meta,
    { seal: (token, wabaId) => box.seal(token, wabaId) },
    audit,
    keyCache,
    meta,
    hooks,
  );
  /** The token stored for the account, opened as a send would open it. */
  const storedToken = (wabaId: string) => {
    const account = accounts.get(wabaId);
    return account && box.open(account.accessTokenEncrypted, wabaId);
  };
  return { db, accounts, keys, meta, audit, keyCache, hooks, service, storedToken };
}

/** What a refused call must leave: no account, no audit entry, no subscription. */
function expectNothingStored(p: ReturnType<typeof setUp>) {
  expect(p.accounts.get(WABA)).toBeUndefined();
  expect(p.audit.of(ORG)).toEqual([]);
}

describe('BusinessAccountsService (service tier, in-memory repositories)', () => {
  describe('connect', () => {
    it("checks the token with Meta, subscribes the app, then stores the account with its token sealed and Meta's name, and audits it", async () => {
      const p = setUp();
      p.meta.account(WABA, TOKEN, { name: 'Acme Parcels', marketingMessagesStatus: 'ONBOARDED' });

      const view = await p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN });

      expect(view).toMatchObject({
        wabaId: WABA,
        name: 'Acme Parcels',
        status: 'connected',
        webhooksSubscribed: true,
        credentialsValid: true,
        credentialsError: null,
        disconnectedAt: null,
        marketingMessages: { onboarded: true, status: 'ONBOARDED' },
      });
      expect(p.meta.subscriptions).toEqual([{ wabaId: WABA, token: TOKEN }]);
      expect(p.accounts.get(WABA)).toMatchObject({ organizationId: ORG, heldSince: null, readableUntil: null });
      expect(p.accounts.get(WABA)?.accessTokenEncrypted).not.toContain(TOKEN);
      expect(p.storedToken(WABA)).toBe(TOKEN);
      expect(p.audit.of(ORG)).toEqual([
        expect.objectContaining({
          action: 'business_account.connected',
          targetType: 'business_account',
          targetId: WABA,
          operatorId: operator.operatorId,
          operatorEmail: operator.email,
          details: { name: 'Acme Parcels' },
        }),
      ]);
    });

    it("keeps the name the operator gave over Meta's, and leaves the marketing status unknown when Meta does not say it", async () => {
      const p = setUp();
      p.meta.account(WABA, TOKEN, { name: 'Meta name' });

      const view = await p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN, name: 'Support line' });

      expect(view.name).toBe('Support line');
      expect(view.marketingMessages).toEqual({ onboarded: false, status: null, updatedAt: null });
    });

    it('refuses a token Meta rejects as an input error on accessToken, and stores nothing', async () => {
      const p = setUp();
      p.meta.account(WABA, TOKEN);

      const refused = p.service.connect(operator, { wabaId: WABA, accessToken: 'EAAG-expired' });

      await expect(refused).rejects.toBeInstanceOf(InvalidInput);
      await expect(refused).rejects.toMatchObject({
        fields: [{ field: 'accessToken', message: expect.stringContaining('rejected this access token') }],
      });
      expectNothingStored(p);
      expect(p.meta.subscriptions).toEqual([]);
    });

    it('refuses a token of an account Meta has blocked as an input error on accessToken', async () => {
      const p = setUp();
      p.meta.account(WABA, TOKEN);
      p.meta.nextReadFails = refusal(400, 131031, 'Business account has been locked');

      await expect(p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN })).rejects.toMatchObject({
        fields: [{ field: 'accessToken', message: expect.stringContaining('Business account has been locked') }],
      });
      expectNothingStored(p);
    });

    it('refuses a WABA the token does not reach as an input error on wabaId, and stores nothing', async () => {
      const p = setUp();
      p.meta.account('310000000000999', TOKEN);

      await expect(p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN })).rejects.toMatchObject({
        fields: [{ field: 'wabaId', message: expect.stringContaining('does not know this business account') }],
      });
      expectNothingStored(p);
    });

    it('answers upstream-unavailable when Meta cannot be reached, and stores nothing', async () => {
      const p = setUp();
      p.meta.account(WABA, TOKEN);
      p.meta.nextReadFails = UpstreamError.fromTransport('getBusinessAccount', { code: 'ECONNRESET' }, 2000);

      await expect(p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN })).rejects.toBeInstanceOf(
        UpstreamUnavailable,
      );
      expectNothingStored(p);
    });

    it("fails with the subscription's cause when the app cannot be subscribed, and stores nothing (it would never receive a webhook)", async () => {
      const p = setUp();
      p.meta.account(WABA, TOKEN);
      const cause = new UpstreamUnavailable(
        'webhook subscription: subscribed_apps does not list this app (1234) after subscribing',
      );
      p.meta.subscriptionFails = cause;

      await expect(p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN })).rejects.toBe(cause);
      expectNothingStored(p);
    });

    it('refuses to connect again an account the organization holds, before asking Meta anything', async () => {
      const p = setUp();
      p.accounts.stored(ORG, WABA);

      // No token is known to Meta here: the answer is the conflict, not the token's rejection.
      const again = p.service.connect(operator, { wabaId: WABA, accessToken: 'EAAG-anything' });

      await expect(again).rejects.toBeInstanceOf(Conflict);
      await expect(again).rejects.toMatchObject({
        message: ALREADY_CONNECTED,
        fields: [{ field: 'wabaId', message: 'wabaId is already connected' }],
      });
      expect(p.meta.subscriptions).toEqual([]);
    });

    it('reconnects an account the organization disconnected: same account, new token, connected again, audited as reconnected', async () => {
      const p = setUp();
      const old = p.accounts.stored(ORG, WABA, { disconnectedAt: new Date(), readableUntil: new Date() });
      p.meta.account(WABA, TOKEN, { name: 'Acme Parcels' });

      const view = await p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN });

      expect(view).toMatchObject({ id: old.id, status: 'connected', name: 'Acme Parcels' });
      expect(p.accounts.get(WABA)).toMatchObject({ organizationId: ORG, disconnectedAt: null, readableUntil: null });
      expect(p.storedToken(WABA)).toBe(TOKEN);
      expect(p.audit.actions(ORG)).toEqual([['business_account.reconnected', WABA]]);
    });

    it('checks the token before answering that another organization holds the account: a bad token learns nothing, a good one gets the conflict', async () => {
      const p = setUp();
      const held = p.accounts.stored(OTHER_ORG, WABA);
      p.meta.account(WABA, TOKEN);

      await expect(p.service.connect(operator, { wabaId: WABA, accessToken: 'EAAG-guess' })).rejects.toMatchObject({
        fields: [{ field: 'accessToken', message: expect.stringContaining('rejected this access token') }],
      });
      await expect(p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN })).rejects.toMatchObject({
        message: ALREADY_CONNECTED,
      });
      expect(p.accounts.get(WABA)).toEqual(held);
      expect(p.meta.subscriptions).toEqual([]);
      expect(p.audit.of(ORG)).toEqual([]);
      expect(p.audit.of(OTHER_ORG)).toEqual([]);
    });

    it("takes over another organization's account whose token Meta rejected: the old holder's keys are revoked at once, its campaigns ended, both audit logs say so", async () => {
      const p = setUp();
      const held = p.accounts.stored(OTHER_ORG, WABA, {
        credentialsValid: false,
        credentialsError: 'Error validating access token (190)',
      });
      const theirKeys = [p.keys.issue(held.id), p.keys.issue(held.id)];
      const ended: unknown[] = [];
      p.hooks.register((takeover) => {
        ended.push(takeover);
        return Promise.resolve({ campaignsCancelled: 2 });
      });
      p.meta.account(WABA, TOKEN, { name: 'Acme Parcels' });

      const view = await p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN });

      expect(view).toMatchObject({ id: held.id, status: 'connected', credentialsValid: true, credentialsError: null });
      const taken = p.accounts.get(WABA);
      expect(taken).toMatchObject({ organizationId: ORG, name: 'Acme Parcels' });
      expect(taken?.heldSince).toBeInstanceOf(Date);
      expect(p.storedToken(WABA)).toBe(TOKEN);
      expect(p.keys.live(held.id)).toEqual([]);
      expect(p.keyCache.invalidated).toEqual(theirKeys);
      expect(ended).toEqual([
        { businessAccountId: held.id, wabaId: WABA, previousOrganizationId: OTHER_ORG, at: taken?.heldSince },
      ]);
      expect(p.audit.of(ORG)).toEqual([
        expect.objectContaining({
          action: 'business_account.taken_over',
          targetId: WABA,
          details: { name: 'Acme Parcels', previousHolder: 'credentials_rejected' },
        }),
      ]);
      expect(p.audit.of(OTHER_ORG)).toEqual([
        expect.objectContaining({
          action: 'business_account.lost_to_takeover',
          targetId: WABA,
          operatorId: null,
          operatorEmail: null,
          details: expect.objectContaining({ reason: 'credentials_rejected', revokedKeys: 2, campaignsCancelled: 2 }),
        }),
      ]);
    });

    it('takes over an account another organization disconnected, recorded as such', async () => {
      const p = setUp();
      p.accounts.stored(OTHER_ORG, WABA, { disconnectedAt: new Date() });
      p.meta.account(WABA, TOKEN);

      await p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN });

      expect(p.accounts.get(WABA)).toMatchObject({ organizationId: ORG, disconnectedAt: null });
      expect(p.audit.of(ORG)[0]?.details).toMatchObject({ previousHolder: 'disconnected' });
      expect(p.audit.of(OTHER_ORG)[0]?.details).toMatchObject({ reason: 'disconnected', revokedKeys: 0 });
    });

    it('leaves the account with its holder when the holder reconnected while the takeover was being checked', async () => {
      const p = setUp();
      const held = p.accounts.stored(OTHER_ORG, WABA, { credentialsValid: false });
      const theirKey = p.keys.issue(held.id);
      p.meta.account(WABA, TOKEN);
      p.db.meanwhile('business_accounts.takeOver', (s) => {
        const row = s.console.businessAccounts.get(held.id);
        if (row) Object.assign(row, { accessTokenEncrypted: 'their-new-token', credentialsValid: true });
      });

      await expect(p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN })).rejects.toMatchObject({
        message: ALREADY_CONNECTED,
      });

      expect(p.accounts.get(WABA)).toMatchObject({ organizationId: OTHER_ORG, credentialsValid: true });
      expect(p.keys.live(held.id)).toEqual([theirKey]);
      expect(p.keyCache.invalidated).toEqual([]);
      expect(p.audit.of(ORG)).toEqual([]);
      expect(p.audit.of(OTHER_ORG)).toEqual([]);
    });

    it('undoes the whole takeover when ending what the old holder ran fails: account, keys and audit logs as before', async () => {
      const p = setUp();
      const held = p.accounts.stored(OTHER_ORG, WABA, { credentialsValid: false });
      const theirKey = p.keys.issue(held.id);
      p.hooks.register(() => Promise.reject(new Error('campaigns could not be cancelled')));
      p.meta.account(WABA, TOKEN);

      await expect(p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN })).rejects.toThrow(
        'campaigns could not be cancelled',
      );

      expect(p.accounts.get(WABA)).toEqual(held);
      expect(p.keys.live(held.id)).toEqual([theirKey]);
      expect(p.keyCache.invalidated).toEqual([]);
      expect(p.audit.of(ORG)).toEqual([]);
      expect(p.audit.of(OTHER_ORG)).toEqual([]);
    });

    it('answers a conflict to the loser of two organizations connecting a new account at once', async () => {
      const p = setUp();
      p.meta.account(WABA, TOKEN);
      // The rival's connect commits between this connect's read (no account yet) and its insert.
      const theirs = accountRow(OTHER_ORG, WABA);
      p.db.meanwhile('business_accounts.create', (s) =>
        s.console.businessAccounts.set(theirs.id, structuredClone(theirs)),
      );

      await expect(p.service.connect(operator, { wabaId: WABA, accessToken: TOKEN })).rejects.toMatchObject({
        message: ALREADY_CONNECTED,
      });
      expect(p.accounts.get(WABA)).toEqual(theirs);
      expect(p.audit.of(ORG)).toEqual([]);
    });
  });

  describe('reconnect (the token replaced)', () => {
    it('stores the new token and marks the credentials valid again; the key pairs stay valid and the name stays', async () => {
      const p = setUp();
      const account = p.accounts.stored(ORG, WABA, {
        name: 'Support line',
        credentialsValid: false,
        credentialsError: 'Error validating access token (190)',
        readableUntil: new Date(),
      });
      const key = p.keys.issue(account.id);
      p.meta.account(WABA, TOKEN, { name: 'Meta name', marketingMessagesStatus: 'ONBOARDED' });

      const view = await p.service.reconnect(operator, WABA, TOKEN);

      expect(view).toMatchObject({
        name: 'Support line',
        credentialsValid: true,
        credentialsError: null,
        marketingMessages: { onboarded: true },
      });
      expect(p.accounts.get(WABA)?.readableUntil).toBeNull();
      expect(p.storedToken(WABA)).toBe(TOKEN);
      expect(p.meta.subscriptions).toEqual([{ wabaId: WABA, token: TOKEN }]);
      expect(p.keys.live(account.id)).toEqual([key]);
      expect(p.audit.of(ORG)).toEqual([
        expect.objectContaining({
          action: 'business_account.reconnected',
          targetId: WABA,
          details: { tokenReplaced: true },
        }),
      ]);
    });

    it('keeps the stored token when Meta rejects the new one', async () => {
      const p = setUp();
      const account = p.accounts.stored(ORG, WABA, { credentialsValid: false });
      p.meta.account(WABA, TOKEN);

      await expect(p.service.reconnect(operator, WABA, 'EAAG-expired')).rejects.toBeInstanceOf(InvalidInput);

      expect(p.accounts.get(WABA)).toEqual(account);
      expect(p.audit.of(ORG)).toEqual([]);
    });

    it("answers not found for another organization's account, without asking Meta", async () => {
      const p = setUp();
      p.accounts.stored(OTHER_ORG, WABA, { credentialsValid: false });
      p.meta.account(WABA, TOKEN);

      await expect(p.service.reconnect(operator, WABA, TOKEN)).rejects.toBeInstanceOf(NotFound);
      expect(p.meta.subscriptions).toEqual([]);
      expect(p.accounts.get(WABA)?.organizationId).toBe(OTHER_ORG);
    });
  });

  describe('list and get', () => {
    it("pages the organization's accounts oldest first with their total, and never shows another organization's", async () => {
      const p = setUp();
      const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
      p.accounts.stored(ORG, '310000000000003', { createdAt: at(3) });
      p.accounts.stored(ORG, '310000000000001', { createdAt: at(1) });
      p.accounts.stored(OTHER_ORG, '310000000000000', { createdAt: at(0) });
      p.accounts.stored(ORG, '310000000000002', { createdAt: at(2), disconnectedAt: at(4) });

      const first = await p.service.list(ORG, { page: 1, limit: 2 });
      const second = await p.service.list(ORG, { page: 2, limit: 2 });

      expect(first).toMatchObject({ page: 1, limit: 2, total: 3, totalPages: 2 });
      expect(first.items.map((a) => [a.wabaId, a.status])).toEqual([
        ['310000000000001', 'connected'],
        ['310000000000002', 'disconnected'],
      ]);
      expect(second.items.map((a) => a.wabaId)).toEqual(['310000000000003']);
      await expect(p.service.get(ORG, '310000000000003')).resolves.toMatchObject({ wabaId: '310000000000003' });
      await expect(p.service.get(ORG, '310000000000000')).rejects.toBeInstanceOf(NotFound);
    });
  });

  describe('disconnect', () => {
    it('revokes every key pair of the account at once, keeps the account as history with its read cut-off, and audits how many keys went', async () => {
      const p = setUp();
      const account = p.accounts.stored(ORG, WABA);
      const other = p.accounts.stored(ORG, '310000000000002');
      const keys = [p.keys.issue(account.id), p.keys.issue(account.id)];
      const otherKey = p.keys.issue(other.id);

      const view = await p.service.disconnect(operator, WABA);

      expect(view).toMatchObject({ id: account.id, status: 'disconnected' });
      const stored = p.accounts.get(WABA);
      expect(stored?.disconnectedAt).toBeInstanceOf(Date);
      expect(stored?.readableUntil).toEqual(stored?.disconnectedAt);
      expect(p.keys.live(account.id)).toEqual([]);
      expect(p.keyCache.invalidated).toEqual(keys);
      expect(p.keys.live(other.id)).toEqual([otherKey]);
      expect(p.audit.of(ORG)).toEqual([
        expect.objectContaining({
          action: 'business_account.disconnected',
          targetId: WABA,
          details: { revokedKeys: 2 },
        }),
      ]);
    });

    it('keeps an earlier read cut-off (the token was rejected before the disconnect)', async () => {
      const p = setUp();
      const rejectedAt = new Date(Date.UTC(2026, 0, 1));
      p.accounts.stored(ORG, WABA, { credentialsValid: false, readableUntil: rejectedAt });

      await p.service.disconnect(operator, WABA);

      expect(p.accounts.get(WABA)?.readableUntil).toEqual(rejectedAt);
    });

    it('revokes nothing and audits nothing when the disconnect cannot be stored', async () => {
      const p = setUp();
      const account = p.accounts.stored(ORG, WABA);
      const key = p.keys.issue(account.id);
      p.db.failAt('business_accounts.disconnect');

      await expect(p.service.disconnect(operator, WABA)).rejects.toThrow('business_accounts.disconnect failed');

      expect(p.accounts.get(WABA)?.disconnectedAt).toBeNull();
      expect(p.keys.live(account.id)).toEqual([key]);
      expect(p.audit.of(ORG)).toEqual([]);
    });

    it("answers not found for an account already disconnected, or another organization's", async () => {
      const p = setUp();
      p.accounts.stored(ORG, WABA, { disconnectedAt: new Date() });
      p.accounts.stored(OTHER_ORG, '310000000000002');

      await expect(p.service.disconnect(operator, WABA)).rejects.toBeInstanceOf(NotFound);
      await expect(p.service.disconnect(operator, '310000000000002')).rejects.toBeInstanceOf(NotFound);
      expect(p.accounts.get('310000000000002')?.disconnectedAt).toBeNull();
      expect(p.audit.of(ORG)).toEqual([]);
    });
  });
});
