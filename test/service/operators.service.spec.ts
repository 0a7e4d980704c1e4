// The service tier of the console's operators: OperatorsService with the real LoginThrottle and PasswordHasher (at a
// cheap scrypt cost) over in-memory repositories, sessions and attempt budgets (test/utils/in-memory). Each test is
// what an operator sees: signing up, signing in, its password, its sessions, and its organization's audit log.
import pino from 'pino';
import type { SignupMode } from '../../src/core/config/app-config.js';
import {
  Conflict,
  Forbidden,
  InvalidInput,
  NotFound,
  TemporarilyUnavailable,
  TooManyAttempts,
  Unauthenticated,
} from '../../src/core/errors/domain-errors.js';
import type { ConsoleScope } from '../../src/auth/request-scope.js';
import { SIGNUP_CLOSED } from '../../src/console/invitations/signup-mode.js';
import { LoginThrottle, THROTTLE_UNAVAILABLE_RETRY_SECONDS } from '../../src/console/operators/login-throttle.js';
import type { OperatorRole } from '../../src/console/operators/operators.repository.js';
import {
  EMAIL_TAKEN,
  INVALID_CREDENTIALS,
  OperatorsService,
  SIGNUP_INVITE_ONLY,
  TOO_MANY_SIGNUPS,
} from '../../src/console/operators/operators.service.js';
import { parseHash, PasswordHasher } from '../../src/console/operators/password-hasher.js';
import { MemoryAudit } from '../utils/in-memory/audit.js';
import { MemoryDatabase } from '../utils/in-memory/memory-database.js';
import {
  MemoryAttemptBudget,
  MemoryInvitations,
  MemoryOperators,
  MemoryOrganizations,
  MemoryPasswordResets,
  MemorySessions,
} from '../utils/in-memory/operators.js';

const PASSWORD = 'correct horse battery staple';
const ADDRESS = '203.0.113.7';
const OTHER_ADDRESS = '198.51.100.23';
/** LOGIN_MAX_FAILURES: failures of one (email, address) pair in a window. */
const PAIR_FAILURES = 3;
const SIGNUPS_PER_ADDRESS = 2;
const HOUR = 3600 * 1000;

/** The error `promise` rejects with, which must be a `type`. */
async function refusalOf<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof type)) throw new Error(`expected a ${type.name}, got ${String(error)}`);
  return error;
}

/** A Retry-After of what is left of a window of `seconds` that started during this test (a slow host may take a few). */
function expectWithin(retryAfterSeconds: number | undefined, seconds: number) {
  expect(retryAfterSeconds).toBeGreaterThan(seconds - 30);
  expect(retryAfterSeconds).toBeLessThanOrEqual(seconds);
}

function setUp(opts: { signupMode?: SignupMode } = {}) {
  const db = new MemoryDatabase();
  const organizations = new MemoryOrganizations(db);
  const operators = new MemoryOperators(db);
  const invitations = new MemoryInvitations(db);
  const resets = new MemoryPasswordResets(db);
  const sessions = new MemorySessions(db);
  const budget = new MemoryAttemptBudget();
  const audit = new MemoryAudit(db);
  const logger = pino({ level: 'silent' });
  const throttle = new LoginThrottle(
    budget,
    {
      queuePrefix: 'bm',
      redisCluster: null,
      loginMaxFailures: PAIR_FAILURES,
      loginEmailMaxFailures: 4 * PAIR_FAILURES,
      loginAddressMaxFailures: 50,
      loginKnownAddressTtlSeconds: 30 * 24 * 3600,
      loginWindowSeconds: 900,
    },
    logger,
  );
  const passwords = new PasswordHasher({ passwordHashCost: 10, scryptConcurrency: 2 });
  const service = new OperatorsService(
    db,
    organizations,
    operators,
    invitations,
    resets,
    sessions,
    throttle,
    budget,
    passwords,
    audit,
    {
      signupMode: opts.signupMode ?? 'open',
      queuePrefix: 'bm',
      signupMaxPerAddress: SIGNUPS_PER_ADDRESS,
      signupWindowSeconds: 3600,
    },
    logger,
  );

  /** An organization signed up by its owner (open signup from its own address). */
  const owner = async (email = 'owner@acme.example', organizationName = 'Acme') => {
    const view = await service.createOrganization({ email, password: PASSWORD, organizationName });
    return { ...view, organizationId: view.organization.id };
  };
  /** An operator added to the organization (as an accepted invitation leaves it). */
  const member = async (organizationId: string, email: string, role: OperatorRole = 'member') => {
    const created = await operators.create(organizationId, {
      email,
      passwordHash: await passwords.hash(PASSWORD),
      role,
    });
    if (!created) throw new Error(`${email} is taken`);
    return created;
  };
  /** The console scope of a session the operator signed in with. */
  const signedIn = async (email: string, address = ADDRESS): Promise<ConsoleScope & { token: string }> => {
    const { operator, session } = await service.login({ email, password: PASSWORD }, address);
    const stored = sessions.of(session.token);
    if (!stored) throw new Error('no session stored');
    return {
      operatorId: operator.id,
      organizationId: operator.organization.id,
      email,
      sessionId: stored.id,
      role: operator.role,
      platformAdmin: false,
      token: session.token,
    };
  };
  /** Whether `password` signs `email` in (from an address of its own, so no test's failures count against it). */
  let probes = 0;
  const signsIn = async (email: string, password: string) => {
    try {
      await service.login({ email, password }, `192.0.2.${++probes}`);
      return true;
    } catch (error) {
      if (error instanceof Unauthenticated) return false;
      throw error;
    }
  };
  return {
    db,
    organizations,
    operators,
    invitations,
    resets,
    sessions,
    budget,
    audit,
    passwords,
    service,
    owner,
    member,
    signedIn,
    signsIn,
  };
}

describe('OperatorsService (service tier, in-memory repositories)', () => {
  describe('signup without an invitation', () => {
    it('creates the organization (its name trimmed) with the operator as its owner, who can sign in', async () => {
      const p = setUp();

      const view = await p.service.signup(
        { email: 'ana@acme.example', password: PASSWORD, organizationName: '  Acme Parcels  ' },
        ADDRESS,
      );

      expect(view).toMatchObject({ email: 'ana@acme.example', role: 'owner', organization: { name: 'Acme Parcels' } });
      expect(p.organizations.all().map((o) => o.name)).toEqual(['Acme Parcels']);
      expect(p.operators.get(view.id)?.passwordHash).not.toContain(PASSWORD);
      expect(await p.signsIn('ana@acme.example', PASSWORD)).toBe(true);
    });

    it('refuses an email already registered, and leaves no organization behind', async () => {
      const p = setUp();
      await p.owner('ana@acme.example');

      const again = p.service.signup(
        { email: 'ana@acme.example', password: 'another password', organizationName: 'Acme 2' },
        ADDRESS,
      );

      await expect(again).rejects.toBeInstanceOf(Conflict);
      await expect(again).rejects.toMatchObject({ message: EMAIL_TAKEN });
      expect(p.organizations.all().map((o) => o.name)).toEqual(['Acme']);
      expect(await p.signsIn('ana@acme.example', 'another password')).toBe(false);
    });

    it('is refused when signup is closed, invitation or not, and by invitation only in invite mode', async () => {
      const closed = setUp({ signupMode: 'closed' });
      const invite = setUp({ signupMode: 'invite' });
      const dto = { email: 'ana@acme.example', password: PASSWORD, organizationName: 'Acme' };

      await expect(closed.service.signup(dto, ADDRESS)).rejects.toMatchObject({ message: SIGNUP_CLOSED });
      await expect(closed.service.signup({ ...dto, inviteToken: 'inv_x' }, ADDRESS)).rejects.toBeInstanceOf(Forbidden);
      await expect(invite.service.signup(dto, ADDRESS)).rejects.toMatchObject({ message: SIGNUP_INVITE_ONLY });
      expect([...closed.organizations.all(), ...invite.organizations.all()]).toEqual([]);
      expect(invite.budget.used(`bm:signup:ip:${ADDRESS}`)).toBe(0);
    });

    it('limits signups per address: past the limit the answer is 429 with a retry time, another address still signs up', async () => {
      const p = setUp();
      const signup = (n: number, address = ADDRESS) =>
        p.service.signup({ email: `op${n}@example.com`, password: PASSWORD, organizationName: `Org ${n}` }, address);
      for (let n = 0; n < SIGNUPS_PER_ADDRESS; n++) await signup(n);

      const refused = signup(SIGNUPS_PER_ADDRESS);

      const error = await refusalOf(refused, TooManyAttempts);
      expect(error.message).toBe(TOO_MANY_SIGNUPS);
      expectWithin(error.retryAfterSeconds, 3600);
      expect(p.operators.byEmail(`op${SIGNUPS_PER_ADDRESS}@example.com`)).toBeUndefined();
      await expect(signup(SIGNUPS_PER_ADDRESS, OTHER_ADDRESS)).resolves.toMatchObject({ role: 'owner' });
    });

    it('refuses every signup while the signup limit cannot be counted (Redis down), and creates nothing', async () => {
      const p = setUp();
      p.budget.unavailable = true;

      const refused = p.service.signup(
        { email: 'ana@acme.example', password: PASSWORD, organizationName: 'Acme' },
        ADDRESS,
      );

      await expect(refused).rejects.toBeInstanceOf(TemporarilyUnavailable);
      await expect(refused).rejects.toMatchObject({ retryAfterSeconds: THROTTLE_UNAVAILABLE_RETRY_SECONDS });
      expect(p.organizations.all()).toEqual([]);
    });
  });

  describe('signup with an invitation', () => {
    const invited = async (p: ReturnType<typeof setUp>, opts: { role?: OperatorRole; expiresAt?: Date } = {}) => {
      const owner = await p.owner();
      const sent = p.invitations.sent(owner.organizationId, {
        email: 'ben@acme.example',
        role: opts.role ?? 'admin',
        invitedById: owner.id,
        expiresAt: opts.expiresAt,
      });
      return { owner, ...sent };
    };
    // Each from an address of its own: the signup limit per address is not what these tests are about.
    let addresses = 0;
    const accept = (p: ReturnType<typeof setUp>, token: string, email = 'ben@acme.example') =>
      p.service.signup({ email, password: PASSWORD, inviteToken: token }, `203.0.113.${++addresses}`);

    it("joins the inviting organization with the invitation's role, uses the invitation up and audits the acceptance", async () => {
      const p = setUp({ signupMode: 'invite' });
      const { owner, token, invitation } = await invited(p, { role: 'admin' });

      const view = await accept(p, token);

      expect(view).toMatchObject({
        email: 'ben@acme.example',
        role: 'admin',
        organization: { id: owner.organizationId },
      });
      expect(p.organizations.all()).toHaveLength(1);
      expect(p.invitations.get(invitation.id)).toMatchObject({ acceptedById: view.id });
      expect(p.audit.of(owner.organizationId)).toEqual([
        expect.objectContaining({
          action: 'invitation.accepted',
          targetId: invitation.id,
          operatorId: view.id,
          operatorEmail: 'ben@acme.example',
          details: { email: 'ben@acme.example', role: 'admin' },
        }),
      ]);
      await expect(accept(p, token, 'ben@acme.example')).rejects.toMatchObject({
        fields: [{ field: 'inviteToken', message: 'invitation has already been used' }],
      });
    });

    it('refuses an unknown, revoked or expired invitation on inviteToken', async () => {
      const p = setUp();
      const { owner, token, invitation } = await invited(p);
      const expired = p.invitations.sent(owner.organizationId, {
        email: 'cy@acme.example',
        role: 'member',
        invitedById: owner.id,
        expiresAt: new Date(Date.now() - HOUR),
      });
      p.invitations.revoke(invitation.id);

      await expect(accept(p, 'inv_unknown')).rejects.toMatchObject({
        fields: [{ field: 'inviteToken', message: 'invitation is not valid (unknown or revoked)' }],
      });
      await expect(accept(p, token)).rejects.toMatchObject({
        fields: [{ field: 'inviteToken', message: 'invitation is not valid (unknown or revoked)' }],
      });
      await expect(accept(p, expired.token, 'cy@acme.example')).rejects.toMatchObject({
        fields: [{ field: 'inviteToken', message: 'invitation has expired; ask for a new one' }],
      });
      expect(p.operators.byEmail('ben@acme.example')).toBeUndefined();
      expect(p.operators.byEmail('cy@acme.example')).toBeUndefined();
    });

    it('refuses an email other than the invited one, on email', async () => {
      const p = setUp();
      const { token, invitation } = await invited(p);

      await expect(accept(p, token, 'mallory@example.com')).rejects.toMatchObject({
        fields: [{ field: 'email', message: 'email does not match the invitation' }],
      });
      expect(p.invitations.get(invitation.id)?.acceptedAt).toBeNull();
    });

    it('refuses the invitation of an owner since demoted or removed: it can no longer invite', async () => {
      const p = setUp();
      const { owner, token, invitation } = await invited(p);
      const operator = p.operators.get(owner.id);
      if (operator) operator.role = 'admin';

      await expect(accept(p, token)).rejects.toMatchObject({
        fields: [{ field: 'inviteToken', message: 'invitation is not valid (its sender can no longer invite)' }],
      });
      if (operator) Object.assign(operator, { role: 'owner', removedAt: new Date() });
      await expect(accept(p, token)).rejects.toBeInstanceOf(InvalidInput);
      expect(p.operators.byEmail('ben@acme.example')).toBeUndefined();
      expect(p.invitations.get(invitation.id)?.acceptedAt).toBeNull();
    });

    it('refuses an invited email that registered meanwhile, and leaves the invitation unused', async () => {
      const p = setUp();
      const { token, invitation } = await invited(p);
      await p.owner('ben@acme.example', 'Ben Ltd');

      await expect(accept(p, token)).rejects.toMatchObject({ message: EMAIL_TAKEN });
      expect(p.invitations.get(invitation.id)?.acceptedAt).toBeNull();
    });

    it('of two acceptances racing with one token, the one that claims second creates no operator', async () => {
      const p = setUp();
      const { owner, token, invitation } = await invited(p);
      p.db.meanwhile('invitations.claim', (s) => {
        const row = s.console.invitations.get(invitation.id);
        if (row) Object.assign(row, { acceptedAt: new Date(), acceptedById: 'the-other-acceptance' });
      });

      await expect(accept(p, token)).rejects.toMatchObject({
        fields: [{ field: 'inviteToken', message: 'invitation has already been used' }],
      });
      expect(p.operators.byEmail('ben@acme.example')).toBeUndefined();
      expect(p.invitations.get(invitation.id)?.acceptedById).toBe('the-other-acceptance');
      expect(p.audit.actions(owner.organizationId)).toEqual([]);
    });
  });

  describe('login', () => {
    it('issues a session, records the sign-in and its address in the audit log, and forgives the attempt', async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');

      const { operator, session } = await p.service.login({ email: 'ana@acme.example', password: PASSWORD }, ADDRESS);

      expect(operator).toMatchObject({ id: owner.id, email: 'ana@acme.example', role: 'owner' });
      expect(p.sessions.of(session.token)).toMatchObject({ operatorId: owner.id, revokedAt: null });
      expect(session.expiresAt.getTime()).toBeGreaterThan(Date.now());
      expect(p.operators.get(owner.id)?.lastLoginAt).toBeInstanceOf(Date);
      expect(p.audit.of(owner.organizationId)).toEqual([
        expect.objectContaining({
          action: 'operator.signed_in',
          targetId: owner.id,
          operatorId: owner.id,
          details: { address: ADDRESS },
        }),
      ]);
      expect(p.budget.used(`bm:login:pair:${ADDRESS}:ana@acme.example`)).toBe(0);
    });

    it("refuses a wrong password with the same answer as an unknown email; only the operator's organization hears of it", async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');

      const wrong = await refusalOf(
        p.service.login({ email: 'ana@acme.example', password: 'wrong' }, ADDRESS),
        Unauthenticated,
      );
      const unknown = await refusalOf(
        p.service.login({ email: 'nobody@acme.example', password: PASSWORD }, ADDRESS),
        Unauthenticated,
      );

      expect(wrong.message).toBe(INVALID_CREDENTIALS);
      expect(unknown.message).toBe(INVALID_CREDENTIALS);
      expect(p.audit.of(owner.organizationId)).toEqual([
        expect.objectContaining({
          action: 'operator.sign_in_failed',
          targetId: owner.id,
          operatorId: null,
          details: { email: 'ana@acme.example', address: ADDRESS },
        }),
      ]);
      expect(p.sessions.live(owner.id)).toEqual([]);
    });

    it('refuses a removed operator, even with its password, as an unknown email', async () => {
      const p = setUp();
      const owner = await p.owner();
      const removed = await p.member(owner.organizationId, 'gone@acme.example');
      const row = p.operators.get(removed.id);
      if (row) row.removedAt = new Date();

      await expect(p.service.login({ email: 'gone@acme.example', password: PASSWORD }, ADDRESS)).rejects.toMatchObject({
        message: INVALID_CREDENTIALS,
      });
      expect(p.sessions.live(removed.id)).toEqual([]);
      expect(p.audit.actions(owner.organizationId)).toEqual([]);
    });

    it('after too many failures from one address, refuses even the right password there until the window ends; another address still signs in', async () => {
      const p = setUp();
      await p.owner('ana@acme.example');
      for (let i = 0; i < PAIR_FAILURES; i++)
        await expect(
          p.service.login({ email: 'ana@acme.example', password: `guess ${i}` }, ADDRESS),
        ).rejects.toBeInstanceOf(Unauthenticated);

      const throttled = p.service.login({ email: 'ana@acme.example', password: PASSWORD }, ADDRESS);

      expectWithin((await refusalOf(throttled, TooManyAttempts)).retryAfterSeconds, 900);
      await expect(p.signedIn('ana@acme.example', OTHER_ADDRESS)).resolves.toMatchObject({ email: 'ana@acme.example' });
      p.budget.advance(900);
      await expect(p.signedIn('ana@acme.example', ADDRESS)).resolves.toMatchObject({ email: 'ana@acme.example' });
    });

    it('refuses every login while the throttle cannot count (Redis down)', async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      p.budget.unavailable = true;

      const refused = p.service.login({ email: 'ana@acme.example', password: PASSWORD }, ADDRESS);

      await expect(refused).rejects.toBeInstanceOf(TemporarilyUnavailable);
      await expect(refused).rejects.toMatchObject({ retryAfterSeconds: THROTTLE_UNAVAILABLE_RETRY_SECONDS });
      expect(p.sessions.live(owner.id)).toEqual([]);
    });

    it("replaces a hash weaker than today's cost at the next successful login, and the password still works", async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      const weak = await new PasswordHasher({ passwordHashCost: 8, scryptConcurrency: 1 }).hash(PASSWORD);
      const row = p.operators.get(owner.id);
      if (row) row.passwordHash = weak;

      await p.service.login({ email: 'ana@acme.example', password: PASSWORD }, ADDRESS);

      expect(parseHash(p.operators.get(owner.id)?.passwordHash ?? '')).toMatchObject({ N: 2 ** 10 });
      expect(await p.signsIn('ana@acme.example', PASSWORD)).toBe(true);
    });
  });

  describe('password change', () => {
    it("sets the new password, ends the operator's other sessions but the caller's, revokes its reset links, and audits it", async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      const here = await p.signedIn('ana@acme.example');
      await p.signedIn('ana@acme.example', OTHER_ADDRESS);
      const link = p.resets.issued(owner.organizationId, { operatorId: owner.id, issuedById: owner.id });

      const result = await p.service.changePassword(here, PASSWORD, 'a brand new passphrase', ADDRESS);

      expect(result).toEqual({ sessionsEnded: 1 });
      expect(p.sessions.live(owner.id).map((s) => s.id)).toEqual([here.sessionId]);
      expect(p.resets.get(link.reset.id)?.revokedAt).toBeInstanceOf(Date);
      expect(await p.signsIn('ana@acme.example', 'a brand new passphrase')).toBe(true);
      expect(await p.signsIn('ana@acme.example', PASSWORD)).toBe(false);
      expect(p.audit.of(owner.organizationId).find((e) => e.action === 'operator.password_changed')).toMatchObject({
        operatorId: owner.id,
        details: { sessionsEnded: 1, resetLinksRevoked: 1 },
      });
    });

    it('refuses a wrong current password on currentPassword, counted like a failed login', async () => {
      const p = setUp();
      await p.owner('ana@acme.example');
      const here = await p.signedIn('ana@acme.example');

      for (let i = 0; i < PAIR_FAILURES; i++)
        await expect(p.service.changePassword(here, `guess ${i}`, 'new passphrase', ADDRESS)).rejects.toMatchObject({
          fields: [{ field: 'currentPassword', message: 'currentPassword is not the current password' }],
        });

      await expect(p.service.changePassword(here, PASSWORD, 'new passphrase', ADDRESS)).rejects.toBeInstanceOf(
        TooManyAttempts,
      );
      expect(await p.signsIn('ana@acme.example', PASSWORD)).toBe(true);
    });

    it('refuses a new password equal to the current one, on newPassword, and ends no session', async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      const here = await p.signedIn('ana@acme.example');
      await p.signedIn('ana@acme.example', OTHER_ADDRESS);

      await expect(p.service.changePassword(here, PASSWORD, PASSWORD, ADDRESS)).rejects.toMatchObject({
        fields: [{ field: 'newPassword', message: 'newPassword must differ from the current password' }],
      });
      expect(p.sessions.live(owner.id)).toHaveLength(2);
    });

    it('answers a conflict, and ends no session, when the password was changed meanwhile', async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      const here = await p.signedIn('ana@acme.example');
      await p.signedIn('ana@acme.example', OTHER_ADDRESS);
      const elsewhere = await p.passwords.hash('changed elsewhere');
      p.db.meanwhile('operators.replacePasswordHash', (s) => {
        const row = s.console.operators.get(owner.id);
        if (row) row.passwordHash = elsewhere;
      });

      await expect(p.service.changePassword(here, PASSWORD, 'new passphrase', ADDRESS)).rejects.toBeInstanceOf(
        Conflict,
      );
      expect(p.sessions.live(owner.id)).toHaveLength(2);
      expect(await p.signsIn('ana@acme.example', 'changed elsewhere')).toBe(true);
    });
  });

  describe('password reset link', () => {
    it("sets the new password, uses the link up, revokes the operator's other links, ends all its sessions and audits it", async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      const ben = await p.member(owner.organizationId, 'ben@acme.example');
      await p.signedIn('ben@acme.example');
      const older = p.resets.issued(owner.organizationId, { operatorId: ben.id, issuedById: owner.id });
      const link = p.resets.issued(owner.organizationId, { operatorId: ben.id, issuedById: owner.id });

      const result = await p.service.resetPassword(link.token, 'reset passphrase');

      expect(result).toEqual({ sessionsEnded: 1 });
      expect(p.sessions.live(ben.id)).toEqual([]);
      expect(p.resets.get(link.reset.id)?.usedAt).toBeInstanceOf(Date);
      expect(p.resets.get(older.reset.id)?.revokedAt).toBeInstanceOf(Date);
      expect(await p.signsIn('ben@acme.example', 'reset passphrase')).toBe(true);
      expect(p.audit.of(owner.organizationId).find((e) => e.action === 'operator.password_reset')).toMatchObject({
        operatorId: ben.id,
        operatorEmail: 'ben@acme.example',
        targetId: ben.id,
        details: { resetId: link.reset.id, sessionsEnded: 1 },
      });
      await expect(p.service.resetPassword(link.token, 'again')).rejects.toBeInstanceOf(InvalidInput);
    });

    it('refuses an unknown, used, revoked or expired link on token, and changes no password', async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      const link = (changes: { usedAt?: Date; revokedAt?: Date; expiresAt?: Date }) => {
        const issued = p.resets.issued(owner.organizationId, {
          operatorId: owner.id,
          issuedById: owner.id,
          expiresAt: changes.expiresAt,
        });
        const row = p.resets.get(issued.reset.id);
        if (row) Object.assign(row, changes);
        return issued.token;
      };
      const tokens = [
        'pwr_unknown',
        link({ usedAt: new Date() }),
        link({ revokedAt: new Date() }),
        link({ expiresAt: new Date(Date.now() - HOUR) }),
      ];

      for (const token of tokens)
        await expect(p.service.resetPassword(token, 'reset passphrase')).rejects.toMatchObject({
          fields: [{ field: 'token', message: expect.stringContaining('password-reset link is not valid') }],
        });
      expect(await p.signsIn('ana@acme.example', PASSWORD)).toBe(true);
    });

    it('refuses the link of an operator removed since it was issued, and leaves the link unused', async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      const ben = await p.member(owner.organizationId, 'ben@acme.example');
      const link = p.resets.issued(owner.organizationId, { operatorId: ben.id, issuedById: owner.id });
      const row = p.operators.get(ben.id);
      if (row) row.removedAt = new Date();

      await expect(p.service.resetPassword(link.token, 'reset passphrase')).rejects.toBeInstanceOf(InvalidInput);
      expect(p.resets.get(link.reset.id)?.usedAt).toBeNull();
      expect(p.operators.get(ben.id)?.passwordHash).toBe(ben.passwordHash);
    });

    it('of two uses racing with one link, the second sets no password', async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      const link = p.resets.issued(owner.organizationId, { operatorId: owner.id, issuedById: owner.id });
      p.db.meanwhile('password_resets.claim', (s) => {
        const row = s.console.passwordResets.get(link.reset.id);
        if (row) row.usedAt = new Date();
      });

      await expect(p.service.resetPassword(link.token, 'reset passphrase')).rejects.toBeInstanceOf(InvalidInput);
      expect(await p.signsIn('ana@acme.example', PASSWORD)).toBe(true);
      expect(p.audit.actions(owner.organizationId)).not.toContainEqual(['operator.password_reset', owner.id]);
    });
  });

  describe('sessions and profile', () => {
    it("signing out everywhere ends every session of the operator, the caller's own included, and is audited", async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example');
      const other = await p.member(owner.organizationId, 'ben@acme.example');
      const here = await p.signedIn('ana@acme.example');
      await p.signedIn('ana@acme.example', OTHER_ADDRESS);
      await p.signedIn('ben@acme.example');

      expect(await p.service.signOutEverywhere(here)).toEqual({ sessionsEnded: 2 });

      expect(p.sessions.live(owner.id)).toEqual([]);
      expect(p.sessions.live(other.id)).toHaveLength(1);
      expect(p.audit.of(owner.organizationId).at(-1)).toMatchObject({
        action: 'operator.signed_out_everywhere',
        operatorId: owner.id,
        details: { sessionsEnded: 2 },
      });
    });

    it('shows the signed-in operator with its organization, and answers not found for an operator that is not there', async () => {
      const p = setUp();
      const owner = await p.owner('ana@acme.example', 'Acme');

      await expect(p.service.me(owner.id)).resolves.toEqual({
        id: owner.id,
        email: 'ana@acme.example',
        role: 'owner',
        organization: { id: owner.organizationId, name: 'Acme' },
        createdAt: expect.any(String),
      });
      await expect(p.service.me('no-such-operator')).rejects.toBeInstanceOf(NotFound);
    });
  });
});
