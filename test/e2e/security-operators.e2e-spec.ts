import {
  connectAccount,
  createKey,
  joinOrganization,
  PASSWORD,
  signupAndLogin,
  uniqueEmail,
  type Operator,
} from '../utils/factories.js';
import { rowWhere } from '../utils/db-rows.js';
import { startStack, type Stack } from '../utils/stack.js';

const invalid = (field: string, message: string) => ({
  statusCode: 422,
  message: 'Field Validation Failed',
  errors: [{ field, message }],
});
const PLATFORM_ADMIN_REFUSED = {
  statusCode: 403,
  message:
    'Platform administrators are managed only from the command line (npm run platform-admin): their role, removal and password resets are not available in the console',
};
const INVITER_GONE = invalid('inviteToken', 'invitation is not valid (its sender can no longer invite)');

/**
 * Issue 37 (audit 3), findings 4, 5 and 7: platform administrators, invitations and reset links of operators who changed.
 * Finding 7 (a password change revokes the operator's reset links) is a branch of OperatorsService, held by
 * test/service/operators.service.spec.ts ("password change") and test/medium/password-resets.repository.spec.ts.
 */
describe('Security: operators, invitations and reset links', () => {
  let t: Stack;
  beforeAll(async () => {
    t = await startStack();
  });
  afterAll(async () => {
    await t?.close();
  });

  const issueReset = (by: Operator, id: string) =>
    t.http.post(`/organization/members/${id}/password-reset`).set('cookie', by.cookie);
  const setRole = (by: Operator, id: string, role: string) =>
    t.http.patch(`/organization/members/${id}`).set('cookie', by.cookie).send({ role });
  const remove = (by: Operator, id: string) => t.http.delete(`/organization/members/${id}`).set('cookie', by.cookie);
  const invite = async (by: Operator, role: string, email = uniqueEmail()) => {
    const res = await t.http.post('/invitations').set('cookie', by.cookie).send({ email, role });
    expect(res.status).toBe(201);
    return { email, id: res.body.data.id as string, token: res.body.data.token as string };
  };
  const accept = (invitation: { email: string; token: string }) =>
    t.http.post('/auth/signup').send({ email: invitation.email, password: PASSWORD, inviteToken: invitation.token });
  const setPlatformAdmin = (email: string, platformAdmin: boolean) =>
    t.db
      .on()
      .updateTable('operators')
      .set({ platform_admin: platformAdmin })
      .where('email', '=', email)
      .returning('id')
      .executeTakeFirstOrThrow();

  it('finding 4: an owner can neither reset the password of, change the role of, nor remove a platform administrator of its organization (403); the command line lifts the flag first', async () => {
    const admin = await signupAndLogin(t, 'Platform Org');
    const owner = await joinOrganization(t, admin, 'owner');
    await setPlatformAdmin(admin.email, true);

    expect((await issueReset(owner, admin.operatorId)).body).toEqual(PLATFORM_ADMIN_REFUSED);
    expect((await setRole(owner, admin.operatorId, 'member')).body).toEqual(PLATFORM_ADMIN_REFUSED);
    expect((await remove(owner, admin.operatorId)).body).toEqual(PLATFORM_ADMIN_REFUSED);
    const row = await rowWhere(t.db, 'operators', { id: admin.operatorId });
    expect(row).toMatchObject({ role: 'owner', removedAt: null, platformAdmin: true });
    expect(await t.db.on().selectFrom('password_resets').where('operator_id', '=', admin.operatorId).execute()).toEqual(
      [],
    );
    expect((await t.http.get('/console/queues').set('cookie', owner.cookie)).status).toBe(404);
    expect((await t.http.get('/auth/me').set('cookie', admin.cookie)).status).toBe(200);

    // `npm run platform-admin -- revoke <email>`: an ordinary operator again, which owners manage.
    await setPlatformAdmin(admin.email, false);
    expect((await setRole(owner, admin.operatorId, 'admin')).status).toBe(200);
    expect((await remove(owner, admin.operatorId)).status).toBe(200);
  });

  it('finding 5: removing an owner revokes the invitations she sent; acceptance refuses an invitation whose sender was removed', async () => {
    const first = await signupAndLogin(t, 'Rejoin Org');
    const second = await joinOrganization(t, first, 'owner');
    const comeback = await invite(first, 'owner');
    const unrelated = await invite(second, 'member');

    expect((await remove(second, first.operatorId)).status).toBe(200);
    expect((await rowWhere(t.db, 'invitations', { id: comeback.id })).revokedAt).toBeInstanceOf(Date);
    expect((await rowWhere(t.db, 'invitations', { id: unrelated.id })).revokedAt).toBeNull();
    const listed = await t.http.get('/invitations').set('cookie', second.cookie);
    expect(listed.body.data.map((i: { id: string }) => i.id)).toEqual([unrelated.id]);
    expect((await accept(comeback)).body).toEqual(
      invalid('inviteToken', 'invitation is not valid (unknown or revoked)'),
    );

    // An invitation left pending by an older build (not revoked at removal) is refused by its sender's state.
    await t.db.on().updateTable('invitations').set({ revoked_at: null }).where('id', '=', comeback.id).execute();
    expect((await accept(comeback)).body).toEqual(INVITER_GONE);
    expect(await t.db.on().selectFrom('operators').select('id').where('email', '=', comeback.email).execute()).toEqual(
      [],
    );
    expect((await accept(unrelated)).status).toBe(201);
  });

  it('finding 5: demoting an owner below the inviting role revokes her pending invitations; acceptance refuses one whose sender can no longer invite', async () => {
    const first = await signupAndLogin(t, 'Demotion Org');
    const second = await joinOrganization(t, first, 'owner');
    const pending = await invite(first, 'owner');

    expect((await setRole(second, first.operatorId, 'admin')).status).toBe(200);
    expect((await rowWhere(t.db, 'invitations', { id: pending.id })).revokedAt).toBeInstanceOf(Date);
    await t.db.on().updateTable('invitations').set({ revoked_at: null }).where('id', '=', pending.id).execute();
    expect((await accept(pending)).body).toEqual(INVITER_GONE);

    // Made owner again, her invitations are not revived, but a new one works.
    expect((await setRole(second, first.operatorId, 'owner')).status).toBe(200);
    expect((await accept(await invite(first, 'member'))).status).toBe(201);
  });

  it('finding 9: removing an operator revokes the key pairs it created and lists them; keepKeys=true keeps them working and lists them', async () => {
    const owner = await signupAndLogin(t, 'Removed Keys Org');
    const leaving = await joinOrganization(t, owner, 'admin');
    const staying = await joinOrganization(t, owner, 'admin');
    const account = await connectAccount(t, owner);
    const revoked = await createKey(t, leaving, account.wabaId, 'leaving admin’s key');
    const kept = await createKey(t, staying, account.wabaId, 'kept on purpose');
    const ownersKey = await createKey(t, owner, account.wabaId, 'owner’s key');

    expect((await remove(owner, staying.operatorId).query({ keepKeys: 'maybe' })).body).toEqual(
      invalid('keepKeys', 'keepKeys must be true or false'),
    );
    const gone = await remove(owner, leaving.operatorId);
    expect(gone.body.data).toMatchObject({
      keysRevoked: [{ id: revoked.id, name: 'leaving admin’s key' }],
      keysKept: [],
    });
    expect((await t.http.get('/messages').set(revoked.headers)).status).toBe(401);

    const keeping = await remove(owner, staying.operatorId).query({ keepKeys: 'true' });
    expect(keeping.body.data).toMatchObject({ keysRevoked: [], keysKept: [{ id: kept.id, name: 'kept on purpose' }] });
    expect((await t.http.get('/messages').set(kept.headers)).status).toBe(200);
    expect((await t.http.get('/messages').set(ownersKey.headers)).status).toBe(200);
  });
});
