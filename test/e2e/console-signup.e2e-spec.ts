import { sha256Hex } from '../../src/core/crypto/tokens.js';
import { PASSWORD, signupAndLogin, uniqueEmail, type Operator } from '../utils/factories.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { countRows, rowWhere } from '../utils/db-rows.js';

const INVITE_ONLY = {
  statusCode: 403,
  message: 'Signup is by invitation only: ask an owner of your organization for an invitation link',
};
const CLOSED = { statusCode: 403, message: 'Signup is closed' };
const OWNERS_ONLY = { statusCode: 403, message: 'Only owners of the organization can manage invitations' };
const invalid = (field: string, message: string) => ({
  statusCode: 422,
  message: 'Field Validation Failed',
  errors: [{ field, message }],
});

/** Issue 12, finding 3: signup limited per address, SIGNUP_MODE, and one-time invitations. */
describe('Console signup', () => {
  const operatorsWithEmail = (t: TestApp, email: string) => countRows(t.db, 'operators', { email });

  describe('rate limit per address (SIGNUP_MAX_PER_ADDRESS=3, TRUST_PROXY=1)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ TRUST_PROXY: '1', SIGNUP_MAX_PER_ADDRESS: '3' });
    });
    afterAll(async () => {
      await t?.close();
    });

    const signup = (from: string, email = uniqueEmail()) =>
      t.http
        .post('/auth/signup')
        .set('x-forwarded-for', from)
        .send({ email, password: PASSWORD, organizationName: `Limited Org ${email}` });

    it('creates at most 3 organizations of 20 concurrent signups from one address; the rest get 429 + Retry-After and create nothing', async () => {
      const emails = Array.from({ length: 20 }, () => uniqueEmail());
      const answers = await Promise.all(emails.map((email) => signup('192.0.2.10', email)));
      expect(answers.filter((r) => r.status === 201)).toHaveLength(3);
      const refused = answers.filter((r) => r.status === 429);
      expect(refused).toHaveLength(17);
      for (const r of refused) {
        expect(r.body).toEqual({ statusCode: 429, message: 'Too many signups from this address; try again later' });
        expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(t.config.signupWindowSeconds);
      }
      expect(await countRows(t.db, 'operators', { email: emails })).toBe(3);
      // Another address is not affected.
      expect((await signup('192.0.2.11')).status).toBe(201);
    });
  });

  describe('SIGNUP_MODE=invite', () => {
    let open: TestApp;
    let t: TestApp;
    let owner: Operator;

    beforeAll(async () => {
      // The same database and Redis; the open one only to create the inviting organization.
      t = await startTestApp({ SIGNUP_MODE: 'invite', INVITATIONS_MAX_PENDING: '5' });
      open = await startTestApp({ SIGNUP_MODE: 'open', QUEUE_PREFIX: t.config.queuePrefix });
      owner = await signupAndLogin(open, 'Inviting Org');
    });
    afterAll(async () => {
      await open?.close();
      await t?.close();
    });

    const invite = (by: Operator, body: Record<string, unknown>) =>
      t.http.post('/invitations').set('cookie', by.cookie).send(body);
    const accept = (body: Record<string, unknown>) => t.http.post('/auth/signup').send({ password: PASSWORD, ...body });
    const loginAs = async (email: string): Promise<Operator> => {
      const res = await t.http.post('/auth/login').send({ email, password: PASSWORD });
      expect(res.status).toBe(200);
      return {
        email,
        cookie: ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!.split(';')[0]!,
        organizationId: res.body.data.operator.organization.id,
        operatorId: res.body.data.operator.id,
      };
    };

    it('refuses a signup without invitation (403) and creates nothing', async () => {
      const email = uniqueEmail();
      const organizationName = `Uninvited Org ${email}`;
      const res = await t.http.post('/auth/signup').send({ email, password: PASSWORD, organizationName });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(INVITE_ONLY);
      expect(await operatorsWithEmail(t, email)).toBe(0);
      expect(await countRows(t.db, 'organizations', { name: organizationName })).toBe(0);
    });

    it('an owner invites by one-time link; the invitee joins the organization with the role; the link works once', async () => {
      const email = uniqueEmail();
      const created = await invite(owner, { email: ` ${email.toUpperCase()} `, role: 'member' });
      expect(created.status).toBe(201);
      expect(created.body.data).toEqual({
        id: expect.any(String),
        email,
        role: 'member',
        invitedBy: owner.email,
        expiresAt: expect.any(String),
        createdAt: expect.any(String),
        token: expect.any(String),
        path: `/console/signup?invite=${encodeURIComponent(created.body.data.token)}`,
      });
      const { token, expiresAt } = created.body.data as { token: string; expiresAt: string };
      expect(token.length).toBeGreaterThanOrEqual(43);
      expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(t.config.invitationTtlSeconds * 1000 - 60_000);
      // Stored hashed; listed without the token.
      const row = await rowWhere(t.db, 'invitations', { id: created.body.data.id });
      expect(row.tokenHash).toBe(sha256Hex(token));
      expect(JSON.stringify(row)).not.toContain(token);
      const listed = await t.http.get('/invitations').set('cookie', owner.cookie);
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual([expect.objectContaining({ id: row.id, email })]);
      expect(JSON.stringify(listed.body)).not.toContain(token);

      const joined = await accept({ email, inviteToken: token });
      expect(joined.status).toBe(201);
      expect(joined.body.data).toMatchObject({
        email,
        role: 'member',
        organization: { id: owner.organizationId, name: 'Inviting Org' },
      });
      const member = await loginAs(email);
      expect(member.organizationId).toBe(owner.organizationId);
      // The team shares the organization: the member sees the owner's API keys list (same organization scope).
      expect((await t.http.get('/api-keys').set('cookie', member.cookie)).status).toBe(200);
      expect((await t.http.get('/invitations').set('cookie', owner.cookie)).body.data).toEqual([]);

      // One-time: the same link again, even for another email, is refused and creates nothing.
      const other = uniqueEmail();
      const again = await accept({ email: other, inviteToken: token });
      expect(again.status).toBe(422);
      expect(again.body).toEqual(invalid('inviteToken', 'invitation has already been used'));
      expect(await operatorsWithEmail(t, other)).toBe(0);
    });

    it('two signups racing with one invitation: exactly one joins', async () => {
      const email = uniqueEmail();
      const { token } = (await invite(owner, { email })).body.data as { token: string };
      const answers = await Promise.all([
        accept({ email, inviteToken: token }),
        accept({ email, inviteToken: token }),
        accept({ email, inviteToken: token }),
      ]);
      const [winner, ...losers] = answers.map((r) => r.status).sort();
      expect(winner).toBe(201);
      // A loser either found the invitation used (422) or lost the race on the email's unique index (409).
      for (const status of losers) expect([409, 422]).toContain(status);
      expect(await operatorsWithEmail(t, email)).toBe(1);
    });

    it('members cannot invite or see invitations (403); an invited owner can', async () => {
      const memberEmail = uniqueEmail();
      const { token } = (await invite(owner, { email: memberEmail, role: 'member' })).body.data as { token: string };
      expect((await accept({ email: memberEmail, inviteToken: token })).status).toBe(201);
      const member = await loginAs(memberEmail);
      const refused = await invite(member, { email: uniqueEmail() });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual(OWNERS_ONLY);
      expect((await t.http.get('/invitations').set('cookie', member.cookie)).body).toEqual(OWNERS_ONLY);
      expect(await countRows(t.db, 'invitations', { invited_by_id: member.operatorId })).toBe(0);

      const ownerEmail = uniqueEmail();
      const second = (await invite(owner, { email: ownerEmail, role: 'owner' })).body.data as { token: string };
      expect((await accept({ email: ownerEmail, inviteToken: second.token })).body.data.role).toBe('owner');
      const coOwner = await loginAs(ownerEmail);
      expect((await invite(coOwner, { email: uniqueEmail() })).status).toBe(201);
    });

    it('answers an invitation of an email already registered as any other (nothing told); it just cannot be accepted (issue 29, finding 2)', async () => {
      const registered = await signupAndLogin(open, 'Someone Else Org');
      const taken = await invite(owner, { email: registered.email });
      const fresh = await invite(owner, { email: uniqueEmail() });
      expect(taken.status).toBe(201);
      expect(Object.keys(taken.body.data).sort()).toEqual(Object.keys(fresh.body.data).sort());
      expect(taken.body.message).toBe(fresh.body.message);
      const accepted = await accept({
        email: registered.email,
        inviteToken: (taken.body.data as { token: string }).token,
      });
      expect(accepted.status).toBe(409);
      for (const id of [taken.body.data.id, fresh.body.data.id] as string[])
        await t.http.delete(`/invitations/${id}`).set('cookie', owner.cookie);
    });

    it('caps pending invitations per organization (INVITATIONS_MAX_PENDING=5): 409 past it, room again once one is revoked', async () => {
      const capped = await signupAndLogin(open, 'Capped Org');
      // Sent again after Retry-After when answered 503, as a client does: on a slow host the seven requests queue on
      // the organization's row lock for longer than a request waits for a database connection (503, database busy).
      const inviteUntilAnswered = async (body: Record<string, unknown>) => {
        for (let n = 1; ; n++) {
          const res = await invite(capped, body);
          if (res.status !== 503 || n === 10) return res;
          await new Promise((r) => setTimeout(r, Number(res.headers['retry-after'] ?? 1) * 1000));
        }
      };
      const made = await Promise.all(Array.from({ length: 7 }, () => inviteUntilAnswered({ email: uniqueEmail() })));
      expect(made.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 409, 409]);
      const refused = made.find((r) => r.status === 409)!;
      expect(refused.body).toEqual({
        statusCode: 409,
        message: expect.stringMatching(/At most 5 invitations may be pending at once/),
      });
      const first = made.find((r) => r.status === 201)!;
      expect(
        (await t.http.delete(`/invitations/${first.body.data.id as string}`).set('cookie', capped.cookie)).status,
      ).toBe(200);
      expect((await invite(capped, { email: uniqueEmail() })).status).toBe(201);
    });

    it('refuses a second pending invitation for the same email (409 naming the pending one); once revoked, a new one goes', async () => {
      const inviting = await signupAndLogin(open, 'Twice Org');
      const email = uniqueEmail();
      const first = await invite(inviting, { email });
      expect(first.status).toBe(201);
      const id = first.body.data.id as string;
      const again = await invite(inviting, { email: email.toUpperCase(), role: 'admin' });
      expect(again.body).toEqual({
        statusCode: 409,
        message: expect.stringContaining(`An invitation for ${email} is already pending (id ${id}`),
      });
      const listed = (await t.http.get('/invitations').set('cookie', inviting.cookie)).body.data as { email: string }[];
      expect(listed.map((i) => i.email)).toEqual([email]);
      expect((await t.http.delete(`/invitations/${id}`).set('cookie', inviting.cookie)).status).toBe(200);
      expect((await invite(inviting, { email })).status).toBe(201);
    });

    it('refuses a role other than owner, admin or member (422)', async () => {
      const role = await invite(owner, { email: uniqueEmail(), role: 'superuser' });
      expect(role.body).toEqual(invalid('role', 'role must be one of owner, admin, member'));
    });
  });

  describe('SIGNUP_MODE=closed', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ SIGNUP_MODE: 'closed' });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('refuses every signup, with or without an invitation token (403)', async () => {
      const email = uniqueEmail();
      expect(
        (await t.http.post('/auth/signup').send({ email, password: PASSWORD, organizationName: `Closed Org ${email}` }))
          .body,
      ).toEqual(CLOSED);
      expect(
        (await t.http.post('/auth/signup').send({ email, password: PASSWORD, inviteToken: 'x'.repeat(43) })).body,
      ).toEqual(CLOSED);
      expect(await operatorsWithEmail(t, email)).toBe(0);
    });
  });
});
