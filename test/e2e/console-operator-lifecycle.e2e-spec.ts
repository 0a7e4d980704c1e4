import { PASSWORD, signupAndLogin, type Operator } from '../utils/factories.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';

/** Issue 29, finding 3 (part): an operator changes its password, and signs out everywhere. */
describe('Console: an operator’s own sessions and password', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const loginAgain = async (email: string, password = PASSWORD) => {
    const res = await t.http.post('/auth/login').send({ email, password });
    return {
      status: res.status,
      cookie: ([] as string[])
        .concat(res.headers['set-cookie'] ?? [])
        .map((c) => c.split(';')[0])
        .join('; '),
    };
  };
  const me = (cookie: string) => t.http.get('/auth/me').set('cookie', cookie);

  it('POST /auth/password: checks the current password (422 naming it), then ends every other session of the operator, this one stays', async () => {
    const op: Operator = await signupAndLogin(t, 'Password Org');
    const laptop = await loginAgain(op.email);
    const phone = await loginAgain(op.email);
    expect((await me(laptop.cookie)).status).toBe(200);

    const wrong = await t.http
      .post('/auth/password')
      .set('cookie', op.cookie)
      .send({ currentPassword: 'not the password', newPassword: 'a brand new passphrase' });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toEqual({
      statusCode: 422,
      message: 'Field Validation Failed',
      errors: [{ field: 'currentPassword', message: 'currentPassword is not the current password' }],
    });
    const short = await t.http
      .post('/auth/password')
      .set('cookie', op.cookie)
      .send({ currentPassword: PASSWORD, newPassword: 'short' });
    expect(short.body.errors).toEqual([
      { field: 'newPassword', message: 'newPassword must be at least 10 characters' },
    ]);

    const changed = await t.http
      .post('/auth/password')
      .set('cookie', op.cookie)
      .send({ currentPassword: PASSWORD, newPassword: 'a brand new passphrase' });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toEqual({ sessionsEnded: 2 });
    expect((await me(op.cookie)).status).toBe(200);
    expect((await me(laptop.cookie)).status).toBe(401);
    expect((await me(phone.cookie)).status).toBe(401);
    expect((await loginAgain(op.email)).status).toBe(401);
    expect((await loginAgain(op.email, 'a brand new passphrase')).status).toBe(200);
  });

  it('POST /auth/logout-everywhere: every session of the operator ends, this one included; other operators keep theirs', async () => {
    const op = await signupAndLogin(t, 'Everywhere Org');
    const other = await signupAndLogin(t, 'Bystander Org');
    const laptop = await loginAgain(op.email);
    const res = await t.http.post('/auth/logout-everywhere').set('cookie', op.cookie);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ loggedOut: true, sessionsEnded: 2 });
    expect(([] as string[]).concat(res.headers['set-cookie'] ?? []).join(';')).toMatch(
      /Max-Age=0|Expires=Thu, 01 Jan 1970/,
    );
    expect((await me(op.cookie)).status).toBe(401);
    expect((await me(laptop.cookie)).status).toBe(401);
    expect((await me(other.cookie)).status).toBe(200);
  });
});
