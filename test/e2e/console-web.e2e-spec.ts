import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openConsole, screenshot, type ConsoleBrowser } from '../browser/chromium.js';
import {
  PASSWORD,
  eventually,
  helloWorld,
  joinOrganization,
  onboard,
  recipient,
  signupAndLogin,
  simControl,
  uniqueEmail,
} from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';
import { rowWhere, updateAccount } from '../utils/db-rows.js';

/**
 * The web console in headless Chromium against the real API, worker and simulator: what an operator does
 * in the browser, checked against what the API then does. Screenshots of each page go to
 * test-results/screenshots/.
 */

/** A platform administrator (the stored flag, set as npm run platform-admin does) of this run. */
const ADMIN_EMAIL = uniqueEmail();

/** Simulator: accepted, then `sent` and `failed` with 131047 (Re-engagement message) by webhook. */
const FAILS_LATER = '15550000002';
const text = (page: Page, value: string | RegExp) => page.getByText(value).first();
const visible = (page: Page, value: string | RegExp, timeout = 60_000) => text(page, value).waitFor({ timeout });
const activeElementId = (page: Page) => page.evaluate('document.activeElement && document.activeElement.id');

describe('web console (headless Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  const opened: ConsoleBrowser[] = [];

  const open = async (opts: { cookie?: string; width?: number } = {}) => {
    const session = await openConsole(browser, stack.url, opts);
    opened.push(session);
    return session;
  };

  beforeAll(async () => {
    if (!existsSync('dist/web/index.html'))
      throw new Error('dist/web is not built: run npm run build:web (./scripts/test.sh does)');
    [stack, browser] = await Promise.all([startStack({ worker: true }), launchChromium()]);
    await signupAndLogin(stack, 'Platform Org', ADMIN_EMAIL);
    await stack.db
      .on()
      .updateTable('operators')
      .set({ platform_admin: true })
      .where('email', '=', ADMIN_EMAIL)
      .returning('id')
      .executeTakeFirstOrThrow();
  });

  afterEach(async () => {
    // Everything the console needs is served by the service itself: nothing may be fetched from elsewhere.
    const foreign = opened.flatMap((o) => o.foreignRequests);
    await Promise.all(opened.splice(0).map((o) => o.context.close()));
    expect(foreign).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('onboards in the browser: sign up, log in, connect, sync numbers and templates, create a key whose secret is shown once', async () => {
    const { page } = await open();
    const email = uniqueEmail();
    const sim = stack.sim.createAccount({ name: 'Browser Parcel Co' });

    // Signed out, any console page leads to the login page.
    await page.goto('/console/keys');
    await page.waitForURL(/\/console\/login\?next=/);
    await page.getByRole('link', { name: 'Create an organization' }).click();

    await page.getByLabel('Organization name').fill('Browser Org');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await visible(page, 'password must be at least 10 characters');
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, '01-signup-error');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();

    // Log in with the keyboard only: the email is filled in, Tab moves to the password, Enter submits.
    await visible(page, 'Organization “Browser Org” created. Log in to continue.');
    expect(await page.getByLabel('Email').inputValue()).toBe(email);
    await page.getByLabel('Email').focus();
    await page.keyboard.press('Tab');
    expect(await activeElementId(page)).toBe(await page.getByLabel('Password').getAttribute('id'));
    await page.keyboard.type(PASSWORD);
    await screenshot(page, '02-login');
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Business accounts', level: 1 }).waitFor();
    await visible(page, email);
    // Empty states say what to do next, here with the simulator's spare account to connect.
    await visible(
      page,
      'No business account is connected yet. Next: enter its WABA ID and a system-user access token below',
    );

    await page.getByLabel('WABA ID').fill(sim.wabaId);
    await page.getByLabel('Access token').fill('sim-token-wrong');
    await page.getByRole('button', { name: 'Connect' }).click();
    await visible(page, /The upstream platform rejected this access token/);
    await page.getByLabel('Access token').fill(sim.accessToken);
    await page.getByRole('button', { name: 'Connect' }).click();

    await page.getByRole('heading', { name: 'Browser Parcel Co', level: 1 }).waitFor();
    const numbers = page.getByTestId('sync-numbers');
    const templates = page.getByTestId('sync-templates');
    expect(await numbers.textContent()).toContain('Last synced: never');
    await numbers.getByRole('button', { name: 'Sync now' }).click();
    const connected = sim.phoneNumbers.filter((p) => p.status === 'CONNECTED').length;
    await numbers
      .getByText(
        `Sync complete: ${sim.phoneNumbers.length} added, 0 updated, 0 removed (${sim.phoneNumbers.length} in total).`,
      )
      .waitFor();
    await numbers.getByText(`${sim.phoneNumbers.length} numbers, ${connected} connected`).waitFor();
    expect(await numbers.textContent()).not.toContain('Last synced: never');

    await templates.getByRole('button', { name: 'Sync now' }).click();
    const approved = sim.templates.filter((t) => t.status === 'APPROVED').length;
    await templates.getByText(`${sim.templates.length} templates, ${approved} approved`).waitFor();
    await templates.getByRole('cell', { name: 'hello_world' }).waitFor();
    await screenshot(page, '03-account-synced');

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('browser key');
    await page.getByRole('button', { name: 'Create key pair' }).click();
    const panel = page.getByTestId('new-key');
    await panel.getByText('It is shown only this once').waitFor();
    const accessKey = await panel.getByLabel('Access key').inputValue();
    const secretKey = await panel.getByLabel('Secret key').inputValue();
    expect(accessKey).toMatch(/^ak_/);
    expect(secretKey).toMatch(/^sk_/);
    await panel.getByRole('button', { name: 'Copy secret key' }).click();
    await panel.getByText(/^(Copied|Selected: press Ctrl\+C to copy)$/).waitFor();
    await screenshot(page, '04-key-created');

    // The pair works against the API.
    const keyHeaders = { 'x-access-key': accessKey, 'x-secret-key': secretKey };
    expect((await stack.http.get('/messages').set(keyHeaders)).status).toBe(200);

    // Once dismissed, the secret is nowhere: not on the page, not after a reload.
    await panel.getByRole('button', { name: 'I have stored the secret key' }).click();
    await page.getByRole('cell', { name: 'browser key', exact: true }).waitFor();
    expect(await page.content()).not.toContain(secretKey);
    await page.reload();
    await page.getByRole('cell', { name: accessKey }).waitFor();
    expect(await page.content()).not.toContain(secretKey);
    await screenshot(page, '05-keys');

    await page.getByRole('button', { name: 'Log out' }).click();
    await visible(page, 'You are logged out.');
    await page.goto('/console');
    await page.waitForURL(/\/console\/login/);
  }, 180_000);

  it('shows a message sent through the API in the messages list, its timeline and failure reason, and its events as they arrive', async () => {
    const t = await onboard(stack, 'Messages Org');
    const { page } = await open({ cookie: t.operator.cookie });
    const base = `/console/accounts/${t.account.wabaId}`;

    // The events table is open before anything happens: new events must appear by themselves (polling).
    await page.goto(`${base}/events`);
    await visible(page, 'No events yet. WhatsApp reports on every message sent');
    const to = recipient();
    const sent = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, to));
    expect(sent.status).toBe(200);
    const failing = await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, FAILS_LATER));
    expect(failing.status).toBe(200);
    await visible(page, 'Message read', 90_000);
    await visible(page, 'Message failed: Re-engagement message (131047)', 90_000);
    await screenshot(page, '06-events');

    await page.getByLabel('Status').selectOption('read');
    await page.waitForURL(/status=read/);
    await eventually(async () => (await page.locator('.events-table tbody tr').count()) === 1);
    expect(await page.locator('.events-table tbody tr').count()).toBe(1);
    await page.getByRole('button', { name: /Show raw/ }).click();
    const raw = page.getByRole('region', { name: 'Webhook events' }).locator('pre');
    expect(await raw.textContent()).toContain(`"id": "${sent.body.data.upstreamMessageId}"`);
    await screenshot(page, '07-events-raw');

    await page.getByRole('link', { name: 'Messages' }).click();
    await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
    await page.getByRole('cell', { name: to }).waitFor();
    await page.getByRole('cell', { name: FAILS_LATER }).waitFor();
    await screenshot(page, '08-messages');

    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=failed/);
    await eventually(async () => !(await page.getByRole('cell', { name: to }).isVisible()));
    expect(await page.getByRole('cell', { name: to }).isVisible()).toBe(false);
    await page.getByRole('cell', { name: FAILS_LATER }).waitFor();

    await page.getByRole('link', { name: `Message ${failing.body.data.id} details` }).click();
    await page.getByRole('heading', { name: 'Failure reason' }).waitFor();
    await visible(page, '131047 Re-engagement message');
    await screenshot(page, '09-message-failed');

    await page.goto(`${base}/messages/${sent.body.data.id}`);
    const timeline = page.locator('ol.timeline');
    await timeline.waitFor();
    await eventually(async () => (await timeline.textContent())?.includes('Read'));
    const steps = await timeline.locator('.timeline-status').allTextContents();
    expect(steps).toEqual(['Accepted by the platform', 'Sent', 'Delivered', 'Read']);
    expect(await page.getByRole('heading', { name: 'Failure reason' }).count()).toBe(0);
    await screenshot(page, '10-message-detail');

    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
    const rates = page.getByRole('list', { name: 'Rates' });
    await rates.getByText('50.0%').first().waitFor();
    expect(await rates.textContent()).toContain('Messages2');
    expect(await page.locator('svg[role="img"] rect').count()).toBeGreaterThan(0);
    await screenshot(page, '11-analytics');

    // Usable on a 375 px wide phone: nothing wider than the screen but the scrollable tables.
    const narrow = await open({ cookie: t.operator.cookie, width: 375 });
    await narrow.page.goto(`${base}/messages`);
    await narrow.page.getByRole('cell', { name: to }).waitFor();
    expect(await narrow.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    await screenshot(narrow.page, '12-messages-375px');
  }, 180_000);

  it('renders each type’s content and links inbound media to its download', async () => {
    const t = await onboard(stack, 'Types Browser Org');
    const to = recipient();
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    const inbound = await fetch(`${stack.sim.url}/_sim/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        wabaId: t.account.wabaId,
        phoneNumberId: t.account.phoneNumberId,
        from: to,
        type: 'image',
        image: { caption: 'Damaged box' },
        media: { base64: png.toString('base64'), mimeType: 'image/png' },
      }),
    });
    expect(inbound.status).toBe(200);
    const interactive = {
      type: 'button',
      body: { text: 'Which slot suits you?' },
      action: {
        buttons: [
          { type: 'reply', reply: { id: 'am', title: 'Morning' } },
          { type: 'reply', reply: { id: 'pm', title: 'Afternoon' } },
        ],
      },
    };
    const sent = await eventually(async () => {
      const res = await stack.http
        .post('/messages')
        .set(t.key.headers)
        .send({ phoneNumberId: t.account.phoneNumberId, to, type: 'interactive', interactive });
      return res.status === 200 ? res : undefined;
    });
    const document = await stack.http
      .post('/messages')
      .set(t.key.headers)
      .send({
        phoneNumberId: t.account.phoneNumberId,
        to,
        type: 'document',
        document: {
          link: 'https://cdn.example.com/invoice.pdf',
          filename: 'invoice-7781.pdf',
          caption: 'Your invoice',
        },
      });
    // The whole answer, so that a refusal shows its reason.
    expect({ status: document.status, body: document.body }).toMatchObject({ status: 200 });

    const { page } = await open({ cookie: t.operator.cookie });
    const base = `/console/accounts/${t.account.wabaId}`;
    await page.goto(`${base}/messages`);
    await visible(page, 'document: invoice-7781.pdf: “Your invoice”');
    await visible(page, 'interactive button: Which slot suits you?');
    await page.goto(`${base}/messages/${sent!.body.data.id}`);
    await visible(page, 'Which slot suits you?');
    await visible(page, 'Morning');
    await visible(page, 'Afternoon');
    await screenshot(page, '12b-message-interactive');

    await page.goto(`${base}/events?kind=inbound_message`);
    const link = page.getByRole('link', { name: /Download the image\/png of event/ });
    await link.waitFor({ timeout: 60_000 });
    const href = await link.getAttribute('href');
    const bytes = await page.evaluate(
      async (url) => Array.from(new Uint8Array(await (await fetch(url!)).arrayBuffer())),
      href,
    );
    expect(Buffer.from(bytes).equals(png)).toBe(true);
    await screenshot(page, '12c-events-media');

    // The same image in the messages page: received, from the customer, previewed through its signed link.
    await page.goto(`${base}/messages?direction=inbound`);
    const row = page.getByRole('row').filter({ hasText: 'image: “Damaged box”' });
    await row.waitFor({ timeout: 60_000 });
    expect(await row.getByRole('cell', { name: 'Received', exact: true }).count()).toBe(1);
    expect(await row.getByRole('cell', { name: to }).count()).toBe(1);
    const preview = row.getByRole('img', { name: 'Damaged box' });
    await eventually(
      async () => (await preview.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)) === 1,
    );
    const previewed = await row.getByRole('link', { name: /Download the image of message/ }).getAttribute('href');
    expect(previewed).toMatch(/\/media\/inbound\//);
    const previewBytes = await page.evaluate(
      async (url) => Array.from(new Uint8Array(await (await fetch(url!)).arrayBuffer())),
      previewed,
    );
    expect(Buffer.from(previewBytes).equals(png)).toBe(true);
    await screenshot(page, '12d-messages-inbound');
  }, 180_000);

  it("shows the account's health: subscribes to webhooks again, finds the token rejected, and replaces it", async () => {
    const t = await onboard(stack, 'Health Org');
    // Upstream, the app was unsubscribed and the system-user token regenerated.
    await fetch(`${stack.sim.baseUrl}/${t.account.wabaId}/subscribed_apps`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${t.account.accessToken}` },
    });
    const newToken = stack.sim.rotateToken(t.account.wabaId);
    // The console's state is still what connect saw: subscribed, token valid.
    await updateAccount(stack.db, t.account.wabaId, { webhooks_subscribed: false });
    const { page } = await open({ cookie: t.operator.cookie });
    await page.goto(`/console/accounts/${t.account.wabaId}`);
    const health = page.getByTestId('account-health');
    await health.getByText('unsubscribed').waitFor();
    await health.getByText('delivers no webhooks').waitFor();

    // Subscribing needs a token the platform accepts: refused with the reason, the state unchanged.
    await health.getByRole('button', { name: 'Subscribe' }).click();
    await health
      .getByText(/session has been invalidated/)
      .first()
      .waitFor();
    await health.getByRole('button', { name: 'Check now' }).click();
    await health.getByText('rejected', { exact: true }).waitFor();
    await health.getByText(/Sends are refused \(424\) until it is replaced/).waitFor();
    await screenshot(page, '14b-account-health-rejected');

    await health.getByLabel('New access token').fill(newToken);
    await health.getByRole('button', { name: 'Replace token' }).click();
    await health.getByText('Access token replaced.').waitFor();
    await health.getByText('valid', { exact: true }).waitFor();
    await health.getByText('subscribed', { exact: true }).waitFor();
    const view = (await stack.http.get(`/business-accounts/${t.account.wabaId}`).set('cookie', t.operator.cookie)).body
      .data;
    expect(view).toMatchObject({ webhooksSubscribed: true, credentialsValid: true, credentialsError: null });
    expect(stack.sim.subscribedApps(t.account.wabaId)).toHaveLength(1);
    await screenshot(page, '14c-account-health-restored');
  });

  it('says what to do next on an account with nothing yet, and rates nothing ("—", not 0.0 %) when nothing was sent', async () => {
    const t = await onboard(stack, 'Quiet Org');
    const { page } = await open({ cookie: t.operator.cookie });
    const base = `/console/accounts/${t.account.wabaId}`;

    await page.goto(`${base}/messages`);
    await visible(page, 'No messages yet. Send one with a key pair of this account');
    await page.goto(`${base}/analytics`);
    const rates = page.getByRole('list', { name: 'Rates' });
    await rates.waitFor();
    expect(await rates.getByText('—', { exact: true }).count()).toBe(3);
    expect(await rates.textContent()).not.toContain('%');
    await visible(page, 'Nothing sent in this period, so there is nothing to rate yet');

    // Once something was sent, the rates are figures again.
    expect((await stack.http.post('/messages').set(t.key.headers).send(helloWorld(t, recipient()))).status).toBe(200);
    await page.reload();
    await rates.getByText('0.0%').first().waitFor();
    expect(await rates.getByText('—', { exact: true }).count()).toBe(0);
  });

  it('revokes a key in the browser, after which the API refuses it', async () => {
    const t = await onboard(stack, 'Revoke Org');
    expect((await stack.http.get('/messages').set(t.key.headers)).status).toBe(200);
    const { page } = await open({ cookie: t.operator.cookie });

    await page.goto('/console/keys');
    await page.getByRole('button', { name: 'Revoke test key' }).click();
    // The question takes focus on its harmless answer.
    expect(await page.evaluate('document.activeElement && document.activeElement.textContent')).toBe('Cancel');
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByText(/^revoked/).waitFor();
    await screenshot(page, '13-key-revoked');

    const refused = await eventually(async () => (await stack.http.get('/messages').set(t.key.headers)).status === 401);
    expect(refused).toBe(true);
    const res = await stack.http.get('/messages').set(t.key.headers);
    expect(res.body.message).toBe('Invalid API key');
  });

  it('invites a colleague from the Team page; the one-time link signs them up into the same organization', async () => {
    const t = await onboard(stack, 'Team Org');
    const owner = await open({ cookie: t.operator.cookie });
    const colleague = uniqueEmail();
    await owner.page.goto('/console/team');
    await owner.page.getByLabel('Email').fill(colleague);
    await owner.page.getByRole('button', { name: 'Create invitation link' }).click();
    const panel = owner.page.getByTestId('new-invitation');
    await panel.getByText('It is shown only this once').waitFor();
    const link = await panel.getByLabel('Invitation link').inputValue();
    expect(link).toMatch(new RegExp(`^${stack.url}/console/signup\\?invite=[A-Za-z0-9_-]{43}$`));
    await screenshot(owner.page, '15-invitation-created');
    await panel.getByRole('button', { name: 'Done' }).click();
    await owner.page.getByRole('cell', { name: colleague, exact: true }).waitFor();

    const invitee = await open();
    await invitee.page.goto(link);
    await invitee.page.getByRole('heading', { name: 'Join your team' }).waitFor();
    expect(await invitee.page.getByLabel('Organization name').count()).toBe(0);
    await invitee.page.getByLabel('Email').fill(colleague);
    await invitee.page.getByLabel('Password').fill(PASSWORD);
    await invitee.page.getByRole('button', { name: 'Sign up' }).click();
    await visible(invitee.page, 'You joined “Team Org”. Log in to continue.');
    await invitee.page.getByLabel('Password').fill(PASSWORD);
    await invitee.page.getByRole('button', { name: 'Log in' }).click();
    await visible(invitee.page, colleague);
    await visible(invitee.page, 'Team Org');

    // The link worked once.
    const again = await stack.http
      .post('/auth/signup')
      .send({ email: colleague, password: PASSWORD, inviteToken: new URL(link).searchParams.get('invite') });
    expect(again.status).toBe(422);
    // A member sees that only owners invite.
    await invitee.page.goto('/console/team');
    await visible(invitee.page, /Only owners of “Team Org” can invite operators/);
  }, 180_000);

  it('lists the operators on the Team page; an owner changes a role and hands out a password-reset link the operator uses once (issue 29, finding 3)', async () => {
    const t = await onboard(stack, 'Operators Org');
    const colleague = await joinOrganization(stack, t.operator, 'member');
    const owner = await open({ cookie: t.operator.cookie });
    await owner.page.goto('/console/team');
    await owner.page.getByRole('cell', { name: colleague.email, exact: true }).waitFor();
    await owner.page.getByLabel(`Role of ${colleague.email}`).selectOption('admin');
    expect(
      await eventually(
        async () => (await rowWhere(stack.db, 'operators', { id: colleague.operatorId })).role === 'admin',
      ),
    ).toBe(true);

    await owner.page.getByRole('button', { name: `Password-reset link for ${colleague.email}` }).click();
    const panel = owner.page.getByTestId('new-reset-link');
    await panel.getByText('It is shown only this once').waitFor();
    const link = await panel.getByLabel('Password-reset link').inputValue();
    expect(link).toMatch(new RegExp(`^${stack.url}/console/reset-password\\?token=[A-Za-z0-9_-]{43}$`));

    const reader = await open();
    await reader.page.goto(link);
    await reader.page.getByRole('heading', { name: 'Set a new password' }).waitFor();
    await reader.page.getByLabel('New password').fill('a password of my own choosing');
    await reader.page.getByRole('button', { name: 'Set password' }).click();
    await visible(reader.page, /Your new password is set/);
    expect((await stack.http.get('/auth/me').set('cookie', colleague.cookie)).status).toBe(401);
    expect(
      (await stack.http.post('/auth/login').send({ email: colleague.email, password: 'a password of my own choosing' }))
        .status,
    ).toBe(200);
  }, 180_000);

  it('sets how long message content is kept on the Team page (issue 41): a bad value is named, a good one saved', async () => {
    const t = await onboard(stack, 'Retention Browser Org');
    const owner = await open({ cookie: t.operator.cookie });
    await owner.page.goto('/console/team');
    await visible(owner.page, /Now: kept forever \(the service’s default\)/);
    const field = owner.page.getByLabel('Days to keep message content');
    await field.fill('-3');
    await owner.page.getByRole('button', { name: 'Save retention' }).click();
    await visible(owner.page, 'contentRetentionDays must be at least 0 (0 keeps content forever)');
    await field.fill('30');
    await owner.page.getByRole('button', { name: 'Save retention' }).click();
    await visible(owner.page, /Now: 30 days\./);
    expect((await rowWhere(stack.db, 'organizations', { id: t.operator.organizationId })).contentRetentionDays).toBe(
      30,
    );
  }, 180_000);

  it("shows the account's standing with Meta, each number's quality and limit, and each template's quality, as Meta's webhooks report them", async () => {
    const t = await onboard(stack, 'Standing Browser Org');
    const control = async (path: string, body: Record<string, unknown>) => {
      const res = await fetch(`${stack.sim.url}/_sim/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ wabaId: t.account.wabaId, ...body }),
      });
      expect(res.status).toBe(200);
    };
    await control('phone-number-quality', {
      phoneNumberId: t.account.phoneNumberId,
      event: 'FLAGGED',
      limit: 'TIER_2K',
    });
    await control('account-update', {
      event: 'DISABLED_UPDATE',
      ban_info: { waba_ban_state: 'DISABLE', waba_ban_date: 'November 24, 2026' },
    });
    await control('account-update', {
      event: 'ACCOUNT_RESTRICTION',
      restriction_info: [
        { restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: '2099-01-01T00:00:00+0000' },
      ],
    });
    await control('template-quality', {
      templateName: 'hello_world',
      language: 'en_US',
      previousQualityScore: 'GREEN',
      newQualityScore: 'RED',
    });
    const applied = await eventually(async () => {
      const account = await stack.http.get(`/business-accounts/${t.account.wabaId}`).set('cookie', t.operator.cookie);
      const templates = await stack.http
        .get(`/business-accounts/${t.account.wabaId}/templates`)
        .set('cookie', t.operator.cookie);
      const standing = account.body.data.standing;
      const quality = templates.body.data.items.find(
        (x: { name: string; language: string }) => x.name === 'hello_world' && x.language === 'en_US',
      )?.qualityScore;
      return standing.banned && standing.restrictions.length === 1 && quality === 'RED';
    });
    expect(applied).toBe(true);

    const { page } = await open({ cookie: t.operator.cookie });
    await page.goto(`/console/accounts/${t.account.wabaId}`);
    const standing = page.getByTestId('account-standing');
    await standing.getByText('Meta disabled this business account (since November 24, 2026)').waitFor();
    await standing.getByText(/Restricted by Meta: RESTRICTED_BIZ_INITIATED_MESSAGING/).waitFor();
    await standing.getByRole('cell', { name: 'RESTRICTED_BIZ_INITIATED_MESSAGING' }).waitFor();
    const number = page.getByTestId('sync-numbers').getByRole('row').filter({ hasText: t.account.phoneNumberId });
    await number.getByRole('cell', { name: 'TIER_2K' }).waitFor();
    await number.getByText('FLAGGED').first().waitFor();
    await number.getByText('RED').waitFor();
    const template = page
      .getByTestId('sync-templates')
      .getByRole('row')
      .filter({ hasText: 'hello_world' })
      .filter({ hasText: 'en_US' });
    await template.getByText('RED').waitFor();
    await screenshot(page, '16-account-standing');
  });

  it("shows the Marketing Messages API state, the users' marketing preferences, and blocks and unblocks a user who wrote", async () => {
    const t = await onboard(stack, 'Users Browser Org');
    const stopped = recipient();
    const writer = recipient();
    await simControl(stack, 'marketing-messages', { wabaId: t.account.wabaId, status: 'ONBOARDED' });
    await simControl(stack, 'user-preferences', {
      wabaId: t.account.wabaId,
      phoneNumberId: t.account.phoneNumberId,
      waId: stopped,
      value: 'stop',
    });
    await simControl(stack, 'inbound', {
      wabaId: t.account.wabaId,
      phoneNumberId: t.account.phoneNumberId,
      from: writer,
      text: 'Hello',
    });
    const applied = await eventually(async () => {
      const account = await stack.http.get(`/business-accounts/${t.account.wabaId}`).set('cookie', t.operator.cookie);
      const prefs = await stack.http
        .get(`/business-accounts/${t.account.wabaId}/marketing-preferences`)
        .set('cookie', t.operator.cookie);
      return account.body.data.marketingMessages.onboarded && prefs.body.data.total === 1;
    });
    expect(applied).toBe(true);

    const { page } = await open({ cookie: t.operator.cookie });
    await page.goto(`/console/accounts/${t.account.wabaId}`);
    const mm = page.getByTestId('marketing-messages');
    await mm.getByText(/Onboarded: MARKETING templates are sent through the Marketing Messages API/).waitFor();
    await mm.getByText('ONBOARDED', { exact: true }).waitFor();
    await page
      .getByTestId('marketing-preferences')
      .getByRole('row')
      .filter({ hasText: stopped })
      .getByText('stop', { exact: true })
      .waitFor();

    const blocked = page.getByTestId('blocked-users');
    await blocked.getByText('Nobody is blocked on this number.').waitFor();
    // The account has several numbers (in no set order): block on the one the user wrote to.
    await blocked.getByLabel('Phone number').selectOption(t.account.phoneNumberId);
    await blocked.getByLabel('Users to block').fill(`${writer}, ${stopped}`);
    await blocked.getByRole('button', { name: 'Block' }).click();
    await blocked
      .getByText(`Blocked: ${writer}`)
      .waitFor()
      .catch(async (e: unknown) => {
        throw new Error(`${String(e)}\nthe section shows: ${await blocked.innerText()}`);
      });
    await blocked.getByText(new RegExp(`Not blocked: ${stopped} \\(Only users who have messaged`)).waitFor();
    const row = blocked.getByRole('row').filter({ hasText: writer });
    await row.waitFor();
    await screenshot(page, '17-account-users');
    await row.getByRole('button', { name: 'Unblock' }).click();
    await blocked.getByText('Nobody is blocked on this number.').waitFor();
    const list = await stack.http
      .get(`/business-accounts/${t.account.wabaId}/phone-numbers/${t.account.phoneNumberId}/blocked-users`)
      .set('cookie', t.operator.cookie);
    expect(list.body.data.total).toBe(0);
  }, 180_000);

  it('shows each organization its own queue health, and Bull Board only to platform administrators', async () => {
    const t = await onboard(stack, 'Queues Org');
    // A tenant: its own backlog in the app; the shared board is a 404, signed in or not.
    for (const cookie of [undefined, t.operator.cookie]) {
      const req = stack.http.get('/console/queues').set('accept', 'text/html');
      expect((await (cookie ? req.set('cookie', cookie) : req)).status).toBe(404);
    }
    const { page } = await open({ cookie: t.operator.cookie });
    await page.goto('/console');
    await page.getByRole('link', { name: 'Queue health' }).click();
    await page.waitForURL(/\/console\/queue-health$/);
    await page.getByRole('cell', { name: t.account.wabaId }).waitFor();
    await screenshot(page, '14-queue-health');

    // A platform administrator: logs in, then opens the board.
    const admin = await open();
    await admin.page.goto(`/console/login?next=${encodeURIComponent('/console/queues')}`);
    await admin.page.getByLabel('Email').fill(ADMIN_EMAIL);
    await admin.page.getByLabel('Password').fill(PASSWORD);
    await admin.page.getByRole('button', { name: 'Log in' }).click();
    await admin.page.waitForURL(/\/console\/queues/);
    await visible(admin.page, 'webhook-deliveries', 90_000);
    await screenshot(admin.page, '15-queues');
  });

  it('renders Swagger UI under the security headers (CSP allows what it needs)', async () => {
    const { page } = await open();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const res = await page.goto('/swagger/docs');
    expect(res?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.getByText('Business Messaging API').first().waitFor({ timeout: 60_000 });
    await page.locator('.opblock').first().waitFor();
    await screenshot(page, '16-swagger');
    expect(violations).toEqual([]);
  });

  it('serves the app under /console without shadowing the API', async () => {
    const page = await stack.http.get('/console/accounts/123/messages');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.text).toContain('<div id="root">');

    const asset = page.text.match(/src="(\/console\/assets\/[^"]+\.js)"/)?.[1];
    expect(asset).toBeDefined();
    const script = await stack.http.get(asset!);
    expect(script.status).toBe(200);
    expect(script.headers['cache-control']).toContain('immutable');

    expect((await stack.http.get('/console/assets/missing.js')).status).toBe(404);
    const me = await stack.http.get('/auth/me');
    expect(me.status).toBe(401);
    expect(me.body.message).toBe('Authentication required');
    const unknown = await stack.http.get('/no-such-route');
    expect(unknown.status).toBe(404);
    expect(unknown.body.statusCode).toBe(404);
  });
});
