import { joinOrganization, loginAs, signupAndLogin, type Operator } from '../utils/factories.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

type Role = 'owner' | 'admin' | 'member';
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

const WABA = '999000000000001';
const PHONE = '999000000000002';
const UUID = '00000000-0000-4000-8000-000000000000';

/**
 * docs/security.md, "Roles", as a table: every console route and the least role that may call it. The requests
 * point at things that do not exist (or carry an empty body), so an allowed call ends in 404/422 (past the guard,
 * changing nothing) and a refused one in 403. Campaigns: reads for every role, changes admin and above.
 */
const ROUTES: { method: Method; path: string; swagger: string; role: Role; body?: object; fresh?: boolean }[] = [
  { method: 'get', path: '/auth/me', swagger: '/auth/me', role: 'member' },
  { method: 'post', path: '/auth/password', swagger: '/auth/password', role: 'member', body: {} },
  { method: 'post', path: '/business-accounts', swagger: '/business-accounts', role: 'admin', body: {} },
  { method: 'get', path: '/business-accounts', swagger: '/business-accounts', role: 'member' },
  { method: 'get', path: `/business-accounts/${WABA}`, swagger: '/business-accounts/{wabaId}', role: 'member' },
  {
    method: 'put',
    path: `/business-accounts/${WABA}/access-token`,
    swagger: '/business-accounts/{wabaId}/access-token',
    role: 'admin',
    body: {},
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/subscription`,
    swagger: '/business-accounts/{wabaId}/subscription',
    role: 'admin',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/credentials/check`,
    swagger: '/business-accounts/{wabaId}/credentials/check',
    role: 'admin',
  },
  { method: 'delete', path: `/business-accounts/${WABA}`, swagger: '/business-accounts/{wabaId}', role: 'admin' },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/phone-numbers/sync`,
    swagger: '/business-accounts/{wabaId}/phone-numbers/sync',
    role: 'admin',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/phone-numbers`,
    swagger: '/business-accounts/{wabaId}/phone-numbers',
    role: 'member',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/templates/sync`,
    swagger: '/business-accounts/{wabaId}/templates/sync',
    role: 'admin',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/templates`,
    swagger: '/business-accounts/{wabaId}/templates',
    role: 'admin',
    body: {},
  },
  {
    method: 'patch',
    path: `/business-accounts/${WABA}/templates/${UUID}`,
    swagger: '/business-accounts/{wabaId}/templates/{id}',
    role: 'admin',
    body: {},
  },
  {
    method: 'delete',
    path: `/business-accounts/${WABA}/templates/${UUID}`,
    swagger: '/business-accounts/{wabaId}/templates/{id}',
    role: 'admin',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/templates`,
    swagger: '/business-accounts/{wabaId}/templates',
    role: 'member',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/phone-numbers/${PHONE}/blocked-users`,
    swagger: '/business-accounts/{wabaId}/phone-numbers/{phoneNumberId}/blocked-users',
    role: 'admin',
    body: {},
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/phone-numbers/${PHONE}/blocked-users`,
    swagger: '/business-accounts/{wabaId}/phone-numbers/{phoneNumberId}/blocked-users',
    role: 'member',
  },
  {
    method: 'delete',
    path: `/business-accounts/${WABA}/phone-numbers/${PHONE}/blocked-users/16505551234`,
    swagger: '/business-accounts/{wabaId}/phone-numbers/{phoneNumberId}/blocked-users/{user}',
    role: 'admin',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/contacts/16505551234/export`,
    swagger: '/business-accounts/{wabaId}/contacts/{phoneOrUserId}/export',
    role: 'admin',
  },
  {
    method: 'delete',
    path: `/business-accounts/${WABA}/contacts/16505551234`,
    swagger: '/business-accounts/{wabaId}/contacts/{phoneOrUserId}',
    role: 'admin',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/marketing-preferences`,
    swagger: '/business-accounts/{wabaId}/marketing-preferences',
    role: 'member',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/phone-numbers/${PHONE}/media`,
    swagger: '/business-accounts/{wabaId}/phone-numbers/{phoneNumberId}/media',
    role: 'member',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/media/123456`,
    swagger: '/business-accounts/{wabaId}/media/{mediaId}',
    role: 'member',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/messages`,
    swagger: '/business-accounts/{wabaId}/messages',
    role: 'member',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/messages/1`,
    swagger: '/business-accounts/{wabaId}/messages/{id}',
    role: 'member',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/messages-analytics`,
    swagger: '/business-accounts/{wabaId}/messages-analytics',
    role: 'member',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/campaigns`,
    swagger: '/business-accounts/{wabaId}/campaigns',
    role: 'admin',
    body: {},
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/campaigns`,
    swagger: '/business-accounts/{wabaId}/campaigns',
    role: 'member',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/campaigns/1`,
    swagger: '/business-accounts/{wabaId}/campaigns/{id}',
    role: 'member',
  },
  {
    method: 'get',
    path: `/business-accounts/${WABA}/campaigns/1/recipients`,
    swagger: '/business-accounts/{wabaId}/campaigns/{id}/recipients',
    role: 'member',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/campaigns/1/pause`,
    swagger: '/business-accounts/{wabaId}/campaigns/{id}/pause',
    role: 'admin',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/campaigns/1/resume`,
    swagger: '/business-accounts/{wabaId}/campaigns/{id}/resume',
    role: 'admin',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/campaigns/1/cancel`,
    swagger: '/business-accounts/{wabaId}/campaigns/{id}/cancel',
    role: 'admin',
  },
  {
    method: 'post',
    path: `/business-accounts/${WABA}/campaigns/1/retry-failed`,
    swagger: '/business-accounts/{wabaId}/campaigns/{id}/retry-failed',
    role: 'admin',
  },
  { method: 'post', path: '/api-keys', swagger: '/api-keys', role: 'admin', body: {} },
  { method: 'get', path: '/api-keys', swagger: '/api-keys', role: 'member' },
  { method: 'delete', path: `/api-keys/${UUID}`, swagger: '/api-keys/{id}', role: 'admin' },
  { method: 'get', path: '/audit-log', swagger: '/audit-log', role: 'member' },
  { method: 'post', path: '/invitations', swagger: '/invitations', role: 'owner', body: {} },
  { method: 'get', path: '/invitations', swagger: '/invitations', role: 'owner' },
  { method: 'delete', path: `/invitations/${UUID}`, swagger: '/invitations/{id}', role: 'owner' },
  { method: 'get', path: '/organization/members', swagger: '/organization/members', role: 'member' },
  {
    method: 'patch',
    path: `/organization/members/${UUID}`,
    swagger: '/organization/members/{id}',
    role: 'owner',
    body: {},
  },
  { method: 'delete', path: `/organization/members/${UUID}`, swagger: '/organization/members/{id}', role: 'owner' },
  {
    method: 'post',
    path: `/organization/members/${UUID}/password-reset`,
    swagger: '/organization/members/{id}/password-reset',
    role: 'owner',
  },
  { method: 'get', path: '/organization/settings', swagger: '/organization/settings', role: 'member' },
  // An invalid body: the role is checked first, and an allowed caller gets 422, changing nothing.
  { method: 'patch', path: '/organization/settings', swagger: '/organization/settings', role: 'admin', body: {} },
  { method: 'get', path: '/webhooks/events', swagger: '/webhooks/events', role: 'member' },
  { method: 'get', path: '/webhooks/events/1', swagger: '/webhooks/events/{id}', role: 'member' },
  { method: 'get', path: '/webhooks/deliveries', swagger: '/webhooks/deliveries', role: 'member' },
  { method: 'get', path: '/webhooks/deliveries/health', swagger: '/webhooks/deliveries/health', role: 'member' },
  { method: 'post', path: '/webhooks/deliveries/1/replay', swagger: '/webhooks/deliveries/{id}/replay', role: 'admin' },
  // Last: they end the caller's sessions.
  { method: 'post', path: '/auth/logout', swagger: '/auth/logout', role: 'member', fresh: true },
  { method: 'post', path: '/auth/logout-everywhere', swagger: '/auth/logout-everywhere', role: 'member' },
];

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };
const REFUSAL: Record<Role, string> = {
  member: '',
  admin: 'Only owners and admins of the organization can do this',
  owner: 'Only owners of the organization can do this',
};

/** Issue 29, finding 3: who may do what, one test per console route × role. */
describe('Console roles: every console route × owner, admin, member', () => {
  let t: TestApp;
  const as = {} as Record<Role, Operator>;
  beforeAll(async () => {
    t = await startTestApp();
    as.owner = await signupAndLogin(t, 'Roles Table Org');
    as.admin = await joinOrganization(t, as.owner, 'admin');
    as.member = await joinOrganization(t, as.owner, 'member');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the table covers every console route of the OpenAPI document, and the document states the same least role', async () => {
    const doc = (await t.http.get('/swagger/docs-json')).body as {
      paths: Record<string, Record<string, { security?: Record<string, unknown>[]; 'x-minimum-role'?: string }>>;
    };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security?.some((s) => 'session' in s))
        .map(([method, op]) => `${method} ${path} ${op['x-minimum-role']}`),
    );
    expect(documented.sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.swagger} ${r.role}`).sort());
  });

  for (const route of ROUTES) {
    for (const role of ['member', 'admin', 'owner'] as Role[]) {
      const allowed = RANK[role] >= RANK[route.role];
      it(`${route.method.toUpperCase()} ${route.swagger} as ${role}: ${allowed ? 'allowed' : '403'}`, async () => {
        const cookie = route.fresh ? (await loginAs(t, as[role].email)).cookie : as[role].cookie;
        const req = t.http[route.method](route.path).set('cookie', cookie);
        const res = route.body ? await req.send(route.body) : await req;
        if (allowed) {
          expect([401, 403]).not.toContain(res.status);
        } else {
          expect(res.status).toBe(403);
          expect(res.body).toEqual({
            statusCode: 403,
            message: route.path.startsWith('/invitations')
              ? 'Only owners of the organization can manage invitations'
              : REFUSAL[route.role],
          });
        }
      });
    }
  }
});
